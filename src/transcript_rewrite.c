/* SPDX-License-Identifier: MIT */
/*
 * transcript_rewrite.c - a transcript that passed the gate, rebuilt from
 * the host's rows (ledgerctl(1) COMMANDS, transcript): tool calls and
 * results in place, host calls the target never mentioned inserted before
 * its last words.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"
#include "transcript_int.h"

/* The evidence flags a rebuilt tool result carries.  New reference. */
static json_t *flags_of(const json_t *ev)
{
	static const char *const keys[] = {
		"call_id",
		"sequence",
		"turn",
		"mode",
		"is_error",
		"execution_status",
		"result_source",
		"evidence_source",
		"attempt_authoritative",
		"decision_authoritative",
		"result_authoritative",
		"completion_status",
	};
	json_t *f = json_object();

	if (f)
		json_copy_keys(f, ev, keys, sizeof(keys) / sizeof(keys[0]));
	return f;
}

static json_t *dump_value(const json_t *v)
{
	char *s =
		json_dumps(v ? v : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
	json_t *r = s ? json_string(s) : NULL;

	free(s);
	return r;
}

/* A tool call rebuilt from the host's event.  New reference. */
static json_t *host_call(enum transcript_form f, const json_t *ev)
{
	const json_t *args = json_object_get(ev, "args");

	if (f == TRANSCRIPT_ANTHROPIC)
		return json_pack("{s:s, s:O, s:O, s:O}", "type", "tool_use",
				 "id", json_object_get(ev, "call_id"), "name",
				 json_object_get(ev, "tool"), "input", args);
	return json_pack("{s:O, s:s, s:{s:O, s:o}}", "id",
			 json_object_get(ev, "call_id"), "type", "function",
			 "function", "name", json_object_get(ev, "tool"),
			 "arguments", dump_value(args));
}

/* The host's result as a tool message (OpenAI) or block.  New reference. */
static json_t *host_result(enum transcript_form f, const json_t *ev)
{
	const json_t *id = json_object_get(ev, "call_id");
	json_t *text = dump_value(json_object_get(ev, "returned"));

	if (f == TRANSCRIPT_ANTHROPIC)
		return json_pack("{s:s, s:O, s:o, s:b, s:o}", "type",
				 "tool_result", "tool_use_id", id, "content",
				 text, "is_error",
				 json_is_true(json_object_get(ev, "is_error")),
				 "ledgerfs", flags_of(ev));
	return json_pack("{s:s, s:O, s:o, s:o}", "role", "tool", "tool_call_id",
			 id, "content", text, "ledgerfs", flags_of(ev));
}

static bool has_text(const json_t *m)
{
	const json_t *c = json_object_get(m, "content"), *b;
	size_t i;

	if (json_is_string(c))
		return json_string_length(c) > 0;
	json_array_foreach(c, i, b)
	{
		const char *type = str_of(b, "type");

		if (type && !strcmp(type, "text"))
			return true;
	}
	return false;
}

struct rw {
	const struct transcript *t;
	json_t *idx;	 /* call_id -> event */
	json_t *results; /* ids the transcript has a result for */
	json_t *owed;	 /* events whose claimed call has no result yet */
	json_t *out;	 /* the new messages */
};

/* Emit the owed results before message m (NULL: at the end). */
static void pay_owed(struct rw *w, const json_t *m, json_t **prefix)
{
	enum transcript_form f = w->t->form;
	const char *role = m ? str_of(m, "role") : NULL;
	json_t *ev, *blocks;
	size_t i;

	*prefix = NULL;
	if (!json_array_size(w->owed))
		return;
	if (f == TRANSCRIPT_OPENAI) {
		if (role && !strcmp(role, "tool"))
			return; /* still in the block of results */
		json_array_foreach(w->owed, i, ev)
			json_array_append_new(w->out, host_result(f, ev));
	} else {
		blocks = json_array();
		json_array_foreach(w->owed, i, ev)
			json_array_append_new(blocks, host_result(f, ev));
		/* Results open the next user turn, as the API wants them. */
		if (role && !strcmp(role, "user") &&
		    json_is_array(json_object_get(m, "content")))
			*prefix = blocks;
		else
			json_array_append_new(
				w->out, json_pack("{s:s, s:o}", "role", "user",
						  "content", blocks));
	}
	json_array_clear(w->owed);
}

static void insert_unmentioned(struct rw *w, const json_t *events,
			       const json_t *claimed)
{
	enum transcript_form f = w->t->form;
	json_t *ev;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		const char *id = str_of(ev, "call_id");

		if (!id || json_object_get(claimed, id))
			continue;
		if (f == TRANSCRIPT_OPENAI) {
			json_array_append_new(w->out,
					      json_pack("{s:s, s:n, s:[o]}",
							"role", "assistant",
							"content", "tool_calls",
							host_call(f, ev)));
			json_array_append_new(w->out, host_result(f, ev));
		} else {
			json_array_append_new(w->out,
					      json_pack("{s:s, s:[o]}", "role",
							"assistant", "content",
							host_call(f, ev)));
			json_array_append_new(w->out,
					      json_pack("{s:s, s:[o]}", "role",
							"user", "content",
							host_result(f, ev)));
		}
	}
}

/* Message m rebuilt; prefix (stolen) goes first in its content. */
static json_t *rewrite_message(struct rw *w, const json_t *m, json_t *prefix)
{
	enum transcript_form f = w->t->form;
	const char *role = str_of(m, "role");
	const json_t *list, *x, *ev;
	json_t *copy, *nl;
	size_t j;

	if (f == TRANSCRIPT_OPENAI && role && !strcmp(role, "tool"))
		return host_result(
			f, json_object_get(w->idx, id_of(m, "tool_call_id")));
	list = f == TRANSCRIPT_OPENAI ? present(m, "tool_calls")
				      : json_object_get(m, "content");
	if (!json_is_array(list) && !prefix)
		return json_incref((json_t *)m);
	copy = json_copy((json_t *)m);
	nl = prefix ? prefix : json_array();
	json_array_foreach(list, j, x)
	{
		const char *type = str_of(x, "type");
		const char *id = id_of(x, "id");

		if (f == TRANSCRIPT_ANTHROPIC &&
		    ends_with(type, "tool_result")) {
			ev = json_object_get(w->idx, id_of(x, "tool_use_id"));
			json_array_append_new(nl, host_result(f, ev));
			continue;
		}
		if (f == TRANSCRIPT_ANTHROPIC && !ends_with(type, "tool_use")) {
			json_array_append(nl, (json_t *)x);
			continue;
		}
		ev = json_object_get(w->idx, id);
		json_array_append_new(nl, host_call(f, ev));
		if (!json_object_get(w->results, id))
			json_array_append(w->owed, (json_t *)ev);
	}
	json_object_set_new(
		copy, f == TRANSCRIPT_OPENAI ? "tool_calls" : "content", nl);
	return copy;
}

/* msgs in the input's shape: the list itself, or the object around it. */
static enum lf_err wrap(const struct transcript *t, json_t *msgs, json_t **out,
			struct lf_why *why)
{
	if (json_is_array(t->doc)) {
		*out = json_incref(msgs);
		return LF_OK;
	}
	*out = json_copy((json_t *)t->doc);
	if (!*out || json_object_set(*out, "messages", msgs) != 0) {
		json_decref(*out);
		*out = NULL;
		return lf_fail(why, LF_NOMEM, "out of memory");
	}
	return LF_OK;
}

enum lf_err transcript_rewrite(const struct transcript *t, const json_t *events,
			       json_t **out, struct lf_why *why)
{
	struct rw w = {t, transcript_index_events(events), json_object(),
		       json_array(), json_array()};
	json_t *claimed = json_object(), *prefix;
	size_t i, last = SIZE_MAX;
	enum lf_err e = LF_OK;
	const json_t *m;

	*out = NULL;
	if (!w.idx || !w.results || !w.owed || !w.out || !claimed) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < t->n; i++) {
		const struct tr_item *it = &t->items[i];

		if (!it->id || !json_object_get(w.idx, it->id)) {
			e = lf_fail(why, LF_VERIFY,
				    "the transcript did not pass the gate");
			goto out;
		}
		json_object_set_new(it->kind == TR_CLAIM ? claimed : w.results,
				    it->id, json_true());
	}
	json_array_foreach(t->messages, i, m)
	{
		const char *role = str_of(m, "role");

		if (role && !strcmp(role, "assistant") && has_text(m))
			last = i;
	}
	json_array_foreach(t->messages, i, m)
	{
		pay_owed(&w, m, &prefix);
		if (i == last)
			insert_unmentioned(&w, events, claimed);
		json_array_append_new(w.out, rewrite_message(&w, m, prefix));
	}
	pay_owed(&w, NULL, &prefix);
	if (last == SIZE_MAX)
		insert_unmentioned(&w, events, claimed);
	e = wrap(t, w.out, out, why);
out:
	json_decref(w.idx);
	json_decref(w.results);
	json_decref(w.owed);
	json_decref(w.out);
	json_decref(claimed);
	return e;
}

/*
 * Message m without its tool events, prose kept (ASSERT drops the whole
 * message; ledgerfs keeps its text, ledgerctl(1) --replace).  New
 * reference, or NULL when nothing is left of it.
 */
static json_t *strip_message(enum transcript_form f, const json_t *m)
{
	const char *role = str_of(m, "role");
	const json_t *content = json_object_get(m, "content"), *b;
	json_t *copy, *kept;
	size_t j, dropped = 0;

	if (f == TRANSCRIPT_OPENAI) {
		if (role &&
		    (!strcmp(role, "tool") || !strcmp(role, "function")))
			return NULL;
		if (!present(m, "tool_calls") && !present(m, "function_call"))
			return json_incref((json_t *)m);
		copy = json_copy((json_t *)m);
		json_object_del(copy, "tool_calls");
		json_object_del(copy, "function_call");
	} else {
		if (!json_is_array(content))
			return json_incref((json_t *)m);
		kept = json_array();
		json_array_foreach(content, j, b)
		{
			const char *type = str_of(b, "type");

			if (ends_with(type, "tool_use") ||
			    ends_with(type, "tool_result"))
				dropped++;
			else
				json_array_append(kept, (json_t *)b);
		}
		if (!dropped) {
			json_decref(kept);
			return json_incref((json_t *)m);
		}
		copy = json_copy((json_t *)m);
		json_object_set_new(copy, "content", kept);
	}
	if (copy && !has_text(copy)) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

/* What the strict gate would refuse, and the host calls not shown. */
static enum lf_err list_replaced(const struct transcript *t,
				 const json_t *events, json_t **replaced,
				 struct lf_why *why)
{
	json_t *problems = NULL, *claimed = json_object(), *ev, *p;
	char line[512], id[160], tool[160];
	enum lf_err e;
	size_t i;

	*replaced = json_array();
	e = transcript_gate(t, events, &problems, why);
	if (e != LF_OK || !claimed || !*replaced) {
		if (e == LF_OK)
			e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(problems, i, p)
	{
		snprintf(line, sizeof(line), "replaced: %s",
			 json_string_value(p));
		json_array_append_new(*replaced, json_string(line));
	}
	for (i = 0; i < t->n; i++)
		if (t->items[i].kind == TR_CLAIM && t->items[i].id)
			json_object_set_new(claimed, t->items[i].id,
					    json_true());
	json_array_foreach(events, i, ev)
	{
		const char *cid = str_of(ev, "call_id");

		if (!cid || json_object_get(claimed, cid))
			continue;
		transcript_shown(cid, id);
		transcript_shown(str_of(ev, "tool") ? str_of(ev, "tool") : "",
				 tool);
		snprintf(
			line, sizeof(line),
			"replaced: missing: host call '%s' (tool '%s') was not in the transcript",
			id, tool);
		json_array_append_new(*replaced, json_string(line));
	}
out:
	if (e != LF_OK) {
		json_decref(*replaced);
		*replaced = NULL;
	}
	json_decref(problems);
	json_decref(claimed);
	return e;
}

enum lf_err transcript_replace(const struct transcript *t, const json_t *events,
			       json_t **out, json_t **replaced,
			       struct lf_why *why)
{
	struct rw w = {t, NULL, NULL, NULL, json_array()};
	json_t *kept = json_array(), *none = json_object(), *s;
	size_t i, last = SIZE_MAX;
	enum lf_err e;
	const json_t *m;

	*out = NULL;
	*replaced = NULL;
	if (!w.out || !kept || !none) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	if (t->n && !json_array_size(events)) {
		e = lf_fail(
			why, LF_VERIFY,
			"the transcript shows tool events but the host recorded no call: the target did not use the mediator");
		goto out;
	}
	e = list_replaced(t, events, replaced, why);
	if (e != LF_OK)
		goto out;
	json_array_foreach(t->messages, i, m)
	{
		s = strip_message(t->form, m);
		if (s)
			json_array_append_new(kept, s);
	}
	json_array_foreach(kept, i, m)
	{
		const char *role = str_of(m, "role");

		if (role && !strcmp(role, "assistant") && has_text(m))
			last = i;
	}
	json_array_foreach(kept, i, m)
	{
		if (i == last)
			insert_unmentioned(&w, events, none);
		json_array_append(w.out, (json_t *)m);
	}
	if (last == SIZE_MAX)
		insert_unmentioned(&w, events, none);
	e = wrap(t, w.out, out, why);
out:
	if (e != LF_OK) {
		json_decref(*replaced);
		*replaced = NULL;
	}
	json_decref(w.out);
	json_decref(kept);
	json_decref(none);
	return e;
}
