/* SPDX-License-Identifier: MIT */
/*
 * case_ctl.c - the host's commands on a case (ledgerfs(8) LIFECYCLE):
 * `turn` marks the passed calls still pending as missing and closes the
 * turn; `close` and `fail REASON` do the same and then make the ledger
 * final.
 */
#include "case_int.h"

#include "decision.h"
#include "defer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One completion_missing row for each pending passed call, appended. */
static enum lf_err case_mark_missing_rows(struct lf_case *c,
					  unsigned long *count,
					  struct lf_why *why)
{
	static const char *const tool_only[] = {"tool", NULL};
	size_t i;
	bool host = false;

	*count = 0;
	for (i = 0; i < c->ncalls && c->n_pending; i++) {
		struct call_entry *e = &c->calls[i];
		json_t *dec, *row;
		long long off;
		size_t len;
		enum lf_err err;

		if (e->mode != LF_MODE_PASS || e->completion != CALL_PENDING)
			continue;
		/* Its tool alone, not its arguments: the row is the case's. */
		dec = ledger_read_members(c->ledger, e->dec_off, e->dec_len,
					  tool_only);
		if (!dec)
			return lf_fail(why, LF_IO, "cannot read back call %s",
				       e->id);
		row = json_pack(
			"{s:s, s:I, s:s, s:O, s:n, s:b, s:n, s:s, s:s, s:s, s:b, s:s, s:I}",
			"phase", "completion_missing", "sequence",
			(json_int_t)e->seq, "call_id", e->id, "tool",
			json_object_get(dec, "tool"), "returned", "is_error", 1,
			"real_executed", "execution_status", "unknown",
			"result_source", "not_reported", "completion_status",
			"missing", "result_authoritative", 0, "decision_source",
			"host_mediator", "turn", (json_int_t)c->turn);
		json_decref(dec);
		if (!row)
			return lf_fail(why, LF_NOMEM, "out of memory");
		err = case_append(c, row, &off, &len, why);
		json_decref(row);
		if (err != LF_OK)
			return err;
		case_settle_call(c, e, true, off, len);
		host |= e->host_exec;
		(*count)++;
	}
	/* Their results would not be recorded: their executors end now. */
	if (host)
		case_exec_cancel(c);
	return LF_OK;
}

/* The rows of case_mark_missing are made durable by the row after them. */
static void case_missing_told(void *arg, int err)
{
	(void)arg;
	(void)err;
}

/*
 * A completion_missing row for each pending passed call, in attempt
 * order, so the ledger shows which results never came.  They join the
 * pending batch without a flush each (defer.h): the turn or case_closed
 * row the caller appends next waits for a flush that covers them all, so
 * tens of thousands of pending calls cost a few flushes, not one each,
 * and the host's command answers as fast (ledgerfs(8) LIFECYCLE).
 */
static enum lf_err case_mark_missing(struct lf_case *c, unsigned long *count,
				     struct lf_why *why)
{
	struct lf_defer *d =
		defer_current() ? NULL : defer_open(case_missing_told, NULL);
	enum lf_err err = case_mark_missing_rows(c, count, why);

	if (d)
		defer_close(d);
	return err;
}

static json_t *case_counts(struct lf_case *c)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "calls", (json_int_t)c->ncalls, "pass",
			 (json_int_t)c->n_mode[LF_MODE_PASS], "mock",
			 (json_int_t)c->n_mode[LF_MODE_MOCK], "block",
			 (json_int_t)c->n_mode[LF_MODE_BLOCK], "completed",
			 (json_int_t)c->n_complete, "missing",
			 (json_int_t)c->n_missing, "refused",
			 (json_int_t)c->refused, "refused_unrecorded",
			 (json_int_t)(c->refused - c->refused_rows),
			 "over_limit", (json_int_t)c->over_limit);
}

static enum lf_err case_turn(struct lf_case *c, struct lf_why *why)
{
	unsigned long missing;
	json_t *row;
	enum lf_err e;

	if (c->state != CASE_REGISTERED)
		return lf_fail(why, LF_BAD_COMMAND,
			       "turn: the target has not registered");
	e = case_mark_missing(c, &missing, why);
	if (e != LF_OK)
		return e;
	row = json_pack("{s:s, s:I, s:I}", "phase", "turn", "turn",
			(json_int_t)c->turn, "missing", (json_int_t)missing);
	if (!row)
		return lf_fail(why, LF_NOMEM, "out of memory");
	e = case_append(c, row, NULL, NULL, why);
	json_decref(row);
	if (e == LF_OK)
		c->turn++;
	return e;
}

static enum lf_err case_finish(struct lf_case *c, bool failed,
			       const char *reason, struct lf_why *why)
{
	unsigned long missing;
	json_t *row;
	enum lf_err e;

	e = case_mark_missing(c, &missing, why);
	if (e != LF_OK)
		return e;
	row = json_pack("{s:s, s:s, s:o, s:I}", "phase", "case_closed", "state",
			failed ? "failed" : "closed", "counts", case_counts(c),
			"turn", (json_int_t)c->turn);
	if (!row)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (failed)
		json_object_set_new(row, "reason", json_string(reason));
	e = case_append(c, row, NULL, NULL, why);
	json_decref(row);
	if (e != LF_OK)
		return e;
	c->state = failed ? CASE_FAILED : CASE_CLOSED;
	case_set_str(&c->close_reason, failed ? "%s" : NULL, reason);
	return LF_OK;
}

enum lf_err case_command(struct lf_case *c, const char *line, size_t len,
			 struct lf_why *why)
{
	char cmd[256];
	enum lf_err e;

	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
		       line[len - 1] == '\r'))
		len--;
	if (len >= sizeof(cmd) || memchr(line, 0, len))
		return lf_fail(why, LF_BAD_COMMAND, "command too long");
	memcpy(cmd, line, len);
	cmd[len] = '\0';
	case_lock(c);
	if (c->state == CASE_CLOSED || c->state == CASE_FAILED) {
		e = lf_fail(why, LF_CLOSED, "case is %s",
			    case_state_name(c->state));
	} else if (strcmp(cmd, "turn") == 0) {
		e = case_turn(c, why);
	} else if (strcmp(cmd, "close") == 0) {
		e = case_finish(c, false, NULL, why);
	} else if (strncmp(cmd, "fail", 4) == 0 &&
		   (cmd[4] == ' ' || cmd[4] == '\0')) {
		const char *reason = cmd[4] ? cmd + 5 : "";

		e = case_finish(c, true, *reason ? reason : "failed by host",
				why);
	} else {
		e = lf_fail(why, LF_BAD_COMMAND,
			    "unknown command '%s' (turn, close, fail REASON)",
			    cmd);
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

char *case_status_json(struct lf_case *c)
{
	struct ledger_head h;
	json_t *st;
	char *s = NULL;

	case_lock(c);
	ledger_get_head(c->ledger, &h);
	st = json_pack("{s:s, s:s, s:I, s:s, s:I, s:o, s:I, s:s?, s:s?, s:s?}",
		       "case_id", c->name, "state", case_state_name(c->state),
		       "rows", (json_int_t)h.rows, "head", h.head, "turn",
		       (json_int_t)c->turn, "counts", case_counts(c), "pending",
		       (json_int_t)c->n_pending, "policy_error",
		       c->policy_error, "mocks_error", c->mocks_error, "reason",
		       c->close_reason);
	pthread_mutex_unlock(&c->lock);
	if (st)
		s = json_dumps(st, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(st);
	return decision_add_newline(s);
}
