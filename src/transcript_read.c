/* SPDX-License-Identifier: MIT */
/*
 * transcript_read.c - a transcript file's text into the list the gate
 * reads (ledgerctl(1), TRANSCRIPT FILES): one JSON document, JSONL of
 * messages, or a Claude Code session (lines {type, message, ...}), told
 * apart by shape so the hook's calls can be gated against Claude's own log.
 */
#include <stdlib.h>
#include <string.h>

#include "transcript_int.h"

const char *transcript_shape_name(enum transcript_shape shape)
{
	switch (shape) {
	case TRANSCRIPT_SHAPE_JSONL:
		return "jsonl";
	case TRANSCRIPT_SHAPE_CLAUDE_CODE:
		return "claude-code";
	default:
		return "json";
	}
}

/* One JSON document the gate reads as it is: a list, or {messages: [...]}. */
static bool is_document(const json_t *v)
{
	return json_is_array(v) ||
	       (json_is_object(v) &&
		json_is_array(json_object_get(v, "messages")));
}

static bool blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/*
 * Line `line` (an object) into msgs.  The first line decides the shape:
 * a string `role` makes every line a message; a string `type` makes the
 * file a Claude Code session, whose user and assistant lines contribute
 * their `message` and whose other lines (summaries, system notes,
 * snapshots) are skipped.
 */
static enum lf_err take_line(json_t *v, size_t line, bool first,
			     enum transcript_shape *shape, json_t *msgs,
			     struct lf_why *why)
{
	const char *type = str_of(v, "type");
	const json_t *m;

	if (!json_is_object(v))
		return lf_fail(why, LF_EINVAL_JSON, "line %zu: not an object",
			       line);
	if (first)
		*shape = str_of(v, "role") ? TRANSCRIPT_SHAPE_JSONL
			 : type		   ? TRANSCRIPT_SHAPE_CLAUDE_CODE
					   : TRANSCRIPT_SHAPE_JSON;
	if (*shape == TRANSCRIPT_SHAPE_JSON)
		return lf_fail(
			why, LF_EINVAL_JSON,
			"line %zu: neither a message (role) nor a Claude Code session line (type)",
			line);
	if (*shape == TRANSCRIPT_SHAPE_JSONL) {
		if (!str_of(v, "role"))
			return lf_fail(why, LF_EINVAL_JSON,
				       "line %zu: a message without a role",
				       line);
		return json_array_append(msgs, v) ? LF_NOMEM : LF_OK;
	}
	if (!type)
		return lf_fail(
			why, LF_EINVAL_JSON,
			"line %zu: a Claude Code session line without a type",
			line);
	if (strcmp(type, "user") != 0 && strcmp(type, "assistant") != 0)
		return LF_OK;
	m = json_object_get(v, "message");
	if (!json_is_object(m) || !str_of(m, "role"))
		return lf_fail(
			why, LF_EINVAL_JSON,
			"line %zu: a %s line without a message that has a role",
			line, type);
	return json_array_append(msgs, (json_t *)m) ? LF_NOMEM : LF_OK;
}

enum lf_err transcript_read(const char *text, size_t len, json_t **doc,
			    enum transcript_shape *shape, struct lf_why *why)
{
	json_t *whole, *msgs = NULL, *v;
	json_error_t err;
	size_t off = 0, line = 0;
	bool first = true;
	enum lf_err e = LF_OK;

	*doc = NULL;
	*shape = TRANSCRIPT_SHAPE_JSON;
	whole = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (whole && is_document(whole)) {
		*doc = whole;
		return LF_OK;
	}
	/* One value that is no document and no line either: say so plainly. */
	if (whole && !(json_is_object(whole) &&
		       (str_of(whole, "role") || str_of(whole, "type")))) {
		json_decref(whole);
		return lf_fail(
			why, LF_EINVAL_JSON,
			"not a transcript: neither a list of messages, an object with messages, nor JSONL");
	}
	json_decref(whole);
	msgs = json_array();
	if (!msgs)
		return lf_fail(why, LF_NOMEM, "out of memory");
	while (off < len) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;

		line++;
		if (!blank(text + off, n)) {
			v = json_loadb(text + off, n, JSON_REJECT_DUPLICATES,
				       &err);
			if (!v) {
				e = lf_fail(why, LF_EINVAL_JSON, "line %zu: %s",
					    line, err.text);
				goto out;
			}
			e = take_line(v, line, first, shape, msgs, why);
			json_decref(v);
			if (e == LF_NOMEM)
				e = lf_fail(why, LF_NOMEM, "out of memory");
			if (e != LF_OK)
				goto out;
			first = false;
		}
		off += n + 1;
	}
	if (first) {
		e = lf_fail(why, LF_EINVAL_JSON,
			    "not a transcript: no message in it");
		goto out;
	}
	*doc = msgs;
	msgs = NULL;
out:
	json_decref(msgs);
	if (e != LF_OK)
		*shape = TRANSCRIPT_SHAPE_JSON;
	return e;
}
