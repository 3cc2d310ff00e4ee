/*
 * case_load.c - a case after a restart: read case.json, then replay the
 * verified ledger to rebuild state, call index, counters and scenario
 * state.  Mock resolution is deterministic, so replaying the mocked calls
 * in order from a fresh state lands in the state the case had.
 */
#include "case_int.h"

#include "decision.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request.h"

static enum lf_err case_read_meta(struct lf_case *c, struct lf_why *why,
				  struct lf_why *doc_why,
				  unsigned long saved[2], char **failed)
{
	char buf[4096], *text = NULL;
	size_t len = 0;
	json_t *meta = NULL;
	json_error_t jerr;
	const char *nonce, *policy, *mocks, *fail_reason = NULL;
	json_t *pv = NULL, *mv = NULL;
	json_int_t refused = 0, over = 0;
	enum lf_err e = LF_IO;
	int fd;

	fd = openat(c->dirfd, "case.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return lf_fail(why, LF_IO, "case %s: case.json: %s", c->name,
			       strerror(errno));
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		char *t;

		if (n < 0 || len + (size_t)n > 3 * CASE_DOC_MAX) {
			lf_fail(why, LF_IO, "case %s: case.json unreadable",
				c->name);
			goto out;
		}
		if (n == 0)
			break;
		t = realloc(text, len + (size_t)n + 1);
		if (!t)
			goto out;
		text = t;
		memcpy(text + len, buf, (size_t)n);
		len += (size_t)n;
	}
	meta = text ? json_loadb(text, len, 0, &jerr) : NULL;
	if (!meta ||
	    json_unpack(meta, "{s:s, s?o, s?o, s?{s?I, s?I}, s?s}", "nonce",
			&nonce, "policy", &pv, "mocks", &mv, "counters",
			"refused", &refused, "over_limit", &over, "failed",
			&fail_reason) < 0 ||
	    strlen(nonce) >= sizeof(c->nonce) ||
	    (pv && !json_is_string(pv) && !json_is_null(pv)) ||
	    (mv && !json_is_string(mv) && !json_is_null(mv))) {
		e = lf_fail(why, LF_VERIFY, "case %s: case.json is malformed",
			    c->name);
		goto out;
	}
	snprintf(c->nonce, sizeof(c->nonce), "%s", nonce);
	saved[0] = refused > 0 ? (unsigned long)refused : 0;
	saved[1] = over > 0 ? (unsigned long)over : 0;
	*failed = fail_reason ? strdup(fail_reason) : NULL;
	policy = json_string_value(pv);
	mocks = json_string_value(mv);
	/* Kept, but a case whose policy no longer loads cannot serve. */
	if (case_load_docs(c, policy, mocks, doc_why) != LF_OK)
		case_set_str(&c->policy_error, "%s", doc_why->msg);
	e = LF_OK;
out:
	close(fd);
	free(text);
	json_decref(meta);
	return e;
}

static void case_replay_decision(struct lf_case *c, const json_t *row,
				 long long off, size_t len)
{
	const char *id = json_string_value(json_object_get(row, "call_id"));
	const char *tool = json_string_value(json_object_get(row, "tool"));
	const char *mname = json_string_value(json_object_get(row, "mode"));
	enum lf_mode mode;
	struct lf_why why;

	if (!id || !tool || !mname || policy_parse_mode(mname, &mode) < 0)
		return;
	if (json_is_true(json_object_get(row, "over_limit"))) {
		c->over_limit++;
		case_add_call(c, id, (uint32_t)c->ncalls + 1, mode, off, len);
		return;
	}
	if (mode == LF_MODE_MOCK && CASE_POLICY(c)) {
		struct policy_decision d;
		struct mock_result mr;

		policy_decide(CASE_POLICY(c), tool, &d);
		if (mocks_resolve(CASE_MOCKS(c), c->mstate, c->name, tool,
				  json_object_get(row, "args"), d.rule,
				  policy_cassettes(CASE_POLICY(c)), &mr,
				  &why) == LF_OK)
			mocks_result_clear(&mr);
	}
	case_add_call(
		c, id,
		(uint32_t)json_integer_value(json_object_get(row, "sequence")),
		mode, off, len);
}

static void case_replay_result(struct lf_case *c, const json_t *row,
			       long long off, size_t len, bool missing)
{
	const char *id = json_string_value(json_object_get(row, "call_id"));
	struct call_entry *e = id ? case_find_call(c, id) : NULL;

	if (e && e->completion == CALL_PENDING)
		case_settle_call(c, e, missing, off, len);
}

static int case_replay_row(void *ctx, const json_t *row, long long off,
			   size_t len)
{
	struct lf_case *c = ctx;
	const char *phase = json_string_value(json_object_get(row, "phase"));

	if (!phase)
		return 0;
	if (strcmp(phase, "registered") == 0) {
		c->state = CASE_REGISTERED;
	} else if (strcmp(phase, "decision") == 0) {
		case_replay_decision(c, row, off, len);
	} else if (strcmp(phase, "completion") == 0) {
		case_replay_result(c, row, off, len, false);
	} else if (strcmp(phase, "completion_missing") == 0) {
		case_replay_result(c, row, off, len, true);
	} else if (strcmp(phase, "refused") == 0 ||
		   strcmp(phase, "registration_refused") == 0) {
		c->refused++;
		c->refused_rows++;
	} else if (strcmp(phase, "turn") == 0) {
		c->turn = (unsigned long)json_integer_value(
				  json_object_get(row, "turn")) +
			  1;
	} else if (strcmp(phase, "case_closed") == 0) {
		const char *st =
			json_string_value(json_object_get(row, "state"));
		const char *reason =
			json_string_value(json_object_get(row, "reason"));
		json_t *counts = json_object_get(row, "counts");

		c->state = st && strcmp(st, "failed") == 0 ? CASE_FAILED
							   : CASE_CLOSED;
		case_set_str(&c->close_reason, reason ? "%s" : NULL, reason);
		/* Unrecorded refusals live on only in this counter. */
		c->refused = c->refused_rows +
			     (unsigned long)json_integer_value(json_object_get(
				     counts, "refused_unrecorded"));
	}
	return 0;
}

enum lf_err case_load(int backing_fd, const unsigned char *host_key,
		      const char *name, const struct case_limits *lim,
		      struct lf_case **out, struct lf_why *why)
{
	struct lf_case *c;
	struct lf_why doc_why = {{0}};
	unsigned long saved[2] = {0, 0};
	char path[160], *failed = NULL;
	enum lf_err e;

	if (!request_valid_id(name, strlen(name)))
		return lf_fail(why, LF_BAD_NAME, "bad case folder name");
	c = case_alloc(name, lim);
	if (!c)
		return lf_fail(why, LF_NOMEM, "out of memory");
	c->backing_fd = backing_fd;
	snprintf(path, sizeof(path), "cases/%s", name);
	c->dirfd = openat(backing_fd, path,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0) {
		e = lf_fail(why, LF_IO, "open %s: %s", path, strerror(errno));
		goto fail;
	}
	e = case_read_meta(c, why, &doc_why, saved, &failed);
	if (e != LF_OK)
		goto fail;
	chain_case_token(host_key, c->name, c->nonce, c->token);
	if (CASE_POLICY(c))
		c->state = CASE_READY;
	e = ledger_open(c->dirfd, "ledger.jsonl", c->name, host_key, false,
			case_replay_row, c, &c->ledger, why);
	if (e != LF_OK)
		goto fail;
	if (c->ncalls) {
		struct call_entry *last = &c->calls[c->ncalls - 1];
		json_t *row = ledger_read_row(c->ledger, last->dec_off,
					      last->dec_len);

		if (row) {
			c->latest_reply = decision_reply(row);
			json_decref(row);
		}
	}
	close(c->dirfd);
	c->dirfd = -1;
	/* Both are lower bounds of the truth: keep the larger. */
	if (saved[0] > c->refused)
		c->refused = saved[0];
	if (saved[1] > c->over_limit)
		c->over_limit = saved[1];
	/* A case its ledger failed stays failed (DESIGN 4: its state). */
	if (failed && c->state != CASE_CLOSED) {
		c->state = CASE_FAILED;
		case_set_str(&c->close_reason, "%s", failed);
	}
	free(failed);
	failed = NULL;
	if (c->state == CASE_REGISTERED && !CASE_POLICY(c)) {
		c->state = CASE_FAILED;
		case_set_str(&c->close_reason, "policy no longer loads: %s",
			     CASE_STR(c->policy_error));
	}
	*out = c;
	return LF_OK;
fail:
	free(failed);
	case_free(c);
	return e;
}
