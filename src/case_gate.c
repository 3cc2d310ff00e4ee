/* SPDX-License-Identifier: MIT */
/*
 * case_gate.c - what stands before the target's lines reach a case
 * (ledgerfs(8) PROTOCOL, LIMITS): a closed case refuses everything,
 * rowless; an unregistered target is refused; every refusal becomes a
 * bounded `refused` row and the text of `error`; and the ledger cap,
 * which keeps room for the rows the case still owes.
 */
#include "case_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "request.h"

static const char *const input_names[] = {
	[CASE_IN_REQUEST] = "request",
	[CASE_IN_RESULT] = "result",
	[CASE_IN_REGISTER] = "register",
};

unsigned long long case_min_ledger(size_t max_line)
{
	return CLOSE_ROOM + LIMIT_ROW_MAX(max_line) + 64 * 1024;
}

unsigned long long case_row_bytes(const json_t *row)
{
	return canon_size(row) + ROW_OVERHEAD;
}

bool case_fits(const struct lf_case *c, unsigned long long bytes,
	       unsigned long long released)
{
	unsigned long long owed =
		CLOSE_ROOM + (unsigned long long)c->n_pending * MISSING_ROW_MAX;

	if (!c->over_limit)
		owed += LIMIT_ROW_MAX(c->lim.max_line);
	return (unsigned long long)ledger_size(c->ledger) + owed + bytes <=
	       c->lim.max_ledger + released;
}

bool case_fits_result(const struct lf_case *c, const json_t *row)
{
	return case_fits(c, case_row_bytes(row), MISSING_ROW_MAX);
}

/* target/error: the latest failure of a target write, whatever its cause. */
void case_note_error(struct lf_case *c, enum case_input in, enum lf_err code,
		     const char *reason)
{
	c->error_code = code;
	case_set_str(&c->error, "%s: %s", input_names[in],
		     reason && *reason ? reason : lf_err_name(code));
}

const char *case_why_msg(const struct lf_why *why)
{
	return why ? why->msg : NULL;
}

/*
 * The refusal path, under the case lock.  Rows are bounded per case so a
 * flood cannot grow the host's disk; past the bound only the counter
 * moves (it is reported in status and in case_closed).  The input is
 * recorded by length and digest only: it is untrusted and may be huge.
 */
static enum lf_err case_refuse_locked(struct lf_case *c, enum case_input in,
				      enum lf_err code, const char *reason,
				      const char *input, size_t len,
				      const char *call_id,
				      struct lf_why *why_out)
{
	char digest[CHAIN_HEX_LEN + 1];
	json_t *row;
	struct lf_why ignored;
	bool registration = code == LF_BAD_TOKEN || code == LF_NOT_READY;

	c->refused++;
	case_note_error(c, in, code, reason);
	if (c->refused_rows >= c->lim.max_refused)
		return code;
	if (ledger_broken(c->ledger))
		return code; /* the ledger itself failed: nothing to append */
	chain_sha256_hex(input ? input : "", input ? len : 0, digest);
	row = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s, s:I}", "phase",
			registration ? "registration_refused" : "refused",
			"input", input_names[in], "refusal", lf_err_name(code),
			"reason", reason, "input_bytes", (json_int_t)len,
			"input_sha256", digest, "turn", (json_int_t)c->turn);
	if (!row)
		return code;
	if (call_id)
		json_object_set_new(row, "call_id", json_string(call_id));
	/* Past the ledger cap a refusal is counted, not recorded. */
	if (!case_fits(c, case_row_bytes(row), 0)) {
		json_decref(row);
		return code;
	}
	/*
	 * A failed append fails the case, as any other would, and the
	 * writer learns that (EIO, ledgerfs(8) errno table), not the
	 * refusal the row was to record.
	 */
	if (case_append(c, row, NULL, NULL, &ignored) != LF_OK) {
		json_decref(row);
		case_note_error(c, in, LF_IO, ignored.msg);
		if (why_out)
			*why_out = ignored;
		return LF_IO;
	}
	c->refused_rows++;
	json_decref(row);
	return code;
}

static bool case_is_over(const struct lf_case *c)
{
	return c->state == CASE_CLOSED || c->state == CASE_FAILED;
}

/* Closed means closed: after case_closed no row, only the reason. */
static enum lf_err case_refuse_closed(struct lf_case *c, enum case_input in,
				      struct lf_why *why)
{
	struct lf_why mine;

	lf_fail(&mine, LF_CLOSED, "case %s is %s", c->name,
		case_state_name(c->state));
	if (why)
		*why = mine;
	case_note_error(c, in, LF_CLOSED, mine.msg);
	return LF_CLOSED;
}

enum lf_err case_refuse(struct lf_case *c, enum case_input in, enum lf_err code,
			const char *reason, const char *input, size_t input_len)
{
	case_lock(c);
	if (case_is_over(c))
		code = case_refuse_closed(c, in, NULL);
	else
		code = case_refuse_locked(c, in, code, reason, input, input_len,
					  NULL, NULL);
	pthread_mutex_unlock(&c->lock);
	return code;
}

enum lf_err case_target_gate(struct lf_case *c, enum case_input in,
			     struct lf_why *why)
{
	enum lf_err e = LF_OK;

	case_lock(c);
	if (case_is_over(c))
		e = case_refuse_closed(c, in, why);
	pthread_mutex_unlock(&c->lock);
	return e;
}

/* Refuse with why's text; keeps why for the caller. */
enum lf_err case_refuse_why(struct lf_case *c, enum case_input in,
			    enum lf_err code, struct lf_why *why,
			    const char *line, size_t len, const char *id)
{
	char reason[sizeof(why->msg)];

	/* why may be rewritten (a failed append): the reason is copied. */
	snprintf(reason, sizeof(reason), "%s", why->msg);
	return case_refuse_locked(c, in, code, reason, line, len, id, why);
}

/* A closed case refuses everything the target writes (EPIPE), rowless. */
enum lf_err case_gate_locked(struct lf_case *c, enum case_input in,
			     const char *line, size_t len, struct lf_why *why)
{
	if (case_is_over(c))
		return case_refuse_closed(c, in, why);
	if (in != CASE_IN_REGISTER && c->state != CASE_REGISTERED) {
		lf_fail(why, LF_UNREGISTERED,
			"the target has not registered with case %s", c->name);
		return case_refuse_why(c, in, LF_UNREGISTERED, why, line, len,
				       NULL);
	}
	return LF_OK;
}
