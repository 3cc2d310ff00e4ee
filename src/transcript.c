/* SPDX-License-Identifier: MIT */
/*
 * transcript.c - the transcript gate (ledgerctl(1) COMMANDS, transcript).
 * A target's transcript, OpenAI chat or Anthropic Messages form, is read
 * for the tool calls and results it claims; each claim is checked against
 * the host's events by structure alone (transcript_rewrite.c rebuilds one
 * that passes).
 */
#include "transcript_int.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"

const char *transcript_form_name(enum transcript_form form)
{
	return form == TRANSCRIPT_ANTHROPIC ? "anthropic" : "openai";
}

enum transcript_form transcript_form(const struct transcript *t)
{
	return t->form;
}

size_t transcript_events_shown(const struct transcript *t)
{
	return t->n;
}

void transcript_free(struct transcript *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		json_decref(t->items[i].args);
	free(t->items);
	free(t);
}

static enum lf_err add_item(struct transcript *t, enum tr_kind kind, size_t msg,
			    size_t idx, const char *id, const char *name,
			    json_t *args, struct lf_why *why)
{
	struct tr_item *it;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		it = realloc(t->items, cap * sizeof(*it));
		if (!it) {
			json_decref(args);
			return lf_fail(why, LF_NOMEM, "out of memory");
		}
		t->items = it;
		t->cap = cap;
	}
	t->items[t->n++] = (struct tr_item){kind, msg, idx, id, name, args};
	return LF_OK;
}

/*
 * OpenAI arguments are JSON text; a duplicate key would let two readers
 * see two different calls, so it counts as unparseable.  New reference.
 */
static json_t *openai_args(const json_t *fn)
{
	const json_t *a = json_object_get(fn, "arguments");

	if (json_is_object(a))
		return json_incref((json_t *)a);
	if (json_is_string(a))
		return json_loadb(json_string_value(a), json_string_length(a),
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
				  NULL);
	return NULL;
}

static enum lf_err read_openai(struct transcript *t, size_t i, const json_t *m,
			       struct lf_why *why)
{
	const char *role = str_of(m, "role");
	const json_t *calls = present(m, "tool_calls"), *c;
	enum lf_err e = LF_OK;
	size_t j;

	if (calls && !json_is_array(calls))
		return lf_fail(why, LF_EINVAL_JSON,
			       "message %zu: tool_calls is not a list", i);
	json_array_foreach(calls, j, c)
	{
		const json_t *fn = json_object_get(c, "function");

		if (!json_is_object(c))
			return lf_fail(
				why, LF_EINVAL_JSON,
				"message %zu: tool call %zu is not an object",
				i, j);
		e = add_item(t, TR_CLAIM, i, j, id_of(c, "id"),
			     str_of(fn, "name"), openai_args(fn), why);
		if (e != LF_OK)
			return e;
	}
	/* The legacy single call has no id, so it can never be matched. */
	if (present(m, "function_call"))
		e = add_item(t, TR_CLAIM, i, calls ? json_array_size(calls) : 0,
			     NULL, NULL, NULL, why);
	if (e == LF_OK && role && !strcmp(role, "tool"))
		e = add_item(t, TR_RESULT, i, 0, id_of(m, "tool_call_id"), NULL,
			     NULL, why);
	if (e == LF_OK && role && !strcmp(role, "function"))
		e = add_item(t, TR_RESULT, i, 0, NULL, NULL, NULL, why);
	return e;
}

static enum lf_err read_anthropic(struct transcript *t, size_t i,
				  const json_t *m, struct lf_why *why)
{
	const json_t *content = json_object_get(m, "content"), *b;
	enum lf_err e = LF_OK;
	size_t j;

	json_array_foreach(content, j, b)
	{
		const char *type = str_of(b, "type");
		const json_t *in = json_object_get(b, "input");

		if (ends_with(type, "tool_use"))
			e = add_item(t, TR_CLAIM, i, j, id_of(b, "id"),
				     str_of(b, "name"),
				     json_is_object(in)
					     ? json_incref((json_t *)in)
					     : NULL,
				     why);
		else if (ends_with(type, "tool_result"))
			e = add_item(t, TR_RESULT, i, j,
				     id_of(b, "tool_use_id"), NULL, NULL, why);
		if (e != LF_OK)
			return e;
	}
	return LF_OK;
}

/* Check the shape of message i and collect the signs of each form. */
static enum lf_err scan_message(size_t i, const json_t *m, bool *oa, bool *an,
				bool *blocks, struct lf_why *why)
{
	const char *role = str_of(m, "role");
	const json_t *content, *b;
	size_t j;

	if (!json_is_object(m) || !role)
		return lf_fail(why, LF_EINVAL_JSON,
			       "message %zu is not an object with a role", i);
	if (present(m, "tool_calls") || present(m, "function_call") ||
	    !strcmp(role, "tool") || !strcmp(role, "function"))
		*oa = true;
	content = json_object_get(m, "content");
	if (!content || json_is_null(content) || json_is_string(content))
		return LF_OK;
	if (!json_is_array(content))
		return lf_fail(
			why, LF_EINVAL_JSON,
			"message %zu: content is neither text nor a list", i);
	json_array_foreach(content, j, b)
	{
		const char *type = str_of(b, "type");

		if (!type)
			return lf_fail(
				why, LF_EINVAL_JSON,
				"message %zu: content block %zu has no type", i,
				j);
		*blocks = true;
		if (ends_with(type, "tool_use") ||
		    ends_with(type, "tool_result"))
			*an = true;
	}
	return LF_OK;
}

enum lf_err transcript_parse(const json_t *doc, struct transcript **out,
			     bool *ambiguous, struct lf_why *why)
{
	struct transcript *t;
	const json_t *msgs =
		json_is_array(doc) ? doc : json_object_get(doc, "messages");
	bool oa = false, an = false, blocks = false;
	enum lf_err e = LF_OK;
	const json_t *m;
	size_t i;

	*out = NULL;
	*ambiguous = false;
	if (!json_is_array(msgs))
		return lf_fail(
			why, LF_EINVAL_JSON,
			"not a transcript: neither a list of messages nor an object with messages");
	json_array_foreach(msgs, i, m)
	{
		e = scan_message(i, m, &oa, &an, &blocks, why);
		if (e != LF_OK)
			return e;
	}
	if (oa && an)
		return lf_fail(
			why, LF_EINVAL_JSON,
			"not a transcript: it mixes OpenAI tool calls and Anthropic tool blocks");
	t = calloc(1, sizeof(*t));
	if (!t)
		return lf_fail(why, LF_NOMEM, "out of memory");
	t->doc = doc;
	t->messages = msgs;
	*ambiguous = !oa && !an;
	t->form = an || (!oa && blocks) ? TRANSCRIPT_ANTHROPIC
					: TRANSCRIPT_OPENAI;
	json_array_foreach(msgs, i, m)
	{
		e = t->form == TRANSCRIPT_OPENAI ? read_openai(t, i, m, why)
						 : read_anthropic(t, i, m, why);
		if (e != LF_OK) {
			transcript_free(t);
			return e;
		}
	}
	*out = t;
	return LF_OK;
}

/* An id from the transcript made safe for one line of stderr. */
void transcript_shown(const char *id, char out[160])
{
	size_t i;

	for (i = 0; id[i] && i < 128; i++)
		out[i] = (unsigned char)id[i] < 0x20 || id[i] == 0x7f ? '?'
								      : id[i];
	if (id[i])
		out[i++] = '~';
	out[i] = '\0';
}

static int problem(json_t *problems, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int problem(json_t *problems, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	return json_array_append_new(problems, json_string(line));
}

/* call_id -> event, for lookups in one pass.  New reference. */
json_t *transcript_index_events(const json_t *events)
{
	json_t *idx = json_object(), *ev;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		const char *id = str_of(ev, "call_id");

		if (idx && id)
			json_object_set(idx, id, ev);
	}
	return idx;
}

static void check_claim(const struct tr_item *it, const json_t *idx,
			json_t *claimed, json_t *problems)
{
	const json_t *ev;
	const char *tool;
	char id[160], a[160], b[160];

	if (!it->id) {
		problem(problems, "missing id: message %zu tool call %zu",
			it->msg, it->idx);
		return;
	}
	transcript_shown(it->id, id);
	if (json_object_get(claimed, it->id)) {
		problem(problems,
			"duplicate: call '%s' claimed again at message %zu", id,
			it->msg);
		return;
	}
	json_object_set_new(claimed, it->id, json_true());
	ev = json_object_get(idx, it->id);
	if (!ev) {
		problem(problems, "forged: no host row for call '%s'", id);
		return;
	}
	tool = str_of(ev, "tool");
	if (!it->name || !tool || strcmp(it->name, tool) != 0) {
		transcript_shown(it->name ? it->name : "<none>", a);
		transcript_shown(tool ? tool : "<none>", b);
		problem(problems,
			"mismatch: call '%s' tool '%s' but host recorded '%s'",
			id, a, b);
		return;
	}
	if (!it->args ||
	    !json_value_equal(it->args, json_object_get(ev, "args")))
		problem(problems,
			"mismatch: call '%s' args differ from the host's", id);
}

enum lf_err transcript_gate(const struct transcript *t, const json_t *events,
			    json_t **problems, struct lf_why *why)
{
	json_t *idx = transcript_index_events(events), *claimed = json_object();
	json_t *p = json_array();
	enum lf_err e = LF_OK;
	char id[160];
	size_t i;

	*problems = NULL;
	if (!idx || !claimed || !p) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < t->n; i++)
		if (t->items[i].kind == TR_CLAIM)
			check_claim(&t->items[i], idx, claimed, p);
	for (i = 0; i < t->n; i++) {
		const struct tr_item *it = &t->items[i];

		if (it->kind != TR_RESULT)
			continue;
		if (!it->id) {
			problem(p, "missing id: message %zu tool result %zu",
				it->msg, it->idx);
			continue;
		}
		transcript_shown(it->id, id);
		if (!json_object_get(idx, it->id))
			problem(p,
				"forged: tool result for call '%s' (message %zu) has no host row",
				id, it->msg);
		else if (!json_object_get(claimed, it->id))
			problem(p,
				"orphan: tool result for call '%s' (message %zu) without its tool call",
				id, it->msg);
	}
	*problems = p;
	p = NULL;
out:
	json_decref(p);
	json_decref(idx);
	json_decref(claimed);
	return e;
}
