/* SPDX-License-Identifier: MIT */
/*
 * case_exec.c - passed calls the host runs itself (ledgerfs(8) HOST
 * EXECUTORS, ledgerfs-ledger(5) CALL ROWS): after the decision row, the
 * call goes to the executor helper and its result is recorded as a
 * completion row that is authoritative; the reply carries that result.
 * A view that answers writes late takes the call once its decision row
 * is durable and lets no thread wait for the executor (case.h,
 * case_exec_catch); otherwise the call's thread leaves the case lock and
 * waits, as it waits for a flush.
 */
#include "case_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decision.h"
#include "defer.h"
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

/*
 * The executor has answered (err, r, hwhy): record its completion for
 * call_id and make the reply.  Lock held.
 */
static enum lf_err exec_settle(struct lf_case *c, const char *call_id,
			       enum lf_err err, struct hostexec_result *r,
			       const struct lf_why *hwhy, char **reply,
			       struct lf_why *why)
{
	struct call_entry *e;
	json_t *dec = NULL, *row = NULL;
	long long off;
	size_t len;

	if (err == LF_CLOSED)
		/* The daemon stops: the call stays pending, as at a crash. */
		return lf_fail(why, LF_CLOSED, "%s", hwhy->msg);
	if (err != LF_OK)
		exec_local_error(r, "helper", hwhy->msg);
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
	row = exec_row(c, e, json_object_get(dec, "tool"), r);
	if (row && !case_fits_result(c, row)) {
		json_decref(row);
		exec_local_error(r, "ledger_full",
				 "the executor's result does not fit under "
				 "the case's ledger limit");
		row = exec_row(c, e, json_object_get(dec, "tool"), r);
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
	return err;
}

/* A call waiting for its executor, no thread with it (case.h). */
struct case_exec {
	struct lf_case *c;
	char *call_id;
	struct hostexec *hx;
	struct hostexec_job *job; /* until started */
	case_exec_ready_fn ready;
	void *arg;
	enum lf_err err; /* the executor's answer */
	struct lf_why why;
	struct hostexec_result res;
};

/* Where this thread's view takes a call it will not wait for. */
static _Thread_local struct case_exec **exec_slot;

void case_exec_catch(struct case_exec **slot)
{
	exec_slot = slot;
}

/* The call as a case_exec for the view, or NULL: run it here. */
static struct case_exec *exec_pending(struct lf_case *c, const char *call_id,
				      const json_t *args,
				      const struct exec_spec *spec)
{
	struct hostexec *hx = atomic_load(&case_hx);
	struct case_exec *x;
	struct lf_why why;

	/*
	 * With a deferral open the decision row waits in it, and the view
	 * starts the executor once it is told; without one (a write's line
	 * before its last) the row was durable before this returned.
	 */
	if (!exec_slot || *exec_slot || !hx)
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->c = c;
	x->hx = hx;
	x->call_id = strdup(call_id);
	/* The spec is the policy's: the job holds its own text of it. */
	if (!x->call_id || hostexec_job_new(hx, &c->exec_slots, spec, args,
					    &x->job, &why) != LF_OK) {
		free(x->call_id);
		free(x);
		return NULL;
	}
	*exec_slot = x;
	return x;
}

void case_exec_cancel(struct lf_case *c)
{
	hostexec_cancel(atomic_load(&case_hx), &c->exec_slots);
}

void case_exec_drop(struct case_exec *x)
{
	if (!x)
		return;
	hostexec_job_free(x->job);
	hostexec_result_clear(&x->res);
	free(x->call_id);
	free(x);
}

/* The executor answered: on the client's thread, hand x to the view. */
static void exec_landed(void *arg, enum lf_err err, struct hostexec_result *r,
			const struct lf_why *why)
{
	struct case_exec *x = arg;

	x->err = err;
	x->why = *why;
	x->res = *r;
	r->returned = NULL;
	x->ready(x->arg, x);
}

void case_exec_start(struct case_exec *x, case_exec_ready_fn ready, void *arg)
{
	struct hostexec_job *j = x->job;

	x->ready = ready;
	x->arg = arg;
	x->job = NULL;
	hostexec_job_start(x->hx, j, exec_landed, x);
}

enum lf_err case_exec_finish(struct case_exec *x, char **reply,
			     struct lf_why *why)
{
	struct lf_case *c = x->c;
	enum lf_err e;

	*reply = NULL;
	case_lock(c);
	e = exec_settle(c, x->call_id, x->err, &x->res, &x->why, reply, why);
	if (e == LF_OK) {
		/* As case_call leaves it: the latest call's reply. */
		free(c->latest_reply);
		c->latest_reply = strdup(*reply);
	} else {
		free(*reply);
		*reply = NULL;
		case_note_error(c, CASE_IN_REQUEST, e, case_why_msg(why));
	}
	pthread_mutex_unlock(&c->lock);
	case_exec_drop(x);
	return e;
}

enum lf_err case_exec_call(struct lf_case *c, const char *call_id,
			   const json_t *args, const struct exec_spec *spec,
			   char **reply, struct lf_why *why)
{
	struct hostexec_result r = {0};
	struct lf_why hwhy = {{0}};
	struct hostexec *hx = atomic_load(&case_hx);
	struct hostexec_job *job;
	struct call_entry *e;
	enum lf_err err;

	e = case_find_call(c, call_id);
	if (!e)
		return lf_fail(why, LF_NOT_FOUND, "call '%s' vanished",
			       call_id);
	e->host_exec = 1;
	if (exec_pending(c, call_id, args, spec))
		return lf_fail(why, LF_EXEC_PENDING,
			       "call '%s' waits for its host executor",
			       call_id);
	err = hostexec_job_new(hx, &c->exec_slots, spec, args, &job, &hwhy);
	/* Others' calls, status, close and fail go on meanwhile. */
	pthread_mutex_unlock(&c->lock);
	if (err == LF_OK)
		err = hostexec_job_wait(hx, job, &r, &hwhy);
	case_lock(c);
	err = exec_settle(c, call_id, err, &r, &hwhy, reply, why);
	hostexec_result_clear(&r);
	return err;
}
