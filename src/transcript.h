/* SPDX-License-Identifier: MIT */
/*
 * transcript.h - the transcript gate (ledgerctl(1) COMMANDS, transcript):
 * every tool call a target's transcript claims must match a host row by id,
 * tool and args; then its tool calls and results are replaced by the
 * host's.
 */
#ifndef LF_TRANSCRIPT_H
#define LF_TRANSCRIPT_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

enum transcript_form {
	TRANSCRIPT_OPENAI,    /* assistant tool_calls[], role "tool" results */
	TRANSCRIPT_ANTHROPIC, /* tool_use / tool_result content blocks */
};

/* How a transcript file was written (ledgerctl(1), TRANSCRIPT FILES). */
enum transcript_shape {
	TRANSCRIPT_SHAPE_JSON,	/* one document: {messages: [...]} or [...] */
	TRANSCRIPT_SHAPE_JSONL, /* one message a line */
	TRANSCRIPT_SHAPE_CLAUDE_CODE, /* Claude Code session lines */
};

struct transcript;

/* "json", "jsonl" or "claude-code". */
const char *transcript_shape_name(enum transcript_shape shape);

/*
 * A transcript file's text (len bytes, untrusted) into *doc (new
 * reference) for transcript_parse.  The whole text as one JSON list or
 * object with `messages` is a JSON transcript, kept as it is.  Otherwise
 * it is read a line at a time (blank lines skipped), each line one JSON
 * object, and *doc is a new list of messages: when the first line has a
 * string `role`, every line is a message (JSONL); when it has a string
 * `type`, the file is a Claude Code session and the `message` of each
 * `user` and `assistant` line is taken, other lines skipped.  A line that
 * does not fit is LF_EINVAL_JSON naming the line.
 */
enum lf_err transcript_read(const char *text, size_t len, json_t **doc,
			    enum transcript_shape *shape, struct lf_why *why);

/* "openai" or "anthropic". */
const char *transcript_form_name(enum transcript_form form);

/*
 * Read a transcript: a JSON object with a `messages` array, or a bare
 * array of messages (doc borrowed; it must outlive the transcript).  The
 * form is told apart by structure alone: OpenAI `tool_calls`,
 * `function_call`, role `tool`/`function` messages versus content blocks
 * whose type ends in `tool_use`/`tool_result`.  When neither shows,
 * *ambiguous is set and the form is Anthropic if some content is a list
 * of blocks, else OpenAI.  A shape that fits neither (or mixes both) is
 * LF_EINVAL_JSON with the place named.
 */
enum lf_err transcript_parse(const json_t *doc, struct transcript **out,
			     bool *ambiguous, struct lf_why *why);

enum transcript_form transcript_form(const struct transcript *t);

void transcript_free(struct transcript *t);

/* How many tool calls and tool results the transcript shows. */
size_t transcript_events_shown(const struct transcript *t);

/*
 * The gate against events (borrowed; evidence_fold's output, already
 * filtered by turn).  *problems: a new array of one-line strings, one per
 * offence, empty when the gate passes:
 *   "missing id: message M tool call K"
 *   "forged: no host row for call 'x'"
 *   "mismatch: call 'x' tool 'a' but host recorded 'b'"
 *   "mismatch: call 'x' args differ from the host's"
 *   "duplicate: call 'x' claimed again at message M"
 *   "missing id: message M tool result K"
 *   "forged: tool result for call 'x' (message M) has no host row"
 *   "orphan: tool result for call 'x' (message M) without its tool call"
 * Ids from the transcript are shown with control characters replaced.
 */
enum lf_err transcript_gate(const struct transcript *t, const json_t *events,
			    json_t **problems, struct lf_why *why);

/*
 * The transcript rebuilt from the host's rows, in the input's form and
 * shape (object or bare array): claimed tool calls rebuilt from their
 * host row, tool results replaced by the host's result (content: the
 * `returned` value as JSON text) with a `ledgerfs` object holding the
 * evidence flags; a claimed call without a result gets the host's result
 * after it; host calls the transcript never mentions are inserted, in
 * attempt order, as a tool call plus its result before the last assistant
 * message with text (at the end when there is none).  Call only after
 * transcript_gate passed.  *out: new reference.
 */
enum lf_err transcript_rewrite(const struct transcript *t, const json_t *events,
			       json_t **out, struct lf_why *why);

/*
 * ASSERT's gate (ledgerctl(1) --replace): every tool call and tool result
 * the transcript shows is dropped, its prose kept, and every host call
 * with its result is inserted, in attempt order, before the last
 * assistant message with text (at the end when there is none), in the
 * input's form and shape.  *replaced: a new array of one-line strings,
 * what the strict gate would have refused, each as "replaced: OFFENCE",
 * then "replaced: missing: host call 'x' (tool 'y') was not in the
 * transcript" for each host call it did not show.  A transcript showing
 * tool events while the host has no row is LF_VERIFY, as ASSERT refuses
 * it.  *out: new reference.
 */
enum lf_err transcript_replace(const struct transcript *t, const json_t *events,
			       json_t **out, json_t **replaced,
			       struct lf_why *why);

#endif
