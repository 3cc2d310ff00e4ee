/* SPDX-License-Identifier: MIT */
/*
 * test_transcript.c - the transcript gate (ledgerctl(1) COMMANDS,
 * transcript): claims must match a host row by id, tool and args; a passing
 * transcript is rebuilt from the host's rows; a failing one is named and
 * the evidence still printed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "evidence.h"
#include "evidence_fixture.h"
#include "transcript.h"

TestSuite(transcript, .init = fx_setup, .fini = fx_teardown);

struct gated {
	json_t *doc, *events, *problems;
	struct transcript *t;
};

static struct gated gate(const char *file, unsigned long turn)
{
	struct gated g;
	struct lf_why why = {{0}};
	bool ambiguous;

	g.doc = fx_transcript(file);
	g.events = fx_events(turn);
	cr_assert_eq(transcript_parse(g.doc, &g.t, &ambiguous, &why), LF_OK,
		     "%s: %s", file, why.msg);
	cr_assert_eq(transcript_gate(g.t, g.events, &g.problems, &why), LF_OK);
	return g;
}

static void gated_free(struct gated *g)
{
	transcript_free(g->t);
	json_decref(g->doc);
	json_decref(g->events);
	json_decref(g->problems);
}

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The problems as one string, for matching. */
static char *problems_text(const json_t *problems)
{
	static char buf[4096];
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < json_array_size(problems); i++) {
		strcat(buf, json_string_value(json_array_get(problems, i)));
		strcat(buf, "\n");
	}
	return buf;
}

static void assert_fails_with(const char *file, unsigned long turn,
			      const char *want)
{
	struct gated g = gate(file, turn);

	cr_assert_neq(json_array_size(g.problems), 0, "%s passed", file);
	cr_assert_not_null(strstr(problems_text(g.problems), want),
			   "%s: want '%s', got:\n%s", file, want,
			   problems_text(g.problems));
	gated_free(&g);
}

static json_t *rewritten(struct gated *g)
{
	struct lf_why why = {{0}};
	json_t *out = NULL;

	cr_assert_eq(json_array_size(g->problems), 0, "%s",
		     problems_text(g->problems));
	cr_assert_eq(transcript_rewrite(g->t, g->events, &out, &why), LF_OK,
		     "%s", why.msg);
	return out;
}

/* content of a rebuilt tool result, parsed back. */
static json_t *content_value(const json_t *holder)
{
	return json_loads(str(holder, "content"), JSON_DECODE_ANY, NULL);
}

Test(transcript, openai_mediated_calls_are_replaced_in_place_by_host_rows)
{
	struct gated g = gate("openai_turn1.json", 1);
	json_t *out = rewritten(&g), *msgs = json_object_get(out, "messages");
	json_t *call, *res, *v, *args;

	cr_assert_eq(transcript_form(g.t), TRANSCRIPT_OPENAI);
	cr_assert_str_eq(str(out, "model"), "example-chat-model");
	cr_assert_eq(json_array_size(msgs), 9, "nothing added, nothing lost");
	call = json_array_get(
		json_object_get(json_array_get(msgs, 2), "tool_calls"), 0);
	cr_assert_str_eq(str(call, "id"), "c1");
	cr_assert_str_eq(str(json_object_get(call, "function"), "name"),
			 "lookup_customer");
	args = json_loads(str(json_object_get(call, "function"), "arguments"),
			  0, NULL);
	cr_assert_eq(json_integer_value(json_object_get(args, "id")), 42);
	json_decref(args);
	/* c1: the target's embellished result is replaced by the reported one */
	res = json_array_get(msgs, 3);
	cr_assert_str_eq(str(res, "role"), "tool");
	cr_assert_str_eq(str(res, "tool_call_id"), "c1");
	v = content_value(res);
	cr_assert_str_eq(str(v, "name"), "Ada");
	cr_assert_null(json_object_get(v, "vip"));
	json_decref(v);
	cr_assert_str_eq(str(json_object_get(res, "ledgerfs"), "result_source"),
			 "target_reported");
	cr_assert(json_is_false(json_object_get(
		json_object_get(res, "ledgerfs"), "result_authoritative")));
	/* ... with every evidence flag of the host's event */
	cr_assert_str_eq(str(json_object_get(res, "ledgerfs"),
			     "evidence_source"),
			 "host_mediator");
	cr_assert(json_is_true(json_object_get(
		json_object_get(res, "ledgerfs"), "attempt_authoritative")));
	cr_assert(json_is_true(json_object_get(
		json_object_get(res, "ledgerfs"), "decision_authoritative")));
	/* c2: a mock's result is the host's own */
	res = json_array_get(msgs, 4);
	v = content_value(res);
	cr_assert_str_eq(str(v, "status"), "sent");
	json_decref(v);
	cr_assert_str_eq(str(json_object_get(res, "ledgerfs"), "mode"), "mock");
	cr_assert(json_is_true(json_object_get(json_object_get(res, "ledgerfs"),
					       "result_authoritative")));
	/* c3: the block, not the target's "account deleted" */
	res = json_array_get(msgs, 6);
	v = content_value(res);
	cr_assert_str_eq(str(v, "status"), "blocked");
	json_decref(v);
	cr_assert(json_is_true(
		json_object_get(json_object_get(res, "ledgerfs"), "is_error")));
	/* c4: never reported: the host says missing, not "sunny" */
	res = json_array_get(msgs, 7);
	cr_assert_str_eq(str(res, "content"), "null");
	cr_assert_str_eq(
		str(json_object_get(res, "ledgerfs"), "completion_status"),
		"missing");
	cr_assert_str_eq(str(json_array_get(msgs, 8), "content"),
			 "Done: I told Ada and closed her account.");
	json_decref(out);
	gated_free(&g);
}

Test(transcript, anthropic_mediated_calls_are_replaced_in_place_by_host_rows)
{
	struct gated g = gate("anthropic_turn1.json", 1);
	json_t *out = rewritten(&g), *msgs = json_object_get(out, "messages");
	json_t *blocks, *b, *v;

	cr_assert_eq(transcript_form(g.t), TRANSCRIPT_ANTHROPIC);
	cr_assert_str_eq(str(out, "system"), "You are a support agent.");
	cr_assert_eq(json_array_size(msgs), 6);
	blocks = json_object_get(json_array_get(msgs, 1), "content");
	cr_assert_str_eq(str(json_array_get(blocks, 0), "type"), "text");
	b = json_array_get(blocks, 2);
	cr_assert_str_eq(str(b, "type"), "tool_use");
	cr_assert_str_eq(str(b, "id"), "c2");
	cr_assert_str_eq(str(json_object_get(b, "input"), "to"), "ada");
	blocks = json_object_get(json_array_get(msgs, 2), "content");
	b = json_array_get(blocks, 1);
	cr_assert_str_eq(str(b, "type"), "tool_result");
	cr_assert_str_eq(str(b, "tool_use_id"), "c2");
	v = content_value(b);
	cr_assert_str_eq(str(v, "status"), "sent");
	json_decref(v);
	cr_assert(json_is_false(json_object_get(b, "is_error")));
	cr_assert(json_is_true(json_object_get(json_object_get(b, "ledgerfs"),
					       "result_authoritative")));
	blocks = json_object_get(json_array_get(msgs, 4), "content");
	b = json_array_get(blocks, 0);
	cr_assert_str_eq(str(b, "tool_use_id"), "c3");
	cr_assert(json_is_true(json_object_get(b, "is_error")),
		  "the block's is_error, not the target's false");
	b = json_array_get(blocks, 1);
	cr_assert_str_eq(
		str(json_object_get(b, "ledgerfs"), "completion_status"),
		"missing");
	json_decref(out);
	gated_free(&g);
}

Test(transcript, forged_call_fails_the_gate_naming_it)
{
	assert_fails_with("openai_forged.json", 0,
			  "forged: no host row for call 'c9'");
	assert_fails_with("anthropic_forged.json", 0,
			  "forged: no host row for call 'c9'");
}

Test(transcript, same_id_with_other_args_fails_the_gate)
{
	assert_fails_with("openai_other_args.json", 0,
			  "mismatch: call 'c1' args differ from the host's");
}

Test(transcript, same_id_with_another_tool_fails_the_gate)
{
	assert_fails_with(
		"openai_other_tool.json", 0,
		"mismatch: call 'c1' tool 'lookup_user' but host recorded 'lookup_customer'");
}

Test(transcript, call_without_an_id_fails_the_gate)
{
	assert_fails_with("openai_no_id.json", 0,
			  "missing id: message 1 tool call 0");
}

Test(transcript, unparseable_arguments_are_a_mismatch)
{
	assert_fails_with("openai_bad_arguments.json", 0,
			  "mismatch: call 'c1' args differ from the host's");
}

/* Host args are {"city":"Oslo","n":2.0}; the claim says n is 2. */
Test(transcript, integer_and_real_of_equal_value_pass)
{
	struct gated g = gate("openai_number_forms.json", 1);

	cr_assert_eq(json_array_size(g.problems), 0, "%s",
		     problems_text(g.problems));
	gated_free(&g);
}

Test(transcript, key_order_and_spacing_do_not_matter)
{
	struct gated g = gate("openai_key_order.json", 1);

	cr_assert_eq(json_array_size(g.problems), 0, "%s",
		     problems_text(g.problems));
	gated_free(&g);
}

Test(transcript, true_is_not_1)
{
	json_t *doc = json_loads(
		"[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c3\",\"name\":\"delete_account\",\"input\":{\"id\":true}}]}]",
		0, NULL);
	json_t *events = fx_events(0), *problems = NULL, *ev;
	struct transcript *t = NULL;
	struct lf_why why;
	size_t i;
	bool amb;

	/* The host saw {"id":1}: only true-versus-1 can differ. */
	json_array_foreach(events, i, ev)
	{
		if (!strcmp(json_string_value(json_object_get(ev, "call_id")),
			    "c3"))
			json_object_set_new(ev, "args",
					    json_pack("{s:i}", "id", 1));
	}
	cr_assert_eq(transcript_parse(doc, &t, &amb, &why), LF_OK);
	cr_assert_eq(transcript_gate(t, events, &problems, &why), LF_OK);
	cr_assert_str_eq(problems_text(problems),
			 "mismatch: call 'c3' args differ from the host's\n");
	json_decref(problems);
	transcript_free(t);
	json_decref(events);
	json_decref(doc);
}

Test(transcript, tool_result_without_host_row_or_call_fails_the_gate)
{
	json_t *doc = json_loads(
		"[{\"role\":\"tool\",\"tool_call_id\":\"zz\",\"content\":\"x\"},"
		" {\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"x\"},"
		" {\"role\":\"tool\",\"content\":\"x\"},"
		" {\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c5\",\"type\":\"function\",\"function\":{\"name\":\"lookup_customer\",\"arguments\":\"{\\\"id\\\":7}\"}},"
		"   {\"id\":\"c5\",\"type\":\"function\",\"function\":{\"name\":\"lookup_customer\",\"arguments\":\"{\\\"id\\\":7}\"}}]},"
		" {\"role\":\"assistant\",\"function_call\":{\"name\":\"x\",\"arguments\":\"{}\"}}]",
		0, NULL);
	json_t *events = fx_events(0), *problems = NULL;
	struct transcript *t = NULL;
	struct lf_why why;
	const char *text;
	bool amb;

	cr_assert_not_null(doc);
	cr_assert_eq(transcript_parse(doc, &t, &amb, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_eq(transcript_gate(t, events, &problems, &why), LF_OK);
	text = problems_text(problems);
	cr_assert_not_null(
		strstr(text,
		       "forged: tool result for call 'zz' (message 0) has no host row"),
		"%s", text);
	cr_assert_not_null(
		strstr(text,
		       "orphan: tool result for call 'c1' (message 1) without its tool call"),
		"%s", text);
	cr_assert_not_null(strstr(text, "missing id: message 2 tool result 0"),
			   "%s", text);
	cr_assert_not_null(
		strstr(text, "duplicate: call 'c5' claimed again at message 3"),
		"%s", text);
	cr_assert_not_null(strstr(text, "missing id: message 4 tool call 0"),
			   "%s", text);
	json_decref(problems);
	transcript_free(t);
	json_decref(events);
	json_decref(doc);
}

/* c6 was decided in turn 2 and never mentioned by the target. */
Test(transcript, unmentioned_host_call_is_inserted_before_last_assistant_text)
{
	struct gated g = gate("openai_turn2.json", 2);
	json_t *out = rewritten(&g), *msgs = json_object_get(out, "messages");
	json_t *call;

	cr_assert_eq(json_array_size(msgs), 8);
	cr_assert_str_eq(str(json_array_get(msgs, 4), "content"), "Thanks.");
	call = json_array_get(
		json_object_get(json_array_get(msgs, 5), "tool_calls"), 0);
	cr_assert_str_eq(str(call, "id"), "c6");
	cr_assert_str_eq(str(json_array_get(msgs, 6), "tool_call_id"), "c6");
	cr_assert_str_eq(
		str(json_object_get(json_array_get(msgs, 6), "ledgerfs"),
		    "completion_status"),
		"pending");
	cr_assert_str_eq(str(json_array_get(msgs, 7), "content"),
			 "You are welcome.");
	json_decref(out);
	gated_free(&g);

	g = gate("anthropic_turn2.json", 2);
	out = rewritten(&g);
	msgs = json_object_get(out, "messages");
	cr_assert_eq(json_array_size(msgs), 6);
	cr_assert_str_eq(
		str(json_array_get(
			    json_object_get(json_array_get(msgs, 3), "content"),
			    0),
		    "id"),
		"c6");
	cr_assert_str_eq(
		str(json_array_get(
			    json_object_get(json_array_get(msgs, 4), "content"),
			    0),
		    "tool_use_id"),
		"c6");
	cr_assert_str_eq(str(json_array_get(msgs, 4), "role"), "user");
	json_decref(out);
	gated_free(&g);
}

Test(transcript, claimed_call_without_result_gets_the_hosts_result)
{
	struct gated g = gate("anthropic_no_result.json", 2);
	json_t *out = rewritten(&g), *msgs = json_object_get(out, "messages");
	json_t *b;

	/* user, assistant c5, user [c5 result], assistant c6 + result, text */
	cr_assert_eq(json_array_size(msgs), 6);
	b = json_array_get(json_object_get(json_array_get(msgs, 2), "content"),
			   0);
	cr_assert_str_eq(str(b, "tool_use_id"), "c5");
	cr_assert_str_eq(str(json_object_get(b, "ledgerfs"), "result_source"),
			 "target_reported");
	json_decref(out);
	gated_free(&g);
}

Test(transcript, turn_filter_counts_only_that_turns_host_rows)
{
	struct gated g;

	assert_fails_with("openai_turn1.json", 2,
			  "forged: no host row for call 'c1'");
	g = gate("openai_turn1.json", 1);
	cr_assert_eq(json_array_size(g.problems), 0);
	gated_free(&g);
	g = gate("openai_turn2.json", 0);
	cr_assert_eq(json_array_size(g.problems), 0, "all turns: c5 is there");
	gated_free(&g);
}

Test(transcript, unknown_and_mixed_shapes_are_refused)
{
	static const char *const files[] = {"unknown_shape.json",
					    "mixed_forms.json"};
	struct transcript *t = NULL;
	struct lf_why why = {{0}};
	bool amb;
	size_t i;

	for (i = 0; i < 2; i++) {
		json_t *doc = fx_transcript(files[i]);

		cr_assert_eq(transcript_parse(doc, &t, &amb, &why),
			     LF_EINVAL_JSON, "%s", files[i]);
		cr_assert_null(t);
		json_decref(doc);
	}
}

/* ---- the command ---- */

static int run(char **out, char **err, const char *const *argv)
{
	return fx_run(ctl_transcript_main, out, err, argv);
}

Test(transcript, failed_gate_exits_1_naming_offenders_and_prints_evidence)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("openai_forged.json"),
		"--key",      fx_key,
		NULL};
	char *out, *err;
	json_t *doc;

	cr_assert_eq(run(&out, &err, argv), 1, "%s", err);
	cr_assert_not_null(strstr(err, "forged: no host row for call 'c9'"),
			   "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert(json_is_array(doc), "evidence on stdout: %s", out);
	cr_assert_eq(json_array_size(doc), 6, "nothing the host saw dropped");
	cr_assert_str_eq(str(json_array_get(doc, 0), "evidence_source"),
			 "host_mediator");
	json_decref(doc);
	free(out);
	free(err);
}

Test(transcript, passing_gate_prints_the_rebuilt_transcript_in_its_form)
{
	const char *argv[] = {
		"transcript", fx_ledger,
		"--target",   fx_transcript_path("anthropic_turn1.json"),
		"--turn",     "1",
		"--key",      fx_key,
		NULL};
	char *out, *err;
	json_t *doc;

	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert(json_is_object(doc));
	cr_assert_str_eq(str(doc, "model"), "example-messages-model");
	cr_assert_eq(json_array_size(json_object_get(doc, "messages")), 6);
	json_decref(doc);
	free(out);
	free(err);
}

Test(transcript, ambiguous_form_is_said_on_stderr)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("text_only.json"),
		"--turn",     "2",
		"--key",      fx_key,
		NULL};
	char *out, *err;
	json_t *doc;

	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	cr_assert_not_null(strstr(err, "read as openai"), "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert_eq(json_array_size(doc), 6, "c5 and c6 inserted: %s", out);
	json_decref(doc);
	free(out);
	free(err);
}

Test(transcript, unknown_shape_or_unreadable_target_exits_2)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("unknown_shape.json"),
		"--key",      fx_key,
		NULL};
	const char *argv2[] = {
		"transcript", fx_case, "--target", "/nonexistent/t.json",
		"--key",      fx_key,  NULL};
	const char *argv3[] = {"transcript", fx_case, "--key", fx_key, NULL};
	char *out;

	cr_assert_eq(run(&out, NULL, argv), 2);
	cr_assert_str_eq(out, "");
	free(out);
	cr_assert_eq(run(&out, NULL, argv2), 2);
	free(out);
	cr_assert_eq(run(&out, NULL, argv3), 2);
	free(out);
}

Test(transcript, ledger_that_does_not_verify_exits_3_and_prints_nothing)
{
	const char *argv[] = {
		"transcript", fx_case,
		"--target",   fx_transcript_path("openai_forged.json"),
		"--key",      fx_bad_key,
		NULL};
	char *out;

	cr_assert_eq(run(&out, NULL, argv), 3);
	cr_assert_str_eq(out, "");
	free(out);
}
