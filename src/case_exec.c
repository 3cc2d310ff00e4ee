/* SPDX-License-Identifier: MIT */
/*
 * case_exec.c - passed calls the host runs itself (ledgerfs(8) HOST
 * EXECUTORS, ledgerfs-ledger(5) CALL ROWS): after the decision row, the
 * call thread leaves the case lock, waits for the executor helper as it
 * waits for a flush, and records the result as a completion row that is
 * authoritative; the reply carries that result.
 */
#include "case_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "hostexec.h"

static _Atomic(struct hostexec *) case_hx;

void case_set_hostexec(struct hostexec *hx)
{
	atomic_store(&case_hx, hx);
}

const struct exec_spec *case_exec_spec(struct lf_case *c, const char *tool)
{
	struct policy_decision d;

	policy_decide(CASE_POLICY(c), tool, &d);
	return d.mode == LF_MODE_PASS ? d.exec : NULL;
}

/* The result fields a host-executed completion sets on its reply. */
static const char *const result_fields[] = {
	"returned",	    "is_error",	     "real_executed",
	"execution_status", "result_source", "completion_status",
};

char *case_reply_of(struct lf_case *c, const struct call_entry *e)
{
	json_t *dec, *res;
	char *s;
	size_t i;

	dec = ledger_read_row(c->ledger, e->dec_off, e->dec_len);
	if (!dec)
		return NULL;
	if (e->host_exec && e->completion == CALL_COMPLETE) {
		res = ledger_read_row(c->ledger, e->res_off, e->res_len);
		for (i = 0; res && i < sizeof(result_fields) /
						   sizeof(result_fields[0]);
		     i++) {
			json_t *v = json_object_get(res, result_fields[i]);

			if (v)
				json_object_set(dec, result_fields[i], v);
		}
		json_decref(res);
	}
	s = decision_reply(dec);
	json_decref(dec);
	return s;
}

/* The completion row of a host-executed call.  New reference. */
static json_t *exec_row(struct lf_case *c, const struct call_entry *e,
			const json_t *tool, struct hostexec_result *r)
{
	json_t *row = json_pack(
		"{s:s, s:I, s:s, s:O, s:O, s:b, s:b, s:s, s:s, s:b, s:s, s:s, "
		"s:I, s:I}",
		"phase", "completion", "sequence", (json_int_t)e->seq,
		"call_id", e->id, "tool", tool, "returned", r->returned,
		"is_error", r->is_error, "real_executed", r->ran,
		"execution_status", r->ran ? "executed" : "not_executed",
		"result_source", "host_executed", "result_authoritative", 1,
		"completion_status", "complete", "decision_source",
		"host_mediator", "turn", (json_int_t)c->turn, "duration_ms",
		(json_int_t)r->duration_ms);

	if (!row)
		return NULL;
	json_object_set_new(row, "exit_status",
			    r->exit_status >= 0 ? json_integer(r->exit_status)
						: json_null());
	if (r->signal)
		json_object_set_new(row, "signal", json_integer(r->signal));
	if (r->error[0]) {
		json_object_set_new(row, "exec_error", json_string(r->error));
		json_object_set_new(row, "exec_reason", json_string(r->reason));
	}
	return row;
}

/* An error result the daemon makes itself (the helper is gone, ...). */
static void exec_local_error(struct hostexec_result *r, const char *kind,
			     const char *reason)
{
	hostexec_result_clear(r);
	memset(r, 0, sizeof(*r));
	r->exit_status = -1;
	r->is_error = true;
	snprintf(r->error, sizeof(r->error), "%s", kind);
	snprintf(r->reason, sizeof(r->reason), "%s", reason);
	r->returned = json_pack("{s:s, s:s, s:s}", "status", "error", "error",
				kind, "message", reason);
}

enum lf_err case_exec_call(struct lf_case *c, const char *call_id,
			   const json_t *args, const struct exec_spec *spec,
			   char **reply, struct lf_why *why)
{
	struct hostexec_result r = {0};
	struct lf_why hwhy;
	struct call_entry *e;
	json_t *dec = NULL, *row = NULL;
	long long off;
	size_t len;
	enum lf_err err;

	e = case_find_call(c, call_id);
	if (!e)
		return lf_fail(why, LF_NOT_FOUND, "call '%s' vanished",
			       call_id);
	e->host_exec = 1;
	/* Others' calls, status, close and fail go on meanwhile. */
	pthread_mutex_unlock(&c->lock);
	err = hostexec_run(atomic_load(&case_hx), &c->exec_running, spec, args,
			   &r, &hwhy);
	case_lock(c);
	if (err == LF_CLOSED) {
		/* The daemon stops: the call stays pending, as at a crash. */
		err = lf_fail(why, LF_CLOSED, "%s", hwhy.msg);
		goto out;
	}
	if (err != LF_OK)
		exec_local_error(&r, "helper", hwhy.msg);
	/* The entry may have moved (the calls array grows) or settled. */
	e = case_find_call(c, call_id);
	if (!e || e->completion != CALL_PENDING ||
	    c->state != CASE_REGISTERED) {
		err = lf_fail(why, LF_CLOSED,
			      "call '%s' was settled while the host ran it "
			      "(case %s %s); its result is not recorded",
			      call_id, c->name, case_state_name(c->state));
		goto out;
	}
	dec = ledger_read_row(c->ledger, e->dec_off, e->dec_len);
	if (!dec) {
		err = lf_fail(why, LF_IO, "cannot read back call %s", call_id);
		goto out;
	}
	row = exec_row(c, e, json_object_get(dec, "tool"), &r);
	if (row && !case_fits_result(c, row)) {
		json_decref(row);
		exec_local_error(&r, "ledger_full",
				 "the executor's result does not fit under "
				 "the case's ledger limit");
		row = exec_row(c, e, json_object_get(dec, "tool"), &r);
	}
	if (!row) {
		err = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	err = case_append(c, row, &off, &len, why);
	if (err != LF_OK)
		goto out;
	case_settle_call(c, e, false, off, len);
	free(*reply);
	*reply = case_reply_of(c, e);
	if (!*reply)
		err = lf_fail(why, LF_NOMEM, "out of memory");
out:
	json_decref(dec);
	json_decref(row);
	hostexec_result_clear(&r);
	return err;
}
