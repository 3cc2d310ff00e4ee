/* SPDX-License-Identifier: MIT */
/*
 * baseline_server.c - the benchmark's yardstick: the minimal server that
 * does the same work per call as ledgerfs (strict parse, policy, mocks,
 * one durable ledger row per call) over a Unix-domain socket instead of a
 * FUSE view, with one thread per connection and one case per connection.
 *
 *   baseline_server SOCKET DIR KEYFILE POLICY MOCKS
 *
 * Protocol: the first line is the registration {"case_id":..,"token":..}
 * (answered {"registered":true}); then call lines, each answered by the
 * reply line ledgerfs would give, and result lines (those carrying a
 * "returned" key), each answered {"call_id":..,"ok":true} once durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "chain.h"
#include "decision.h"
#include "doc.h"
#include "ledger.h"
#include "mocks.h"
#include "policy.h"
#include "request.h"

#define BASE_BUF (1024 * 1024 + 2)

static struct policy *base_policy;
static struct mocks *base_mocks;
static unsigned char base_key[CHAIN_KEY_BYTES];
static int base_dirfd = -1;

/* One connection = one case. */
struct base_conn {
	int fd;
	char name[REQUEST_ID_MAX + 1];
	struct ledger *ledger;
	struct mocks_state *mstate;
	json_t *index; /* call_id -> [seq, mode, offset, len] (new reference) */
	unsigned long ncalls;
	char *latest_reply;
	char *buf;
	size_t len;
};

static int base_send(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t r = send(fd, s, n, MSG_NOSIGNAL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		s += r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * Next line (without its newline) into line and n; it stays valid until the
 * next call.  0, or -1 at EOF or error.
 */
static int base_next_line(struct base_conn *c, size_t *consumed, char **line,
			  size_t *n)
{
	if (*consumed) {
		memmove(c->buf, c->buf + *consumed, c->len - *consumed);
		c->len -= *consumed;
		*consumed = 0;
	}
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		ssize_t r;

		if (nl) {
			*line = c->buf;
			*n = (size_t)(nl - c->buf);
			*consumed = *n + 1;
			return 0;
		}
		if (c->len >= BASE_BUF)
			return -1;
		r = recv(c->fd, c->buf + c->len, BASE_BUF - c->len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
	}
}

/* One call line: decide, append durably, then answer. */
static int base_call(struct base_conn *c, const char *line, size_t n)
{
	struct request_call rc;
	struct lf_why why = {{0}};
	json_t *row = NULL;
	char *reply = NULL;
	long long off;
	size_t rlen;
	enum lf_mode mode;
	int rv = -1;

	if (request_parse_call(line, n, 0, &rc, &why) != LF_OK) {
		fprintf(stderr, "baseline: refused call: %s\n", why.msg);
		return -1;
	}
	if (json_object_get(c->index, rc.call_id)) {
		fprintf(stderr, "baseline: duplicate call id %s\n", rc.call_id);
		goto out;
	}
	row = json_pack("{s:s, s:I, s:s, s:s, s:O, s:s, s:I}", "phase",
			"decision", "sequence", (json_int_t)(c->ncalls + 1),
			"call_id", rc.call_id, "tool", rc.tool, "args", rc.args,
			"decision_source", "host_mediator", "turn",
			(json_int_t)0);
	if (!row || decision_fill(base_policy, base_mocks, c->mstate, c->name,
				  rc.tool, rc.args, row, &mode, &why) != LF_OK)
		goto out;
	reply = decision_reply(row);
	if (!reply || ledger_append(c->ledger, row, &off, &rlen, &why) != LF_OK)
		goto out;
	c->ncalls++;
	json_object_set_new(c->index, rc.call_id,
			    json_pack("[I, i, I, I]", (json_int_t)c->ncalls,
				      mode, (json_int_t)off, (json_int_t)rlen));
	free(c->latest_reply);
	c->latest_reply = strdup(reply);
	rv = base_send(c->fd, reply, strlen(reply));
out:
	if (why.msg[0])
		fprintf(stderr, "baseline: %s\n", why.msg);
	free(reply);
	json_decref(row);
	request_call_clear(&rc);
	return rv;
}

/* One result line: read the decision back, append the completion row. */
static int base_result(struct base_conn *c, const char *line, size_t n)
{
	struct request_result rr;
	struct lf_why why = {{0}};
	json_t *e, *dec = NULL, *row = NULL;
	char ack[REQUEST_CALL_ID_MAX + 32];
	int rv = -1;

	if (request_parse_result(line, n, 0, &rr, &why) != LF_OK) {
		fprintf(stderr, "baseline: refused result: %s\n", why.msg);
		return -1;
	}
	e = json_object_get(c->index, rr.call_id);
	if (!e || json_integer_value(json_array_get(e, 1)) != LF_MODE_PASS)
		goto out;
	dec = ledger_read_row(c->ledger,
			      json_integer_value(json_array_get(e, 2)),
			      (size_t)json_integer_value(json_array_get(e, 3)));
	if (!dec)
		goto out;
	row = json_pack(
		"{s:s, s:I, s:s, s:O, s:O, s:b, s:b, s:s, s:s, s:b, s:s, s:s, s:I}",
		"phase", "completion", "sequence",
		json_integer_value(json_array_get(e, 0)), "call_id", rr.call_id,
		"tool", json_object_get(dec, "tool"), "returned", rr.returned,
		"is_error", rr.is_error, "real_executed", rr.real_executed,
		"execution_status",
		rr.real_executed ? "executed" : "not_executed", "result_source",
		"target_reported", "result_authoritative", 0,
		"completion_status", "complete", "decision_source",
		"host_mediator", "turn", (json_int_t)0);
	if (!row || ledger_append(c->ledger, row, NULL, NULL, &why) != LF_OK)
		goto out;
	snprintf(ack, sizeof(ack), "{\"call_id\":\"%s\",\"ok\":true}\n",
		 rr.call_id);
	rv = base_send(c->fd, ack, strlen(ack));
out:
	if (rv)
		fprintf(stderr, "baseline: result for %s failed %s\n",
			rr.call_id, why.msg);
	json_decref(dec);
	json_decref(row);
	request_result_clear(&rr);
	return rv;
}

/* Registration: the case's ledger with case_opened and registered rows. */
static int base_register(struct base_conn *c, const char *line, size_t n)
{
	struct request_register reg;
	struct lf_why why = {{0}};
	char path[REQUEST_ID_MAX + 16];
	json_t *row;
	int rv = -1;

	if (request_parse_register(line, n, 0, &reg, &why) != LF_OK)
		goto out;
	snprintf(c->name, sizeof(c->name), "%s", reg.case_id);
	snprintf(path, sizeof(path), "%s.jsonl", reg.case_id);
	if (ledger_open(base_dirfd, path, c->name, base_key, true, NULL,
			&c->ledger, &why) != LF_OK)
		goto out;
	row = json_pack("{s:s}", "phase", "case_opened");
	if (ledger_append(c->ledger, row, NULL, NULL, &why) != LF_OK) {
		json_decref(row);
		goto out;
	}
	json_decref(row);
	row = json_pack("{s:s}", "phase", "registered");
	if (ledger_append(c->ledger, row, NULL, NULL, &why) != LF_OK) {
		json_decref(row);
		goto out;
	}
	json_decref(row);
	rv = base_send(c->fd, "{\"registered\":true}\n", 20);
out:
	if (rv)
		fprintf(stderr, "baseline: registration failed: %s\n", why.msg);
	return rv;
}

static void *base_serve(void *arg)
{
	struct base_conn *c = arg;
	size_t consumed = 0, n;
	char *line;

	c->buf = malloc(BASE_BUF);
	c->index = json_object();
	c->mstate = mocks_state_new();
	if (!c->buf || !c->index || !c->mstate)
		goto out;
	if (base_next_line(c, &consumed, &line, &n) ||
	    base_register(c, line, n))
		goto out;
	while (base_next_line(c, &consumed, &line, &n) == 0) {
		/* Ledgerfs tells them apart by the file; here a key does. */
		int rv = memmem(line, n, "\"returned\":", 11)
				 ? base_result(c, line, n)
				 : base_call(c, line, n);

		if (rv)
			break;
	}
out:
	close(c->fd);
	if (c->ledger)
		ledger_close(c->ledger);
	mocks_state_free(c->mstate);
	json_decref(c->index);
	free(c->latest_reply);
	free(c->buf);
	free(c);
	return NULL;
}

static json_t *base_load(const char *path)
{
	struct lf_why why = {{0}};
	json_t *doc = doc_load_file(path, &why);

	if (!doc) {
		fprintf(stderr, "baseline: %s: %s\n", path, why.msg);
		exit(1);
	}
	return doc;
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct lf_why why = {{0}};
	pthread_attr_t attr;
	json_t *doc;
	int ls;

	if (argc != 6) {
		fputs("usage: baseline_server SOCKET DIR KEYFILE POLICY MOCKS\n",
		      stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	chain_init();
	if (chain_load_host_key(argv[3], base_key, &why) != LF_OK) {
		fprintf(stderr, "baseline: key: %s\n", why.msg);
		return 1;
	}
	base_dirfd = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (base_dirfd < 0) {
		perror(argv[2]);
		return 1;
	}
	doc = base_load(argv[4]);
	if (policy_load(doc, &base_policy, &why) != LF_OK) {
		fprintf(stderr, "baseline: policy: %s\n", why.msg);
		return 1;
	}
	json_decref(doc);
	doc = base_load(argv[5]);
	if (mocks_load(doc, &base_mocks, &why) != LF_OK) {
		fprintf(stderr, "baseline: mocks: %s\n", why.msg);
		return 1;
	}
	json_decref(doc);
	if (strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "baseline: socket path too long\n");
		return 1;
	}
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(ls, 1024) != 0) {
		perror("baseline: socket");
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct base_conn *c;
		pthread_t t;
		int fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("baseline: accept");
			return 1;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->fd = fd;
		if (pthread_create(&t, &attr, base_serve, c) != 0) {
			close(fd);
			free(c);
		}
	}
}
