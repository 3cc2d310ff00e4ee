/* SPDX-License-Identifier: MIT */
/*
 * transcript_int.h - the inside of a read transcript, shared by
 * transcript.c (reading, the gate) and transcript_rewrite.c.
 */
#ifndef LF_TRANSCRIPT_INT_H
#define LF_TRANSCRIPT_INT_H

#include <string.h>

#include "transcript.h"

enum tr_kind { TR_CLAIM, TR_RESULT };

/* One tool call or tool result the transcript claims. */
struct tr_item {
	enum tr_kind kind;
	size_t msg, idx; /* message index; call/block index within it */
	const char *id;	 /* borrowed from the document; NULL: none */
	const char *name;
	json_t *args; /* new reference; NULL when absent or unparseable */
};

struct transcript {
	const json_t *doc;
	const json_t *messages;
	enum transcript_form form;
	struct tr_item *items;
	size_t n, cap;
};

static inline bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static inline const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* An id counts only when it is a non-empty string. */
static inline const char *id_of(const json_t *o, const char *key)
{
	const char *s = str_of(o, key);

	return s && *s ? s : NULL;
}

/* Present and not null: some exporters write "tool_calls": null. */
static inline const json_t *present(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_null(v) ? NULL : v;
}

/* id made safe for one line of stderr: control bytes '?', cut at 128. */
void transcript_shown(const char *id, char out[160]);

/* call_id -> event (borrowed events), for lookups in one pass.  New reference. */
json_t *transcript_index_events(const json_t *events);

#endif
