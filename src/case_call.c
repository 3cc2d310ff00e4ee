/* SPDX-License-Identifier: MIT */
/*
 * case_call.c - the target's side of a case (ledgerfs(8) THE VIEW and
 * PROTOCOL): register, call, result.  Each accepted line becomes a ledger
 * row that is durable before the target learns anything; each refused line
 * becomes a bounded `refused` row and the text of `error` (case_gate.c).
 */
#include "case_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "jsoneq.h"
#include "request.h"

/*
 * A call's decision row always leaves the over_limit row's room, even
 * once that row was written: a restart cannot tell which limit wrote
 * it, and a call that did not fit must not fit after a restart either.
 */
static bool case_fits_call(const struct lf_case *c, unsigned long long bytes)
{
	return case_fits(
		c, bytes + (c->over_limit ? LIMIT_ROW_MAX(c->lim.max_line) : 0),
		0);
}

static void digest_of(const char *text, char out[CHAIN_HEX_LEN + 1])
{
	chain_sha256_hex(text ? text : "", text ? strlen(text) : 0, out);
}

enum lf_err case_register(struct lf_case *c, const char *line, size_t len,
			  struct lf_why *why)
{
	struct request_register reg;
	enum lf_err e;
	json_t *row;
	char pd[CHAIN_HEX_LEN + 1], md[CHAIN_HEX_LEN + 1];
	bool id_ok, token_ok;

	case_lock(c);
	e = case_gate_locked(c, CASE_IN_REGISTER, line, len, why);
	if (e != LF_OK)
		goto out;
	e = request_parse_register(line, len, c->lim.max_line, &reg, why);
	if (e != LF_OK) {
		e = case_refuse_why(c, CASE_IN_REGISTER, e, why, line, len,
				    NULL);
		goto out;
	}
	/* Both are compared always, so timing does not tell which was wrong. */
	id_ok = chain_equal(reg.case_id, c->name);
	token_ok = chain_equal(reg.token, c->token);
	if (!id_ok || !token_ok) {
		e = lf_fail(why, LF_BAD_TOKEN, "registration refused: %s",
			    !id_ok ? "wrong case id" : "wrong token");
		e = case_refuse_why(c, CASE_IN_REGISTER, e, why, line, len,
				    NULL);
		goto out;
	}
	if (c->state == CASE_REGISTERED)
		goto out; /* an identical repeat: success, no row */
	if (c->state != CASE_READY) {
		e = lf_fail(
			why, LF_NOT_READY,
			"registration refused: case %s has no valid policy yet",
			c->name);
		e = case_refuse_why(c, CASE_IN_REGISTER, e, why, line, len,
				    NULL);
		goto out;
	}
	digest_of(c->pdoc ? c->pdoc->text : NULL, pd);
	digest_of(c->mdoc ? c->mdoc->text : NULL, md);
	row = json_pack("{s:s, s:s, s:s?}", "phase", "registered",
			"policy_sha256", pd, "mocks_sha256",
			c->mdoc ? md : NULL);
	if (row && c->tools) {
		/* The tools the target was shown, as the documents. */
		digest_of(c->tools, md);
		json_object_set_new(row, "tools_sha256", json_string(md));
	}
	if (!row) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	e = case_append(c, row, NULL, NULL, why);
	json_decref(row);
	if (e == LF_OK)
		c->state = CASE_REGISTERED;
out:
	if (e != LF_OK)
		case_note_error(c, CASE_IN_REGISTER, e, case_why_msg(why));
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* The decision row of a call, before the decision fills it.  New ref. */
static json_t *call_row(struct lf_case *c, const struct request_call *rc,
			uint32_t seq)
{
	return json_pack("{s:s, s:I, s:s, s:s, s:O, s:s, s:I}", "phase",
			 "decision", "sequence", (json_int_t)seq, "call_id",
			 rc->call_id, "tool", rc->tool, "args", rc->args,
			 "decision_source", "host_mediator", "turn",
			 (json_int_t)c->turn);
}

/* Past a per-case limit: one block row, then only a counter. */
static char *case_over_limit(struct lf_case *c, const struct request_call *rc,
			     json_t *row, bool *record)
{
	char reason[160];

	c->over_limit++;
	*record = c->over_limit == 1;
	if (c->ledger_full)
		snprintf(reason, sizeof(reason),
			 "blocked: per-case ledger limit of %llu bytes reached",
			 c->lim.max_ledger);
	else
		snprintf(reason, sizeof(reason),
			 "blocked: per-case call limit of %lu calls reached",
			 c->lim.max_calls);
	json_object_set_new(row, "mode", json_string("block"));
	json_object_set_new(row, "matched", json_string("<limit>"));
	json_object_set_new(row, "reason", json_string(reason));
	json_object_set_new(row, "over_limit", json_true());
	decision_host_result(row, policy_block_payload(rc->tool), true);
	if (!*record)
		json_object_del(row, "sequence");
	return decision_reply(row);
}

/*
 * A call whose patterns ran out of their budget (ledgerfs(8) PROTOCOL,
 * ledgerfs-policy(5) PATTERNS): blocked with the reason, recorded as its
 * decision, an error for the target; the case goes on.
 */
static void case_pattern_limit(json_t *row, const char *reason)
{
	json_object_set_new(row, "mode", json_string("block"));
	json_object_set_new(row, "matched", json_string("<pattern_limit>"));
	json_object_set_new(row, "reason", json_string(reason));
	json_object_set_new(row, "pattern_limit", json_true());
	decision_host_result(row,
			     json_pack("{s:s, s:s, s:s}", "status", "blocked",
				       "error", "pattern_limit", "message",
				       reason),
			     true);
}

/*
 * Everything a call's patterns cost, run without the case's lock so the
 * host's status, close and fail answer meanwhile.  Borrowing the policy
 * and mocks is safe: a registered case's documents never change (EBUSY)
 * and live until the case is freed.  LF_PATTERN_LIMIT with why.
 */
static enum lf_err case_match(const struct policy *p, const struct mocks *m,
			      const char *case_id,
			      const struct request_call *rc,
			      struct mocks_fit **fit, struct lf_why *why)
{
	struct policy_decision d;
	struct pattern_budget b;

	*fit = NULL;
	policy_decide(p, rc->tool, &d);
	if (d.mode != LF_MODE_MOCK)
		return LF_OK;
	pattern_budget_init(&b, PATTERN_CALL_MS);
	return mocks_fit(m, case_id, rc->tool, rc->args, &b, fit, why);
}

/* A repeated id is refused before any mock runs: it must not move a
 * scenario.  Under the lock. */
static bool case_duplicate(struct lf_case *c, const struct request_call *rc,
			   const char *line, size_t len, struct lf_why *why)
{
	if (!case_find_call(c, rc->call_id))
		return false;
	lf_fail(why, LF_DUPLICATE, "duplicate call id '%s'", rc->call_id);
	case_refuse_why(c, CASE_IN_REQUEST, LF_DUPLICATE, why, line, len,
			rc->call_id);
	return true;
}

/*
 * Decide one call into row.  Past --max-calls, or once a decision row
 * would not fit under --max-ledger, the call is blocked as over the limit.
 * The ledger limit is checked before the decision (so a call that cannot
 * fit moves no scenario) and after it (a mock's payload counts); once
 * hit it holds for every later call, as the call limit does.
 */
static enum lf_err case_decide(struct lf_case *c, const struct request_call *rc,
			       uint32_t seq, const struct mocks_fit *fit,
			       enum lf_err matched, const char *limit_reason,
			       json_t **row, enum lf_mode *mode, char **reply,
			       bool *record, struct lf_why *why)
{
	enum lf_err e = LF_OK;

	if (!c->ledger_full && c->ncalls < c->lim.max_calls &&
	    !case_fits_call(c, case_row_bytes(*row) + MISSING_ROW_MAX))
		c->ledger_full = true;
	if (c->ncalls >= c->lim.max_calls || c->ledger_full)
		goto over;
	if (matched == LF_PATTERN_LIMIT) {
		case_pattern_limit(*row, limit_reason);
		*mode = LF_MODE_BLOCK;
	} else if (matched != LF_OK) {
		return lf_fail(why, matched, "%s", limit_reason);
	} else {
		e = decision_fill_fit(CASE_POLICY(c), CASE_MOCKS(c), c->mstate,
				      c->name, rc->tool, rc->args, fit, *row,
				      mode, why);
	}
	if (e != LF_OK)
		return e;
	if (case_fits_call(c, case_row_bytes(*row) + (*mode == LF_MODE_PASS
							      ? MISSING_ROW_MAX
							      : 0))) {
		*reply = decision_reply(*row);
		return LF_OK;
	}
	c->ledger_full = true;
	json_decref(*row);
	*row = call_row(c, rc, seq);
	if (!*row)
		return lf_fail(why, LF_NOMEM, "out of memory");
over:
	/* Past the first, counted, not recorded, still answered. */
	*reply = case_over_limit(c, rc, *row, record);
	*mode = LF_MODE_BLOCK;
	return LF_OK;
}

enum lf_err case_call(struct lf_case *c, const char *line, size_t len,
		      char **reply, struct lf_why *why)
{
	struct request_call rc;
	struct mocks_fit *fit = NULL;
	const struct policy *policy;
	const struct mocks *mocks;
	struct lf_why limit_why = {{0}};
	enum lf_err matched = LF_OK;
	json_t *row = NULL;
	long long off;
	size_t rlen;
	enum lf_mode mode;
	const struct exec_spec *exec;
	bool record = true;
	enum lf_err e;
	uint32_t seq;

	*reply = NULL;
	case_lock(c);
	e = case_gate_locked(c, CASE_IN_REQUEST, line, len, why);
	if (e != LF_OK)
		goto unlock;
	e = request_parse_call(line, len, c->lim.max_line, &rc, why);
	if (e != LF_OK) {
		e = case_refuse_why(c, CASE_IN_REQUEST, e, why, line, len,
				    NULL);
		goto unlock;
	}
	if (case_duplicate(c, &rc, line, len, why)) {
		e = LF_DUPLICATE;
		goto out;
	}
	if (c->ncalls < c->lim.max_calls && !c->ledger_full) {
		policy = CASE_POLICY(c);
		mocks = CASE_MOCKS(c);
		pthread_mutex_unlock(&c->lock);
		matched = case_match(policy, mocks, c->name, &rc, &fit,
				     &limit_why);
		case_lock(c);
		/* Meanwhile the case may have closed, or the id been used. */
		e = case_gate_locked(c, CASE_IN_REQUEST, line, len, why);
		if (e != LF_OK)
			goto out;
		if (case_duplicate(c, &rc, line, len, why)) {
			e = LF_DUPLICATE;
			goto out;
		}
	}
	seq = (uint32_t)c->ncalls + 1;
	row = call_row(c, &rc, seq);
	if (!row) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	e = case_decide(c, &rc, seq, fit, matched, limit_why.msg, &row, &mode,
			reply, &record, why);
	/*
	 * ASSERT's HTTP 400, or no heap for matching now: refused,
	 * recorded, the id not used up.
	 */
	if (e == LF_EINVAL_JSON || e == LF_MATCH_HEAP_FULL)
		e = case_refuse_why(c, CASE_IN_REQUEST, e, why, line, len,
				    rc.call_id);
	if (e != LF_OK)
		goto out;
	if (!*reply) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	if (record) {
		e = case_append(c, row, &off, &rlen, why);
		if (e != LF_OK)
			goto out;
		if (!case_add_call(c, rc.call_id, seq, mode, off, rlen)) {
			e = lf_fail(why, LF_NOMEM, "out of memory");
			goto out;
		}
		/*
		 * A pass the host runs: the reply waits for its result, or
		 * is made when the result comes (LF_EXEC_PENDING, case.h).
		 */
		if (mode == LF_MODE_PASS &&
		    (exec = case_exec_spec(c, rc.tool))) {
			e = case_exec_call(c, rc.call_id, rc.args, exec, reply,
					   why);
			if (e != LF_OK)
				goto out;
		}
	}
	/* `reply` is the latest call's, recorded or not. */
	free(c->latest_reply);
	c->latest_reply = strdup(*reply);
out:
	if (e != LF_OK) {
		free(*reply);
		*reply = NULL;
	}
	json_decref(row);
	mocks_fit_free(fit);
	request_call_clear(&rc);
unlock:
	if (e != LF_OK && e != LF_EXEC_PENDING)
		case_note_error(c, CASE_IN_REQUEST, e, case_why_msg(why));
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* An identical repeat of a recorded result is a no-op success. */
static bool result_same(const json_t *row, const struct request_result *rr)
{
	return json_value_equal(json_object_get(row, "returned"),
				rr->returned) &&
	       json_is_true(json_object_get(row, "is_error")) == rr->is_error &&
	       json_is_true(json_object_get(row, "real_executed")) ==
		       rr->real_executed;
}

static enum lf_err case_result_locked(struct lf_case *c,
				      const struct request_result *rr,
				      const char *line, size_t len,
				      struct lf_why *why)
{
	struct call_entry *e = case_find_call(c, rr->call_id);
	json_t *row, *dec;
	long long off;
	size_t rlen;
	enum lf_err err;

	if (!e)
		return lf_fail(why, LF_UNKNOWN_CALL, "no call with id '%s'",
			       rr->call_id);
	if (e->host_exec)
		return lf_fail(why, LF_NOT_PASS,
			       "call '%s' was run by the host: its result "
			       "comes from the host",
			       rr->call_id);
	if (e->mode != LF_MODE_PASS)
		return lf_fail(
			why, LF_NOT_PASS,
			"call '%s' was %s: its result comes from the host",
			rr->call_id,
			e->mode == LF_MODE_MOCK ? "mocked" : "blocked");
	if (e->completion == CALL_MISSING)
		return lf_fail(why, LF_NOT_PASS,
			       "call '%s' was already marked missing",
			       rr->call_id);
	if (e->completion == CALL_COMPLETE) {
		bool same;

		row = ledger_read_row(c->ledger, e->res_off, e->res_len);
		if (!row)
			return lf_fail(why, LF_IO, "cannot read back call %s",
				       e->id);
		same = result_same(row, rr);
		json_decref(row);
		return same ? LF_OK
			    : lf_fail(why, LF_CONFLICT,
				      "call '%s' already has a different result",
				      rr->call_id);
	}
	/* The call's tool alone: its arguments can be most of the row. */
	dec = ledger_read_members(c->ledger, e->dec_off, e->dec_len,
				  (const char *const[]){"tool", NULL});
	if (!dec)
		return lf_fail(why, LF_IO, "cannot read back call %s", e->id);
	row = json_pack(
		"{s:s, s:I, s:s, s:O, s:O, s:b, s:b, s:s, s:s, s:b, s:s, s:s, s:I}",
		"phase", "completion", "sequence", (json_int_t)e->seq,
		"call_id", e->id, "tool", json_object_get(dec, "tool"),
		"returned", rr->returned, "is_error", rr->is_error,
		"real_executed", rr->real_executed, "execution_status",
		rr->real_executed ? "executed" : "not_executed",
		"result_source", "target_reported", "result_authoritative", 0,
		"completion_status", "complete", "decision_source",
		"host_mediator", "turn", (json_int_t)c->turn);
	json_decref(dec);
	if (!row)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (!case_fits(c, case_row_bytes(row), MISSING_ROW_MAX)) {
		json_decref(row);
		return lf_fail(why, LF_LEDGER_FULL,
			       "result of call '%s' does not fit under the "
			       "ledger limit of %llu bytes",
			       rr->call_id, c->lim.max_ledger);
	}
	err = case_append(c, row, &off, &rlen, why);
	json_decref(row);
	if (err != LF_OK)
		return err;
	case_settle_call(c, e, false, off, rlen);
	return LF_OK;
}

enum lf_err case_result(struct lf_case *c, const char *line, size_t len,
			struct lf_why *why)
{
	struct request_result rr;
	enum lf_err e;

	case_lock(c);
	e = case_gate_locked(c, CASE_IN_RESULT, line, len, why);
	if (e != LF_OK)
		goto unlock;
	e = request_parse_result(line, len, c->lim.max_line, &rr, why);
	if (e != LF_OK) {
		e = case_refuse_why(c, CASE_IN_RESULT, e, why, line, len, NULL);
		goto unlock;
	}
	e = case_result_locked(c, &rr, line, len, why);
	if (e != LF_OK && e != LF_IO)
		e = case_refuse_why(c, CASE_IN_RESULT, e, why, line, len,
				    rr.call_id);
	request_result_clear(&rr);
unlock:
	if (e != LF_OK)
		case_note_error(c, CASE_IN_RESULT, e, case_why_msg(why));
	pthread_mutex_unlock(&c->lock);
	return e;
}
