/* SPDX-License-Identifier: MIT */
/*
 * ledgerfs-relay.c - ASSERT's host-mediator HTTP inside the sandbox
 * (ledgerfs-relay(1)): listens on loopback TCP and/or Unix sockets with
 * libmicrohttpd and hands each request to relay_handler.c, which speaks
 * the case's target/ files through lfclient.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lfclient.h"
#include "listen.h"
#include "relay_handler.h"

#define RELAY_LISTEN_MAX 4
#define RELAY_TOKEN_MAX	 4096

/* One listener: its parsed spec, socket, bound port and server. */
struct relay_port {
	struct http_listen spec;
	struct relay_listener via;
	int fd;
	struct MHD_Daemon *mhd;
};

/* What one connection's request has gathered so far. */
struct pending {
	char *buf;
	size_t len;
	bool answered;
};

static struct relay relay;
static struct lfc lfc_dir;

/* ---- the lfclient backend ---- */

static int be_reg(void *ctx, const char *case_id, const char *token)
{
	return lfc_register_as(ctx, case_id, token);
}

static int be_call(void *ctx, const char *id, const char *tool,
		   const char *args, char **reply)
{
	size_t len;

	return lfc_call(ctx, id, tool, args, reply, &len);
}

static int be_result(void *ctx, const char *id, const char *returned,
		     int is_error, int real_executed)
{
	const struct lfc *c = ctx;
	char path[sizeof(c->dir) + 16];
	struct stat st;
	int err = lfc_result(c, id, returned, is_error, real_executed);

	/*
	 * ENOENT is the daemon's "no such call", or no folder at all (the
	 * daemon is gone): the second is the relay's trouble, 502
	 * (ledgerfs-relay(1)).
	 */
	snprintf(path, sizeof(path), "%s/result", c->dir);
	if (err == ENOENT && stat(path, &st) < 0)
		err = ENXIO;
	return err;
}

static void be_reason(void *ctx, int err, char *buf, size_t size)
{
	lfc_reason(ctx, err, buf, size);
}

const struct relay_backend relay_lfclient_backend = {
	&lfc_dir, be_reg, be_call, be_result, be_reason,
};

/* ---- HTTP ---- */

struct hosts {
	const char *v[RELAY_HOSTS_MAX];
	size_t n;
};

static enum MHD_Result collect_host(void *cls, enum MHD_ValueKind kind,
				    const char *key, const char *value)
{
	struct hosts *h = cls;

	(void)kind;
	if (strcasecmp(key, "Host") != 0)
		return MHD_YES;
	if (h->n < RELAY_HOSTS_MAX)
		h->v[h->n] = value ? value : "";
	h->n++; /* counted past the array: a repeat is refused anyway */
	return MHD_YES;
}

static enum MHD_Result send_answer(struct MHD_Connection *conn,
				   struct relay_response *res)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(strlen(res->body), res->body,
					    MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(res->body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Connection", "close");
	ok = MHD_queue_response(conn, res->status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct relay_port *port = cls;
	struct pending *p = *con_cls;
	struct relay_response res;
	struct hosts hosts = {{0}, 0};
	struct relay_request q = {0};

	(void)version;
	if (!p) {
		p = calloc(1, sizeof(*p));
		*con_cls = p;
		return p ? MHD_YES : MHD_NO;
	}
	if (p->answered) {
		*data_size = 0; /* the rest of a refused upload is dropped */
		return MHD_YES;
	}
	if (*data_size) {
		size_t n = *data_size;
		char *nb;

		if (p->len + n > RELAY_BODY_MAX)
			return MHD_NO; /* more than Content-Length allowed */
		nb = realloc(p->buf, p->len + n + 1);
		if (!nb)
			return MHD_NO;
		memcpy(nb + p->len, data, n);
		p->buf = nb;
		p->len += n;
		*data_size = 0;
		return MHD_YES;
	}
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_host, &hosts);
	q.via = port->spec.kind == HTTP_LISTEN_INET ? &port->via : NULL;
	q.method = method;
	q.path = url;
	q.hosts = hosts.v;
	q.nhosts = hosts.n;
	q.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      "Authorization");
	q.content_length = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	q.body = p->buf ? p->buf : "";
	q.body_len = p->len;
	relay_handle(&relay, &q, &res);
	p->answered = true;
	return send_answer(conn, &res);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	struct pending *p = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (p) {
		free(p->buf);
		free(p);
		*con_cls = NULL;
	}
}

/*
 * Before the body is read: answer now what needs none (a wrong token, a
 * size ASSERT refuses), so a refused upload is never buffered.
 */
static enum MHD_Result on_headers(void *cls, struct MHD_Connection *conn,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct relay_port *port = cls;
	struct pending *p = *con_cls;
	struct relay_response res = {0};
	struct hosts hosts = {{0}, 0};
	struct relay_request q = {0};

	if (p) /* headers already checked */
		return on_request(cls, conn, url, method, version, data,
				  data_size, con_cls);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_host, &hosts);
	q.via = port->spec.kind == HTTP_LISTEN_INET ? &port->via : NULL;
	q.method = method;
	q.path = url;
	q.hosts = hosts.v;
	q.nhosts = hosts.n;
	q.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      "Authorization");
	q.content_length = MHD_lookup_connection_value(
		conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	relay_handle(&relay, &q, &res);
	if (!res.status)
		return on_request(cls, conn, url, method, version, data,
				  data_size, con_cls);
	p = calloc(1, sizeof(*p));
	if (!p) {
		free(res.body);
		return MHD_NO;
	}
	p->answered = true;
	*con_cls = p;
	return send_answer(conn, &res);
}

/* ---- listening ---- */

/*
 * Port 0 (ledgerfs-relay(1) OPTIONS): the port the kernel picked is
 * otherwise unknown to a script, so say it; the relay is quiet otherwise.
 */
static void print_listening(const struct relay_port *p)
{
	char host[48];

	if (p->spec.kind != HTTP_LISTEN_INET || p->spec.port != 0)
		return;
	http_addr_url_host(p->spec.family, p->spec.addr, host, sizeof(host));
	printf("listening on %s:%u\n", host, p->via.port);
}

/* A stale socket file (nobody accepts on it) is removed; a live one not. */
static int clear_unix_path(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	if (rc == 0) {
		errno = EADDRINUSE;
		return -1;
	}
	return unlink(path);
}

static int open_port(struct relay_port *p, const char *arg)
{
	struct sockaddr_storage ss;
	struct lf_why why = {{0}};
	socklen_t len;
	int one = 1;

	if (http_listen_parse(arg, &p->spec, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs-relay: --listen %s: %s\n", arg,
			why.msg);
		return 2;
	}
	if (p->spec.kind == HTTP_LISTEN_INET &&
	    !http_listen_is_loopback(&p->spec)) {
		fprintf(stderr,
			"ledgerfs-relay: --listen %s: not a loopback address (the relay serves the sandbox only; use 127.0.0.1, ::1 or unix:PATH)\n",
			arg);
		return 2;
	}
	if (p->spec.kind == HTTP_LISTEN_UNIX &&
	    clear_unix_path(p->spec.path) < 0)
		goto fail;
	len = http_listen_sockaddr(&p->spec, p->spec.port, &ss);
	p->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		goto fail;
	if (p->spec.kind == HTTP_LISTEN_INET)
		setsockopt(p->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(p->fd, (struct sockaddr *)&ss, len) < 0 ||
	    listen(p->fd, 64) < 0)
		goto fail;
	p->via.l = &p->spec;
	p->via.port = p->spec.port;
	if (p->spec.kind == HTTP_LISTEN_INET) {
		len = sizeof(ss);
		if (getsockname(p->fd, (struct sockaddr *)&ss, &len) < 0)
			goto fail;
		p->via.port = ntohs(
			ss.ss_family == AF_INET
				? ((struct sockaddr_in *)&ss)->sin_port
				: ((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	p->mhd = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
		0, NULL, NULL, on_headers, p, MHD_OPTION_LISTEN_SOCKET, p->fd,
		MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL,
		MHD_OPTION_CONNECTION_LIMIT, 256u,
		MHD_OPTION_CONNECTION_TIMEOUT, 120u, MHD_OPTION_END);
	if (!p->mhd) {
		errno = EIO;
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "ledgerfs-relay: cannot listen on %s: %s\n", arg,
		strerror(errno));
	return 1;
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fputs("usage: ledgerfs-relay --listen=ADDR [--listen=ADDR...] [--dir=DIR]\n"
	      "                      [--token-file=FILE]\n"
	      "ADDR: 127.0.0.1:PORT, [::1]:PORT, a bare loopback address, or unix:PATH.\n"
	      "The Bearer token comes from --token-file or LEDGERFS_RELAY_TOKEN;\n"
	      "DIR defaults to $LEDGERFS_DIR, else /mediator. See ledgerfs-relay(1).\n",
	      f);
}

/* The token file's first line, which must not be empty.  New string. */
static char *read_token(const char *path)
{
	char buf[RELAY_TOKEN_MAX + 2];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "ledgerfs-relay: --token-file %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!*buf || n > RELAY_TOKEN_MAX) {
		fprintf(stderr, "ledgerfs-relay: --token-file %s: %s\n", path,
			*buf ? "longer than 4096 bytes" : "empty");
		return NULL;
	}
	return strdup(buf);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"dir", required_argument, NULL, 'd'},
		{"token-file", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct relay_port ports[RELAY_LISTEN_MAX];
	const char *listens[RELAY_LISTEN_MAX], *dir = NULL, *tfile = NULL;
	char *token = NULL, *bearer = NULL;
	size_t nl = 0, i, opened = 0;
	sigset_t sigs;
	int c, sig, rc = 2;

	memset(ports, 0, sizeof(ports));
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (nl == RELAY_LISTEN_MAX) {
				fprintf(stderr,
					"ledgerfs-relay: at most %d --listen\n",
					RELAY_LISTEN_MAX);
				return 2;
			}
			listens[nl++] = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 't':
			tfile = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !nl) {
		usage(stderr);
		return 2;
	}
	token = tfile ? read_token(tfile)
		      : (getenv("LEDGERFS_RELAY_TOKEN") &&
					 *getenv("LEDGERFS_RELAY_TOKEN")
				 ? strdup(getenv("LEDGERFS_RELAY_TOKEN"))
				 : NULL);
	if (!token) {
		if (!tfile)
			fprintf(stderr,
				"ledgerfs-relay: no token: give --token-file or LEDGERFS_RELAY_TOKEN\n");
		return 2;
	}
	if (asprintf(&bearer, "Bearer %s", token) < 0 ||
	    lfc_init(&lfc_dir, dir) != 0 ||
	    relay_init(&relay, &relay_lfclient_backend, bearer,
		       getenv("LEDGERFS_CASE"), getenv("LEDGERFS_TOKEN")) < 0) {
		fprintf(stderr, "ledgerfs-relay: cannot start: %s\n",
			strerror(errno ? errno : ENOMEM));
		goto out;
	}
	/* Signals are taken by sigwait below, in this thread alone. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < nl; i++) {
		rc = open_port(&ports[i], listens[i]);
		if (rc)
			goto stop;
		opened++;
	}
	for (i = 0; i < nl; i++)
		print_listening(&ports[i]);
	fflush(stdout);
	sigwait(&sigs, &sig);
	rc = 0;
stop:
	for (i = 0; i < nl; i++) {
		/* MHD closes the socket it was given. */
		if (ports[i].mhd)
			MHD_stop_daemon(ports[i].mhd);
		else if (ports[i].fd > 0)
			close(ports[i].fd);
		if (i < opened && ports[i].spec.kind == HTTP_LISTEN_UNIX)
			unlink(ports[i].spec.path);
	}
	relay_fini(&relay);
out:
	explicit_bzero(token, strlen(token));
	free(token);
	free(bearer);
	return rc;
}
