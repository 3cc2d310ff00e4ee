/*
 * transcript.h - the transcript gate (DESIGN 8): every tool call a
 * target's transcript claims must match a host row by id, tool and args;
 * then its tool calls and results are replaced by the host's.
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

struct transcript;

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

#endif
