/* SPDX-License-Identifier: MIT */
/*
 * test_transcript_compat.c - the transcript gate's compatibility with
 * ASSERT (ledgerctl(1)): --replace drops the target's tool events and
 * inserts the host's rows as ASSERT does; JSONL and Claude Code session
 * files are read and told apart by shape.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "evidence.h"
#include "evidence_fixture.h"
#include "transcript.h"

TestSuite(transcript_compat, .init = fx_setup, .fini = fx_teardown);

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* A file of TEST_DATA/transcripts read as ledgerctl reads it.  New ref. */
static json_t *read_file(const char *name, enum transcript_shape *shape)
{
	struct lf_why why = {{0}};
	FILE *f = fopen(fx_transcript_path(name), "r");
	char buf[65536];
	size_t n;
	json_t *doc = NULL;

	cr_assert_not_null(f, "%s", name);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	cr_assert_eq(transcript_read(buf, n, &doc, shape, &why), LF_OK,
		     "%s: %s", name, why.msg);
	return doc;
}

static enum lf_err read_text(const char *text, json_t **doc,
			     enum transcript_shape *shape, struct lf_why *why)
{
	return transcript_read(text, strlen(text), doc, shape, why);
}

struct replaced {
	json_t *doc, *events, *out, *replaced;
	struct transcript *t;
	enum lf_err e;
	struct lf_why why;
};

static struct replaced replace(json_t *doc, unsigned long turn)
{
	struct replaced r = {.doc = doc};
	bool amb;

	r.events = fx_events(turn);
	cr_assert_eq(transcript_parse(doc, &r.t, &amb, &r.why), LF_OK, "%s",
		     r.why.msg);
	r.e = transcript_replace(r.t, r.events, &r.out, &r.replaced, &r.why);
	return r;
}

static void replaced_free(struct replaced *r)
{
	json_decref(r->doc);
	json_decref(r->events);
	json_decref(r->out);
	json_decref(r->replaced);
	transcript_free(r->t);
}

static bool listed(const json_t *lines, const char *want)
{
	const json_t *l;
	size_t i;

	json_array_foreach(lines, i, l)
	{
		if (strstr(json_string_value(l), want))
			return true;
	}
	return false;
}

/* The ids of tool calls in messages, in order, as "c1 c2 ...". */
static const char *call_ids(const json_t *msgs)
{
	static char buf[512];
	const json_t *m, *c;
	size_t i, j;

	buf[0] = '\0';
	json_array_foreach(msgs, i, m)
	{
		json_array_foreach(json_object_get(m, "tool_calls"), j, c)
		{
			strcat(buf, str(c, "id"));
			strcat(buf, " ");
		}
		json_array_foreach(json_object_get(m, "content"), j, c)
		{
			if (str(c, "type") &&
			    !strcmp(str(c, "type"), "tool_use")) {
				strcat(buf, str(c, "id"));
				strcat(buf, " ");
			}
		}
	}
	return buf;
}

/* ---- --replace ---- */

Test(transcript_compat, replace_drops_forged_events_and_inserts_host_rows)
{
	struct replaced r = replace(fx_transcript("openai_forged.json"), 1);
	json_t *msgs;

	cr_assert_eq(r.e, LF_OK, "%s", r.why.msg);
	msgs = json_object_get(r.out, "messages");
	cr_assert_str_eq(call_ids(msgs), "c1 c2 c3 c4 ",
			 "c9 gone, the host's calls in attempt order");
	cr_assert(listed(r.replaced,
			 "replaced: forged: no host row for call 'c9'"));
	cr_assert(listed(
		r.replaced,
		"replaced: missing: host call 'c2' (tool 'send_message') was not in the transcript"));
	cr_assert_not(listed(r.replaced, "'c1' (tool"), "c1 was shown");
	replaced_free(&r);
}

/* ASSERT inserts its rows before the final assistant message with text. */
Test(transcript_compat, replace_inserts_host_rows_before_the_last_answer)
{
	struct replaced r = replace(fx_transcript("openai_turn1.json"), 1);
	json_t *msgs = json_object_get(r.out, "messages"), *last;

	cr_assert_eq(r.e, LF_OK, "%s", r.why.msg);
	/* system, user, 4 x (call, result), the answer */
	cr_assert_eq(json_array_size(msgs), 11);
	cr_assert_str_eq(str(json_array_get(msgs, 2), "role"), "assistant");
	cr_assert_str_eq(str(json_array_get(msgs, 9), "tool_call_id"), "c4");
	last = json_array_get(msgs, 10);
	cr_assert_str_eq(str(last, "content"),
			 "Done: I told Ada and closed her account.");
	cr_assert_eq(json_array_size(r.replaced), 0,
		     "a faithful transcript replaces nothing it must list");
	replaced_free(&r);
}

Test(transcript_compat, replace_keeps_the_prose_of_a_message_with_tool_calls)
{
	struct replaced r = replace(fx_transcript("anthropic_turn1.json"), 1);
	json_t *msgs = json_object_get(r.out, "messages"), *blocks;

	cr_assert_eq(r.e, LF_OK, "%s", r.why.msg);
	blocks = json_object_get(json_array_get(msgs, 1), "content");
	cr_assert_eq(json_array_size(blocks), 1);
	cr_assert_str_eq(str(json_array_get(blocks, 0), "text"),
			 "Looking her up.");
	cr_assert_str_eq(call_ids(msgs), "c1 c2 c3 c4 ");
	replaced_free(&r);
}

Test(transcript_compat, replace_refuses_tool_events_when_the_host_has_no_row)
{
	struct replaced r = replace(fx_transcript("openai_turn1.json"), 7);

	cr_assert_eq(r.e, LF_VERIFY);
	cr_assert_not_null(strstr(r.why.msg, "did not use the mediator"), "%s",
			   r.why.msg);
	cr_assert_null(r.out);
	replaced_free(&r);
}

static int run(char **out, char **err, const char *const *argv)
{
	return fx_run(ctl_transcript_main, out, err, argv);
}

Test(transcript_compat, replace_passes_the_gate_and_prints_what_it_replaced)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("openai_forged.json"),
		"--turn",     "1",
		"--key",      fx_key,
		"--replace",  NULL};
	const char *strict[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("openai_forged.json"),
		"--turn",     "1",
		"--key",      fx_key,
		NULL};
	char *out, *err;
	json_t *doc;

	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	cr_assert_not_null(
		strstr(err, "replaced: forged: no host row for call 'c9'"),
		"%s", err);
	cr_assert_not_null(strstr(err, "--replace: 4 target tool event(s)"),
			   "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert_str_eq(call_ids(json_object_get(doc, "messages")),
			 "c1 c2 c3 c4 ");
	json_decref(doc);
	free(out);
	free(err);
	cr_assert_eq(run(&out, NULL, strict), 1, "the default stays strict");
	free(out);
}

/* ---- files ---- */

Test(transcript_compat, one_json_document_is_kept_as_it_is)
{
	enum transcript_shape shape;
	json_t *doc = read_file("openai_turn1.json", &shape);

	cr_assert_eq(shape, TRANSCRIPT_SHAPE_JSON);
	cr_assert_str_eq(str(doc, "model"), "example-chat-model");
	json_decref(doc);
}

Test(transcript_compat, jsonl_is_one_message_a_line_blank_lines_skipped)
{
	enum transcript_shape shape;
	json_t *doc = read_file("openai_turn1.jsonl", &shape);
	struct replaced r;

	cr_assert_eq(shape, TRANSCRIPT_SHAPE_JSONL);
	cr_assert_eq(json_array_size(doc), 9);
	r = replace(doc, 1);
	cr_assert_eq(transcript_form(r.t), TRANSCRIPT_OPENAI);
	cr_assert_eq(r.e, LF_OK);
	replaced_free(&r);
}

Test(transcript_compat, a_single_message_line_is_jsonl)
{
	enum transcript_shape shape;
	struct lf_why why = {{0}};
	json_t *doc = NULL;

	cr_assert_eq(read_text("{\"role\":\"user\",\"content\":\"hi\"}\n", &doc,
			       &shape, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_eq(shape, TRANSCRIPT_SHAPE_JSONL);
	cr_assert_eq(json_array_size(doc), 1);
	json_decref(doc);
}

Test(transcript_compat,
     claude_code_session_gives_its_user_and_assistant_messages)
{
	enum transcript_shape shape;
	json_t *doc = read_file("claude_code_turn1.jsonl", &shape);
	json_t *events = fx_events(1), *problems = NULL, *out = NULL;
	struct lf_why why = {{0}};
	struct transcript *t;
	bool amb;

	cr_assert_eq(shape, TRANSCRIPT_SHAPE_CLAUDE_CODE);
	/* summary, system and snapshot lines skipped */
	cr_assert_eq(json_array_size(doc), 10);
	cr_assert_eq(transcript_parse(doc, &t, &amb, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_eq(transcript_form(t), TRANSCRIPT_ANTHROPIC);
	cr_assert_eq(transcript_gate(t, events, &problems, &why), LF_OK);
	cr_assert_eq(json_array_size(problems), 0,
		     "tool_use ids are the hook's call ids");
	cr_assert_eq(transcript_rewrite(t, events, &out, &why), LF_OK);
	cr_assert(json_is_array(out));
	json_decref(out);
	json_decref(problems);
	json_decref(events);
	transcript_free(t);
	json_decref(doc);
}

Test(transcript_compat, claude_code_forged_tool_use_fails_the_strict_gate)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("claude_code_forged.jsonl"),
		"--turn",     "1",
		"--key",      fx_key,
		NULL};
	char *out, *err;

	cr_assert_eq(run(&out, &err, argv), 1, "%s", err);
	cr_assert_not_null(strstr(err, "forged: no host row for call 'c9'"),
			   "%s", err);
	free(out);
	free(err);
}

Test(transcript_compat, lines_in_print_as_lines_out)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("claude_code_turn1.jsonl"),
		"--turn",     "1",
		"--key",      fx_key,
		NULL};
	char *out, *err, *line, *save = NULL;
	size_t lines = 0;

	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lines++) {
		json_t *m = json_loads(line, 0, NULL);

		cr_assert(json_is_object(m) && str(m, "role"), "%s", line);
		json_decref(m);
	}
	cr_assert_eq(lines, 10);
	free(out);
	free(err);
}

Test(transcript_compat, a_line_that_fits_no_shape_is_refused_naming_it)
{
	static const char *const bad[][2] = {
		{"{\"role\":\"user\",\"content\":\"a\"}\n{\"type\":\"user\"}\n",
		 "line 2: a message without a role"},
		{"{\"role\":\"user\"}\nnot json\n", "line 2:"},
		{"{\"type\":\"summary\"}\n{\"role\":\"user\"}\n",
		 "line 2: a Claude Code session line without a type"},
		{"{\"type\":\"user\",\"message\":\"hi\"}\n",
		 "line 1: a user line without a message that has a role"},
		{"[1]\n[2]\n", "line 1: not an object"},
		{"{\"speaker\":\"agent\"}\n", "not a transcript"},
		{"\n\n", "no message"},
	};
	enum transcript_shape shape;
	struct lf_why why = {{0}};
	json_t *doc;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		doc = NULL;
		cr_assert_eq(read_text(bad[i][0], &doc, &shape, &why),
			     LF_EINVAL_JSON, "%s", bad[i][0]);
		cr_assert_null(doc);
		cr_assert_not_null(strstr(why.msg, bad[i][1]), "%s: %s",
				   bad[i][1], why.msg);
	}
}
