/* SPDX-License-Identifier: MIT */
/*
 * evidence.c - rows of a verified ledger folded into host action events
 * (ledgerctl(1) COMMANDS, evidence).  A call's decision row opens its
 * event; a completion or completion_missing row settles a passed call's
 * result.
 */
#include "evidence.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"

/* Decision fields copied as they are, when present on the row. */
static const char *const decision_keys[] = {
	"call_id",	  "sequence",
	"tool",		  "args",
	"mode",		  "matched",
	"reason",	  "policy_rule",
	"policy_note",	  "turn",
	"returned",	  "is_error",
	"real_executed",  "execution_status",
	"result_source",  "completion_status",
	"mock_source",	  "mock_rule",
	"mock_step",	  "scenario",
	"scenario_state", "over_limit",
};

/* Result fields a completion or completion_missing row settles. */
static const char *const result_keys[] = {
	"returned",	    "is_error",	     "real_executed",
	"execution_status", "result_source", "completion_status",
};

/* Fields without which a decision row cannot be an event. */
static const char *const decision_required[] = {
	"call_id", "sequence", "tool", "args", "mode", "turn",
};

static json_int_t row_number(const json_t *row)
{
	return json_integer_value(json_object_get(row, "row"));
}

/*
 * result_authoritative follows result_source alone: only a result the
 * host generated (host_mediator) or ran itself (host_executed) is
 * authoritative, whatever a row claims besides.
 */
static void set_authority(json_t *ev)
{
	const char *src =
		json_string_value(json_object_get(ev, "result_source"));

	json_object_set_new(
		ev, "result_authoritative",
		json_boolean(src && (!strcmp(src, "host_mediator") ||
				     !strcmp(src, "host_executed"))));
}

/* A new event from a decision row (borrowed).  New reference or NULL. */
static json_t *event_from_decision(const json_t *row)
{
	json_t *ev = json_object();
	const char *mode = json_string_value(json_object_get(row, "mode"));

	if (!ev)
		return NULL;
	json_copy_keys(ev, row, decision_keys,
		       sizeof(decision_keys) / sizeof(decision_keys[0]));
	json_object_set_new(ev, "evidence_source",
			    json_string("host_mediator"));
	json_object_set_new(ev, "attempt_authoritative", json_true());
	json_object_set_new(ev, "decision_authoritative", json_true());
	set_authority(ev);
	json_object_set_new(ev, "decision_row", json_integer(row_number(row)));
	/* A mock or block carries its result in the decision row itself. */
	if (mode && strcmp(mode, "pass") != 0)
		json_object_set_new(ev, "result_row",
				    json_integer(row_number(row)));
	else
		json_object_set_new(ev, "result_row", json_null());
	return ev;
}

static enum lf_err fold_decision(const json_t *row, json_t *all, json_t *index,
				 struct lf_why *why)
{
	const char *id = json_string_value(json_object_get(row, "call_id"));
	json_t *ev;
	size_t i;

	for (i = 0;
	     i < sizeof(decision_required) / sizeof(decision_required[0]); i++)
		if (!json_object_get(row, decision_required[i]))
			return lf_fail(why, LF_VERIFY,
				       "row %lld: decision without %s",
				       (long long)row_number(row),
				       decision_required[i]);
	if (!id || !json_is_object(json_object_get(row, "args")))
		return lf_fail(why, LF_VERIFY,
			       "row %lld: decision with a malformed call",
			       (long long)row_number(row));
	if (json_object_get(index, id))
		return lf_fail(why, LF_VERIFY,
			       "row %lld: a second decision for call '%s'",
			       (long long)row_number(row), id);
	ev = event_from_decision(row);
	if (!ev ||
	    json_object_set_new(
		    index, id,
		    json_integer((json_int_t)json_array_size(all))) != 0 ||
	    json_array_append_new(all, ev) != 0)
		return lf_fail(why, LF_NOMEM, "out of memory");
	return LF_OK;
}

static enum lf_err fold_result(const json_t *row, json_t *all, json_t *index,
			       struct lf_why *why)
{
	const char *id = json_string_value(json_object_get(row, "call_id"));
	json_t *slot = id ? json_object_get(index, id) : NULL;
	json_t *ev;
	const char *mode, *status;
	size_t i;

	if (!slot)
		return lf_fail(
			why, LF_VERIFY,
			"row %lld: a result for call '%s' that was never decided",
			(long long)row_number(row), id ? id : "");
	ev = json_array_get(all, (size_t)json_integer_value(slot));
	mode = json_string_value(json_object_get(ev, "mode"));
	status = json_string_value(json_object_get(ev, "completion_status"));
	if (!mode || strcmp(mode, "pass") != 0 || !status ||
	    strcmp(status, "pending") != 0)
		return lf_fail(why, LF_VERIFY,
			       "row %lld: a second result for call '%s'",
			       (long long)row_number(row), id);
	for (i = 0; i < sizeof(result_keys) / sizeof(result_keys[0]); i++) {
		json_t *v = json_object_get(row, result_keys[i]);

		if (!v)
			return lf_fail(
				why, LF_VERIFY, "row %lld: result without %s",
				(long long)row_number(row), result_keys[i]);
		json_object_set(ev, result_keys[i], v);
	}
	set_authority(ev);
	json_object_set_new(ev, "result_row", json_integer(row_number(row)));
	return LF_OK;
}

struct evidence_folder {
	json_t *all;   /* the events, in attempt order */
	json_t *index; /* call_id -> its place in all */
	struct lf_why why;
	bool refused; /* why says which row */
};

struct evidence_folder *evidence_folder_new(void)
{
	struct evidence_folder *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->all = json_array();
	f->index = json_object();
	if (!f->all || !f->index) {
		evidence_folder_free(f);
		return NULL;
	}
	return f;
}

void evidence_folder_free(struct evidence_folder *f)
{
	if (!f)
		return;
	json_decref(f->all);
	json_decref(f->index);
	free(f);
}

enum lf_err evidence_folder_row(struct evidence_folder *f, const json_t *row,
				struct lf_why *why)
{
	const char *phase = json_string_value(json_object_get(row, "phase"));

	if (!phase)
		return LF_OK; /* verification already refuses these */
	if (!strcmp(phase, "decision"))
		return fold_decision(row, f->all, f->index, why);
	if (!strcmp(phase, "completion") ||
	    !strcmp(phase, "completion_missing"))
		return fold_result(row, f->all, f->index, why);
	return LF_OK;
}

int evidence_folder_cb(void *ctx, const json_t *row, long long off, size_t len)
{
	struct evidence_folder *f = ctx;
	enum lf_err e;

	(void)off;
	(void)len;
	e = evidence_folder_row(f, row, &f->why);
	f->refused = e != LF_OK;
	return (int)e;
}

const char *evidence_folder_why(const struct evidence_folder *f)
{
	return f && f->refused ? f->why.msg : NULL;
}

enum lf_err evidence_folder_end(struct evidence_folder *f, unsigned long turn,
				json_t **out, struct lf_why *why)
{
	json_t *sel, *ev;
	size_t i;

	*out = NULL;
	/*
	 * A call belongs to the turn of its decision, even when its result
	 * row was written later.
	 */
	if (turn) {
		sel = json_array();
		if (!sel)
			return lf_fail(why, LF_NOMEM, "out of memory");
		json_array_foreach(f->all, i, ev)
		{
			json_t *t = json_object_get(ev, "turn");

			if (json_is_integer(t) &&
			    json_integer_value(t) == (json_int_t)turn)
				json_array_append(sel, ev);
		}
		*out = sel;
	} else {
		*out = json_incref(f->all);
	}
	return LF_OK;
}

enum lf_err evidence_fold(const json_t *rows, unsigned long turn, json_t **out,
			  struct lf_why *why)
{
	struct evidence_folder *f = evidence_folder_new();
	enum lf_err e = LF_OK;
	size_t i;
	json_t *row;

	*out = NULL;
	if (!f)
		return lf_fail(why, LF_NOMEM, "out of memory");
	json_array_foreach(rows, i, row)
	{
		e = evidence_folder_row(f, row, why);
		if (e != LF_OK)
			break;
	}
	if (e == LF_OK)
		e = evidence_folder_end(f, turn, out, why);
	evidence_folder_free(f);
	return e;
}

json_t *evidence_find(const json_t *events, const char *call_id)
{
	size_t i;
	json_t *ev;

	json_array_foreach(events, i, ev)
	{
		const char *id =
			json_string_value(json_object_get(ev, "call_id"));

		if (id && !strcmp(id, call_id))
			return ev;
	}
	return NULL;
}
