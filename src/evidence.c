/* SPDX-License-Identifier: MIT */
/*
 * evidence.c - rows of a verified ledger folded into host action events
 * (ledgerctl(1) COMMANDS, evidence).  A call's decision row opens its
 * event; a completion or completion_missing row settles a passed call's
 * result.  An event no later row may change (a mock or a block, a passed
 * call once settled) is kept as its compact text, about a fifth of what
 * the same event costs as a jansson tree, so a large ledger's events fit
 * in memory; they are written out one at a time (evidence_folder_write).
 */
#include "evidence.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
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

/* Can a later row still settle ev?  Only a passed call's pending result. */
static bool event_open(const json_t *ev)
{
	const char *mode = json_string_value(json_object_get(ev, "mode"));
	const char *status =
		json_string_value(json_object_get(ev, "completion_status"));

	return mode && !strcmp(mode, "pass") && status &&
	       !strcmp(status, "pending");
}

/*
 * A settled event as its compact text (a JSON string in the folder's
 * array), for the reader to parse back (event_unpack): the same members
 * in the same order, the same values.  NULL: no memory.
 */
static json_t *event_pack(const json_t *ev)
{
	char *text = json_dumps(ev, JSON_COMPACT | JSON_ENCODE_ANY);
	json_t *packed = text ? json_string_nocheck(text) : NULL;

	free(text);
	return packed;
}

/* The event at a place of the folder's array: new reference or NULL. */
static json_t *event_unpack(json_t *slot)
{
	if (!json_is_string(slot))
		return json_incref(slot);
	return json_loadb(json_string_value(slot), json_string_length(slot),
			  JSON_ALLOW_NUL, NULL);
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
	if (ev && !event_open(ev)) {
		json_t *packed = event_pack(ev);

		json_decref(ev);
		ev = packed;
	}
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
	json_t *ev, *packed;
	size_t i, at;

	if (!slot)
		return lf_fail(
			why, LF_VERIFY,
			"row %lld: a result for call '%s' that was never decided",
			(long long)row_number(row), id ? id : "");
	at = (size_t)json_integer_value(slot);
	ev = json_array_get(all, at);
	/* A packed event is settled: only an open one takes a result. */
	if (!json_is_object(ev) || !event_open(ev))
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
	packed = event_pack(ev);
	if (!packed || json_array_set_new(all, at, packed) != 0)
		return lf_fail(why, LF_NOMEM, "out of memory");
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

/*
 * A call belongs to the turn of its decision, even when its result row
 * was written later; turn 0: every turn.
 */
static bool event_in_turn(const json_t *ev, unsigned long turn)
{
	json_t *t = json_object_get(ev, "turn");

	return !turn || (json_is_integer(t) &&
			 json_integer_value(t) == (json_int_t)turn);
}

enum lf_err evidence_folder_end(struct evidence_folder *f, unsigned long turn,
				json_t **out, struct lf_why *why)
{
	json_t *sel, *ev;
	size_t i;

	*out = NULL;
	sel = json_array();
	if (!sel)
		return lf_fail(why, LF_NOMEM, "out of memory");
	for (i = 0; i < json_array_size(f->all); i++) {
		ev = event_unpack(json_array_get(f->all, i));
		if (!ev || (event_in_turn(ev, turn) &&
			    json_array_append(sel, ev) != 0)) {
			json_decref(ev);
			json_decref(sel);
			return lf_fail(why, LF_NOMEM, "out of memory");
		}
		json_decref(ev);
	}
	*out = sel;
	return LF_OK;
}

/* One event, each line after its first indented as an array's member. */
static int event_write(FILE *out, const json_t *ev, size_t flags, size_t pad)
{
	char *text = json_dumps(ev, flags), *p, *nl;
	int rc = 0;

	if (!text)
		return -1;
	for (p = text; (nl = strchr(p, '\n')); p = nl + 1)
		if (fwrite(p, 1, (size_t)(nl - p) + 1, out) !=
			    (size_t)(nl - p) + 1 ||
		    fprintf(out, "%*s", (int)pad, "") < 0)
			rc = -1;
	if (fputs(p, out) == EOF)
		rc = -1;
	free(text);
	return rc;
}

/* A newline, then the indentation of depth levels of pad spaces. */
static int event_newline(FILE *out, size_t depth, size_t pad)
{
	return fprintf(out, "\n%*s", (int)(depth * pad), "") < 0 ? -1 : 0;
}

/*
 * A packed event laid out as json_dumps(ev, JSON_INDENT(pad)) would lay
 * it out, as a member of an array: the compact text json_dumps made of
 * the same event, re-indented, so no event is parsed back.  Outside its
 * strings compact text has no space: after '{' or '[' (unless empty) and
 * after ',' comes a newline, before '}' or ']' one, after ':' a space.
 */
static int event_write_packed(FILE *out, const char *s, size_t n, size_t pad)
{
	size_t i, run = 0, depth = 1;
	bool quoted = false;
	char c;

	for (i = 0; i < n; i++) {
		c = s[i];
		if (quoted) {
			if (c == '\\')
				i++; /* \X and \uXXXX: nothing after X is special */
			else if (c == '"')
				quoted = false;
			continue;
		}
		if (c == '"') {
			quoted = true;
			continue;
		}
		if (!strchr("{[]},:", c))
			continue;
		fwrite(s + run, 1, i - run, out);
		run = i + 1;
		/* {} and [] stay as they are. */
		if ((c == '{' || c == '[') && i + 1 < n &&
		    s[i + 1] == (c == '{' ? '}' : ']')) {
			fwrite(s + i, 1, 2, out);
			run = ++i + 1;
		} else if (c == '{' || c == '[') {
			fputc(c, out);
			event_newline(out, ++depth, pad);
		} else if (c == '}' || c == ']') {
			event_newline(out, --depth, pad);
			fputc(c, out);
		} else if (c == ',') {
			fputc(c, out);
			event_newline(out, depth, pad);
		} else {
			fputs(": ", out);
		}
	}
	fwrite(s + run, 1, n - run, out);
	return ferror(out) ? -1 : 0;
}

enum lf_err evidence_folder_write(struct evidence_folder *f, unsigned long turn,
				  size_t flags, FILE *out, struct lf_why *why)
{
	size_t pad = flags & JSON_MAX_INDENT, i, n = 0;
	/* Between members: a newline follows when indented. */
	const char *sep = pad || (flags & JSON_COMPACT) ? "," : ", ";
	json_t *ev;
	int rc = 0;

	for (i = 0; rc == 0 && i < json_array_size(f->all); i++) {
		json_t *slot = json_array_get(f->all, i);
		/* Every turn, indented alone: the packed text re-indented. */
		bool as_packed = json_is_string(slot) && !turn && pad &&
				 flags == JSON_INDENT(pad);

		ev = as_packed ? NULL : event_unpack(slot);
		if (!as_packed && !ev)
			return lf_fail(why, LF_NOMEM, "out of memory");
		if (!as_packed && !event_in_turn(ev, turn)) {
			json_decref(ev);
			continue;
		}
		/* As json_dumpf lays out an array, a member at a time. */
		if (fputs(n++ ? sep : "[", out) == EOF ||
		    (pad && event_newline(out, 1, pad) < 0) ||
		    (as_packed
			     ? event_write_packed(out, json_string_value(slot),
						  json_string_length(slot), pad)
			     : event_write(out, ev, flags, pad)) < 0)
			rc = -1;
		json_decref(ev);
	}
	if (rc == 0 && n && pad && fputc('\n', out) == EOF)
		rc = -1;
	if (rc == 0 && fputs(n ? "]" : "[]", out) == EOF)
		rc = -1;
	if (rc)
		return lf_fail(why, LF_IO, "cannot write the events: %s",
			       strerror(errno));
	return LF_OK;
}

enum lf_err evidence_folder_print(struct evidence_folder *f, unsigned long turn,
				  FILE *out, struct lf_why *why)
{
	enum lf_err e =
		evidence_folder_write(f, turn, JSON_INDENT(2), out, why);

	if (e == LF_OK && fputc('\n', out) == EOF)
		e = lf_fail(why, LF_IO, "cannot write the events: %s",
			    strerror(errno));
	return e;
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
