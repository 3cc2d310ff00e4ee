/* SPDX-License-Identifier: MIT */
/*
 * case_load.c - a case after a restart (ledgerfs(8), RESTART): read
 * case.json, check it against the hashes the ledger bound it to, then
 * replay the verified ledger to rebuild state, call index, counters and
 * scenario state.  Decision rows are replayed as facts: the mock rule and
 * scenario state they recorded move the state, no pattern is matched
 * again.  A case that cannot be trusted is loaded failed, never dropped.
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

#include "case_ckpt.h"
#include "case_fail.h"
#include "request.h"

/* What the ledger's rows bound case.json's documents to. */
struct load_ctx {
	struct lf_case *c;
	/* SHA-256 hex of case.json's policy, mocks, tools ("" when absent). */
	char have[3][CHAIN_HEX_LEN + 1];
	char *tampered; /* the first mismatch, once found */
	bool closed;	/* a case_closed row was read: none may follow */
};

static const char *const bound_docs[3] = {"policy", "mocks", "tools"};

static void load_hash_docs(struct load_ctx *lc, const json_t *meta)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		const json_t *v = json_object_get(meta, bound_docs[i]);
		char key[32];
		const char *sha;

		lc->have[i][0] = '\0';
		if (json_is_string(v)) {
			chain_sha256_hex(json_string_value(v),
					 json_string_length(v), lc->have[i]);
			continue;
		}
		/* A document case.json keeps by its hash only. */
		snprintf(key, sizeof(key), "%s_sha256", bound_docs[i]);
		sha = json_string_value(json_object_get(meta, key));
		if (sha && strlen(sha) == CHAIN_HEX_LEN)
			memcpy(lc->have[i], sha, CHAIN_HEX_LEN + 1);
	}
}

/*
 * The members a replayed row is read by, and the only way it is read: a
 * row reaches the loader holding only these (ledger_reader in ledger.h),
 * so a member read any other way would read as absent.
 */
enum replay_member {
	RM_POLICY_SHA256, /* the three bound documents, as bound_docs */
	RM_MOCKS_SHA256,
	RM_TOOLS_SHA256,
	RM_PHASE,
	RM_CALL_ID,
	RM_TOOL,
	RM_MODE,
	RM_OVER_LIMIT,
	RM_MOCK_RULE,
	RM_SCENARIO_STATE,
	RM_SEQUENCE,
	RM_EXECUTOR,
	RM_TURN,
	RM_STATE,
	RM_REASON,
	RM_COUNTS,
	RM_INPUT,
	RM_REFUSAL,
	RM_COUNT
};

static const char *const replay_members[RM_COUNT + 1] = {
	[RM_POLICY_SHA256] = "policy_sha256",
	[RM_MOCKS_SHA256] = "mocks_sha256",
	[RM_TOOLS_SHA256] = "tools_sha256",
	[RM_PHASE] = "phase",
	[RM_CALL_ID] = "call_id",
	[RM_TOOL] = "tool",
	[RM_MODE] = "mode",
	[RM_OVER_LIMIT] = "over_limit",
	[RM_MOCK_RULE] = "mock_rule",
	[RM_SCENARIO_STATE] = "scenario_state",
	[RM_SEQUENCE] = "sequence",
	[RM_EXECUTOR] = "executor",
	[RM_TURN] = "turn",
	[RM_STATE] = "state",
	[RM_REASON] = "reason",
	[RM_INPUT] = "input",
	[RM_REFUSAL] = "refusal",
	[RM_COUNTS] = "counts",
	[RM_COUNT] = NULL,
};

static json_t *replay_get(const json_t *row, enum replay_member m)
{
	return json_object_get(row, replay_members[m]);
}

static const char *replay_str(const json_t *row, enum replay_member m)
{
	return json_string_value(replay_get(row, m));
}

/*
 * A `registered` row binds the policy and the mocks (a missing
 * mocks_sha256 means none), and the tools when it names them; a
 * `case_opened` row binds whatever hashes it carries.
 */
static void load_check_bound(struct load_ctx *lc, const json_t *row,
			     const char *phase)
{
	bool registered = strcmp(phase, "registered") == 0;
	size_t i;

	for (i = 0; i < 3 && !lc->tampered; i++) {
		const char *key = replay_members[RM_POLICY_SHA256 + i];
		const char *want = replay_str(row, RM_POLICY_SHA256 + i);

		if (!want && !(registered && i < 2))
			continue;
		if (strcmp(want ? want : "", lc->have[i]) == 0)
			continue;
		case_set_str(&lc->tampered,
			     "case.json's %s does not match the %s of the %s "
			     "row (changed outside the daemon)",
			     bound_docs[i], want ? key : "absence", phase);
	}
}

static enum lf_err case_read_meta(struct lf_case *c, struct load_ctx *lc,
				  struct lf_why *why, struct lf_why *doc_why,
				  unsigned long saved[2], char **failed)
{
	char buf[4096], *text = NULL;
	size_t len = 0;
	json_t *meta = NULL;
	json_error_t jerr;
	const char *nonce, *policy, *mocks, *fail_reason = NULL;
	const char *tools = NULL, *tools_digest = NULL;
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
	    json_unpack(meta, "{s:s, s?o, s?o, s?{s?I, s?I}, s?s, s?s, s?s}",
			"nonce", &nonce, "policy", &pv, "mocks", &mv,
			"counters", "refused", &refused, "over_limit", &over,
			"failed", &fail_reason, "tools", &tools, "tools_sha256",
			&tools_digest) < 0 ||
	    strlen(nonce) >= sizeof(c->nonce) ||
	    (pv && !json_is_string(pv) && !json_is_null(pv)) ||
	    (mv && !json_is_string(mv) && !json_is_null(mv))) {
		e = lf_fail(why, LF_VERIFY, "case %s: case.json is malformed",
			    c->name);
		goto out;
	}
	if (tools && case_load_tools(c, tools, tools_digest, why) != LF_OK) {
		e = LF_VERIFY;
		goto out;
	}
	snprintf(c->nonce, sizeof(c->nonce), "%s", nonce);
	load_hash_docs(lc, meta);
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
	const char *id = replay_str(row, RM_CALL_ID);
	const char *tool = replay_str(row, RM_TOOL);
	const char *mname = replay_str(row, RM_MODE);
	enum lf_mode mode;
	struct lf_why why;
	struct call_entry *e;

	if (!id || !tool || !mname || policy_parse_mode(mname, &mode) < 0)
		return;
	if (json_is_true(replay_get(row, RM_OVER_LIMIT))) {
		c->over_limit++;
		case_add_call(c, id, (uint32_t)c->ncalls + 1, mode, off, len);
		return;
	}
	/* A fact, not a question: the rule the call was served by. */
	if (mode == LF_MODE_MOCK &&
	    json_is_integer(replay_get(row, RM_MOCK_RULE)))
		mocks_state_replay(
			CASE_MOCKS(c), c->mstate, tool,
			(int)json_integer_value(replay_get(row, RM_MOCK_RULE)),
			replay_str(row, RM_SCENARIO_STATE), &why);
	e = case_add_call(
		c, id,
		(uint32_t)json_integer_value(replay_get(row, RM_SEQUENCE)),
		mode, off, len);
	/* A pass the host ran: its result is the host's, never the target's. */
	if (e && mode == LF_MODE_PASS &&
	    json_is_string(replay_get(row, RM_EXECUTOR)))
		e->host_exec = 1;
}

static void case_replay_result(struct lf_case *c, const json_t *row,
			       long long off, size_t len, bool missing)
{
	const char *id = replay_str(row, RM_CALL_ID);
	struct call_entry *e = id ? case_find_call(c, id) : NULL;

	if (e && e->completion == CALL_PENDING)
		case_settle_call(c, e, missing, off, len);
}

/*
 * target/error after a restart: the last refusal the ledger recorded,
 * as case_note_error wrote it then.
 */
static void case_replay_error(struct lf_case *c, const json_t *row)
{
	const char *input = replay_str(row, RM_INPUT);
	const char *name = replay_str(row, RM_REFUSAL);
	const char *reason = replay_str(row, RM_REASON);
	int code;

	if (!input || !name)
		return;
	for (code = 0; code < LF_ERR_COUNT; code++)
		if (!strcmp(lf_err_name((enum lf_err)code), name))
			break;
	if (code == LF_ERR_COUNT)
		return;
	c->error_code = (enum lf_err)code;
	case_set_str(&c->error, "%s: %s", input,
		     reason && *reason ? reason : name);
}

static int case_replay_row(void *ctx, const json_t *row, long long off,
			   size_t len)
{
	struct load_ctx *lc = ctx;
	struct lf_case *c = lc->c;
	const char *phase = replay_str(row, RM_PHASE);

	if (!phase)
		return 0;
	if (strcmp(phase, "case_opened") == 0) {
		load_check_bound(lc, row, phase);
	} else if (strcmp(phase, "registered") == 0) {
		load_check_bound(lc, row, phase);
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
		case_replay_error(c, row);
	} else if (strcmp(phase, "turn") == 0) {
		c->turn = (unsigned long)json_integer_value(
				  replay_get(row, RM_TURN)) +
			  1;
	} else if (strcmp(phase, "case_closed") == 0) {
		const char *st = replay_str(row, RM_STATE);

		lc->closed = true;
		const char *reason = replay_str(row, RM_REASON);
		json_t *counts = replay_get(row, RM_COUNTS);

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

/* The case is failed for why (the first reason wins). */
static void case_load_fail(struct lf_case *c, const char *fmt, const char *msg)
{
	if (c->state == CASE_FAILED)
		return;
	c->state = CASE_FAILED;
	case_set_str(&c->close_reason, fmt, msg);
}

enum lf_err case_load(int backing_fd, const unsigned char *host_key,
		      const char *name, const struct case_limits *lim,
		      struct lf_case **out, struct lf_why *why)
{
	struct lf_case *c;
	struct lf_why doc_why = {{0}}, lwhy = {{0}};
	struct load_ctx lc = {0};
	struct ledger_reader reader = {.cb = case_replay_row,
				       .ctx = &lc,
				       .members = replay_members,
				       .ended = &lc.closed};
	unsigned long saved[2] = {0, 0};
	char path[160], *failed = NULL, *marked = NULL;
	struct ledger_head head;
	bool meta_ok = false, was_failed;
	enum lf_err e = LF_OK;
	char *ckpt_bad = NULL;

	if (!request_valid_id(name, strlen(name)))
		return lf_fail(why, LF_BAD_NAME, "bad case folder name");
	c = case_alloc(name, lim);
	if (!c)
		return lf_fail(why, LF_NOMEM, "out of memory");
	lc.c = c;
	c->backing_fd = backing_fd;
	snprintf(path, sizeof(path), "cases/%s", name);
	c->dirfd = openat(backing_fd, path,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0) {
		snprintf(lwhy.msg, sizeof(lwhy.msg), "open %s: %s", path,
			 strerror(errno));
		goto load_failed;
	}
	/* A write cut short by a crash or a full disk (ledgerfs(8), FAILURE). */
	unlinkat(c->dirfd, "case.json.tmp", 0);
	if (case_fail_read(c->dirfd, &marked) < 0) {
		snprintf(lwhy.msg, sizeof(lwhy.msg), "failed marker: %s",
			 strerror(errno));
		goto load_failed;
	}
	if (case_read_meta(c, &lc, &lwhy, &doc_why, saved, &failed) != LF_OK)
		goto load_failed;
	meta_ok = true;
	chain_case_token(host_key, c->name, c->nonce, c->token);
	if (CASE_POLICY(c))
		c->state = CASE_READY;
	if (ledger_open(c->dirfd, "ledger.jsonl", c->name, host_key, false,
			&reader, &c->ledger, &lwhy) != LF_OK)
		goto load_failed;
	/* A case's ledger begins with case_opened: none left is rows cut. */
	ledger_get_head(c->ledger, &head);
	if (head.rows == 0) {
		snprintf(lwhy.msg, sizeof(lwhy.msg),
			 "the ledger has no rows (it begins with case_opened): "
			 "its rows were removed");
		goto load_failed;
	}
	/* The tree, and the signed checkpoints against it. */
	ckpt_bad = case_ckpt_load(c, c->dirfd);
	if (c->ncalls) {
		struct call_entry *last = &c->calls[c->ncalls - 1];
		c->latest_reply = case_reply_of(c, last);
	}
	close(c->dirfd);
	c->dirfd = -1;
	/* One descriptor an open case: its ledger (ledgerfs(8) LIMITS). */
	snprintf(path, sizeof(path), "cases/%s/ledger.jsonl", name);
	ledger_seal_park(c->ledger, backing_fd, path);
	/* Both are lower bounds of the truth: keep the larger. */
	if (saved[0] > c->refused)
		c->refused = saved[0];
	if (saved[1] > c->over_limit)
		c->over_limit = saved[1];
	was_failed = c->state == CASE_FAILED || marked || failed;
	if (c->state != CASE_CLOSED && (marked || failed)) {
		/* A case its ledger failed stays failed (ledgerfs(8), FAILURE). */
		case_load_fail(c, "%s", marked ? marked : failed);
	} else if (lc.tampered && c->state != CASE_CLOSED &&
		   c->state != CASE_FAILED) {
		case_load_fail(c, "at load: %s", lc.tampered);
		c->load_failed = true;
	} else if (c->state == CASE_REGISTERED && !CASE_POLICY(c)) {
		case_load_fail(c, "policy no longer loads: %s",
			       CASE_STR(c->policy_error));
	}
	/* A checkpoint that does not hold fails even a closed case. */
	if (ckpt_bad && c->state != CASE_FAILED) {
		case_load_fail(c, "at load: %s", ckpt_bad);
		c->load_failed = true;
	}
	free(ckpt_bad);
	/* Failed by this load: said on standard error (ledgerfs(8) FAILURE). */
	if (c->state == CASE_FAILED && !was_failed)
		e = lf_fail(why, LF_VERIFY, "%s", CASE_STR(c->close_reason));
	goto done;
load_failed:
	/*
	 * Not dropped: shown failed, with the rows that verify (ledgerfs(8),
	 * FAILURE).  A ledger left half-replayed is discarded first.
	 */
	ledger_close(c->ledger);
	c->ledger =
		ledger_open_failed(c->dirfd, "ledger.jsonl", c->name, host_key);
	if (!c->ledger) {
		case_free(c);
		free(failed);
		free(marked);
		free(lc.tampered);
		return lf_fail(why, LF_NOMEM, "out of memory");
	}
	if (!meta_ok)
		memset(c->token, 0, sizeof(c->token));
	c->load_failed = true;
	c->state = CASE_OPENED;
	/* Failed before, for a reason the disk may since have made worse. */
	if (marked || failed)
		case_load_fail(c, "%s", marked ? marked : failed);
	else
		case_load_fail(c, "at load: %s", lwhy.msg);
	if (c->dirfd >= 0) {
		close(c->dirfd);
		c->dirfd = -1;
	}
	e = lf_fail(why, LF_VERIFY, "%s", lwhy.msg);
done:
	free(failed);
	free(marked);
	free(lc.tampered);
	*out = c;
	return e;
}
