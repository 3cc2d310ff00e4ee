/* SPDX-License-Identifier: MIT */
/*
 * test_cassette_write.c - a case's rows turned into the replay
 * (ledgerctl(1) CASSETTES): which calls the mocks file replays and how,
 * the replay policy, the YAML text, and the comparison of a re-run.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cassette_write.h"
#include "doc.h"
#include "mocks.h"
#include "policy.h"

/* A decision row; mock and block carry their result. */
static json_t *decision(int seq, const char *tool, const char *mode,
			const char *returned, bool is_error)
{
	json_t *r = json_pack("{s:s, s:i, s:s, s:s, s:{s:i}, s:s}", "phase",
			      "decision", "sequence", seq, "call_id", "c",
			      "tool", tool, "args", "n", seq, "mode", mode);

	if (strcmp(mode, "pass") == 0) {
		json_object_set_new(r, "returned", json_null());
		json_object_set_new(r, "result_source",
				    json_string("not_reported"));
		json_object_set_new(r, "completion_status",
				    json_string("pending"));
	} else {
		json_object_set_new(
			r, "returned",
			json_loads(returned, JSON_DECODE_ANY, NULL));
		json_object_set_new(r, "is_error", json_boolean(is_error));
		json_object_set_new(r, "result_source",
				    json_string("host_mediator"));
		json_object_set_new(r, "completion_status",
				    json_string("complete"));
	}
	return r;
}

/* A result row of its own (target-reported or host-executed). */
static json_t *result(int seq, const char *source, const char *returned,
		      bool is_error)
{
	return json_pack(
		"{s:s, s:i, s:s, s:o, s:b, s:b, s:s}", "phase", "completion",
		"sequence", seq, "result_source", source, "returned",
		json_loads(returned, JSON_DECODE_ANY, NULL), "is_error",
		is_error, "real_executed", 1, "completion_status", "complete");
}

static json_t *rows_of(json_t *first, ...)
{
	json_t *rows = json_array(), *r = first;
	va_list ap;

	va_start(ap, first);
	while (r) {
		json_array_append_new(rows, r);
		r = va_arg(ap, json_t *);
	}
	va_end(ap);
	return rows;
}

static const json_t *rule(const struct cassette_set *s, size_t i)
{
	return json_array_get(json_object_get(s->mocks, "mocks"), i);
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool eq_text(const json_t *v, const char *text)
{
	json_t *w = json_loads(text, JSON_DECODE_ANY, NULL);
	bool same = w && json_equal((json_t *)v, w);

	json_decref(w);
	return same;
}

static struct cassette_set build(json_t *rows)
{
	struct cassette_set s;
	struct lf_why why = {{0}};

	cr_assert_eq(cassette_build(rows, "C1", NULL, &s, &why), LF_OK, "%s",
		     why.msg);
	json_decref(rows);
	return s;
}

Test(cassette_write, passed_results_replay_in_call_order_per_tool)
{
	struct cassette_set s = build(rows_of(
		decision(1, "lookup", "pass", NULL, false),
		result(1, "target_reported", "{\"v\":1}", false),
		decision(2, "lookup", "pass", NULL, false),
		result(2, "target_reported", "{\"v\":2}", false), NULL));
	const json_t *r = rule(&s, 0), *steps = json_object_get(r, "responses");

	cr_assert_str_eq(str(r, "tool"), "lookup");
	cr_assert_str_eq(str(r, "backend"), "scenario");
	cr_assert_str_eq(str(r, "scenario"), CASSETTE_SCENARIO);
	cr_assert_eq(json_array_size(steps), 2);
	cr_assert(eq_text(json_object_get(json_array_get(steps, 0), "response"),
			  "{\"v\":1}"));
	cr_assert(eq_text(json_object_get(json_array_get(steps, 1), "response"),
			  "{\"v\":2}"));
	cassette_set_clear(&s);
}

Test(cassette_write, one_result_of_a_tool_is_a_replay_rule_and_recording)
{
	struct cassette_set s = build(
		rows_of(decision(1, "lookup", "pass", NULL, false),
			result(1, "target_reported", "[1,2]", false), NULL));
	const json_t *r = rule(&s, 0);

	cr_assert_str_eq(str(r, "backend"), "replay");
	cr_assert_str_eq(str(r, "cassette_file"), "call-000001");
	cr_assert(
		eq_text(json_object_get(s.recordings, "call-000001"), "[1,2]"));
	cr_assert_str_eq(str(json_array_get(s.calls, 0), "cassette"),
			 "call-000001");
	cassette_set_clear(&s);
}

Test(cassette_write, host_executed_results_are_replayed_like_reported_ones)
{
	json_t *d = decision(1, "crm", "pass", NULL, false), *d2;
	struct cassette_set s;

	/* In the decision row itself, as a host executor may write it. */
	json_object_set_new(d, "result_source", json_string("host_executed"));
	json_object_set_new(d, "completion_status", json_string("complete"));
	json_object_set_new(d, "returned", json_string("real"));
	json_object_set_new(d, "real_executed", json_true());
	/* Or in a completion row after a pending decision (ledgerfs(8)
	 * HOST EXECUTORS). */
	d2 = decision(2, "crm", "pass", NULL, false);
	json_object_set_new(d2, "result_source", json_string("host_executed"));
	s = build(rows_of(d, d2, result(2, "host_executed", "\"other\"", true),
			  NULL));
	cr_assert(
		eq_text(json_object_get(json_array_get(s.calls, 0), "returned"),
			"\"real\""));
	cr_assert(eq_text(
		json_object_get(
			json_array_get(
				json_object_get(rule(&s, 0), "responses"), 1),
			"error"),
		"\"other\""));
	cassette_set_clear(&s);
}

Test(cassette_write, mocked_calls_are_replayed_with_what_they_returned)
{
	struct cassette_set s = build(rows_of(
		decision(1, "send", "mock", "{\"status\":\"sent\"}", false),
		NULL));

	cr_assert_str_eq(str(rule(&s, 0), "tool"), "send");
	cr_assert(eq_text(json_object_get(s.recordings, "call-000001"),
			  "{\"status\":\"sent\"}"));
	cassette_set_clear(&s);
}

Test(cassette_write, policy_blocks_are_left_to_the_policy)
{
	struct cassette_set s = build(rows_of(
		decision(1, "rm", "block", "{\"status\":\"blocked\"}", true),
		NULL));

	cr_assert_eq(json_array_size(json_object_get(s.mocks, "mocks")), 0);
	cr_assert_str_eq(str(json_array_get(s.calls, 0), "replay"), "policy");
	cr_assert_null(json_object_get(json_array_get(s.calls, 0), "cassette"));
	cassette_set_clear(&s);
}

Test(cassette_write, limit_blocks_are_replayed_as_errors)
{
	json_t *d = decision(1, "x", "block", "{\"status\":\"blocked\"}", true);
	struct cassette_set s;

	json_object_set_new(d, "pattern_limit", json_true());
	s = build(rows_of(d, NULL));
	cr_assert(eq_text(json_object_get(rule(&s, 0), "error"),
			  "{\"status\":\"blocked\"}"));
	cassette_set_clear(&s);
}

Test(cassette_write, a_pass_without_result_replays_null)
{
	struct cassette_set s = build(
		rows_of(decision(1, "lookup", "pass", NULL, false), NULL));
	const json_t *c = json_array_get(s.calls, 0);

	cr_assert(json_is_null(json_object_get(c, "returned")));
	cr_assert(json_is_false(json_object_get(c, "is_error")));
	cr_assert(json_is_null(json_object_get(s.recordings, "call-000001")));
	cassette_set_clear(&s);
}

Test(cassette_write, a_null_among_other_results_of_a_tool_is_refused)
{
	json_t *rows = rows_of(decision(1, "t", "pass", NULL, false),
			       decision(2, "t", "mock", "1", false), NULL);
	struct cassette_set s;
	struct lf_why why = {{0}};

	cr_assert_eq(cassette_build(rows, "C1", NULL, &s, &why), LF_EINVAL_DOC);
	cr_assert(strstr(why.msg, "call 1 (t)"), "%s", why.msg);
	json_decref(rows);
}

Test(cassette_write, a_tool_name_no_rule_can_match_is_refused)
{
	json_t *rows = rows_of(decision(1, "a*b", "mock", "1", false), NULL);
	struct cassette_set s;
	struct lf_why why = {{0}};

	cr_assert_eq(cassette_build(rows, "C1", NULL, &s, &why), LF_EINVAL_DOC);
	cr_assert(strstr(why.msg, "call 1: tool 'a*b'"), "%s", why.msg);
	json_decref(rows);
}

/* ASSERT strips a rule's tool as Python's str.strip() does. */
Test(cassette_write, a_tool_name_with_blanks_at_its_ends_is_refused)
{
	static const char *const names[] = {" x", "x\t", "x\xc2\xa0",
					    "\xe3\x80\x80x"};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		json_t *rows = rows_of(
			decision(1, names[i], "mock", "1", false), NULL);
		struct cassette_set s;
		struct lf_why why = {{0}};

		cr_assert_eq(cassette_build(rows, "C1", NULL, &s, &why),
			     LF_EINVAL_DOC, "%zu", i);
		cr_assert(strstr(why.msg, "trimmed"), "%s", why.msg);
		json_decref(rows);
	}
}

Test(cassette_write, tools_with_a_star_go_after_exact_tools)
{
	struct cassette_set s =
		build(rows_of(decision(1, "get*", "mock", "1", false),
			      decision(2, "getx", "mock", "2", false), NULL));

	cr_assert_str_eq(str(rule(&s, 0), "tool"), "getx");
	cr_assert_str_eq(str(rule(&s, 1), "tool"), "get*");
	cassette_set_clear(&s);
}

Test(cassette_write, the_mocks_load_in_ledgerfs_with_their_recordings)
{
	struct cassette_set s = build(
		rows_of(decision(1, "a", "pass", NULL, false),
			result(1, "target_reported", "{\"x\":1.5}", false),
			decision(2, "a", "pass", NULL, false),
			result(2, "target_reported", "\"two\"", true),
			decision(3, "b", "mock", "null", false), NULL));
	struct lf_why why = {{0}};
	struct mocks *m = NULL;
	json_t *doc = doc_parse(s.mocks_yaml, strlen(s.mocks_yaml), &why);

	cr_assert_not_null(doc, "%s", why.msg);
	json_object_del(doc, "cassette_dir");
	json_object_set(doc, "cassettes", s.recordings);
	cr_assert_eq(mocks_load(doc, &m, &why), LF_OK, "%s", why.msg);
	mocks_free(m);
	json_decref(doc);
	cassette_set_clear(&s);
}

/* Strings YAML would fold, refuse or retype, and floats without a dot. */
Test(cassette_write, yaml_values_read_back_as_the_json_they_were)
{
	static const char *const values[] = {
		"\"yes\"",
		"\"1e3\"",
		"\"<<\"",
		"\"a: b # c\"",
		"\"\\u0085 nel \\u2028 ls \\u2029 ps \\ufeff bom\"",
		"\"\\u0001\\u001f\\u007f\\u009f\\ufffe\"",
		"\"tab\\tnl\\ncr\\r\\\"q\\\" back\\\\\"",
		"\"caf\\u00e9 \\ud83d\\ude00\"",
		"1e22",
		"-0.0",
		"0.1",
		"1.7976931348623157e308",
		"12345678901234",
		"{\"k\": [true, false, null, {}, []], \"~\": \"null\"}",
	};
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		json_t *v = json_loads(values[i], JSON_DECODE_ANY, NULL), *back;
		struct lf_why why = {{0}};
		char *text = NULL, *doc;
		size_t cap = 0;
		FILE *f = open_memstream(&text, &cap);

		cr_assert_not_null(v, "%s", values[i]);
		fputs("v: ", f);
		cr_assert_eq(cassette_yaml_value(f, v), 0);
		fclose(f);
		back = doc_parse(text, strlen(text), &why);
		cr_assert_not_null(back, "%s: %s", text, why.msg);
		cr_assert(json_equal(json_object_get(back, "v"), v), "%s",
			  text);
		/* JSON readers agree: the flow value is JSON text. */
		doc = text + 3;
		json_decref(back);
		back = json_loads(doc, JSON_DECODE_ANY, NULL);
		cr_assert(back && json_equal(back, v), "json: %s", doc);
		json_decref(back);
		json_decref(v);
		free(text);
	}
}

Test(cassette_write, replay_policy_turns_passes_into_mocks_and_keeps_the_rest)
{
	json_t *p = json_loads(
		"{\"interactions\":[{\"match\":\"lookup_*\",\"mode\":\" Pass\","
		"\"exec\":{\"argv\":[\"x\"]}},{\"match\":\"rm\",\"mode\":"
		"\"block\"},{\"match\":\"s\",\"mode\":\"mock\",\"mock\":1}],"
		"\"default\":{\"mode\":\"passthrough\"},\"cassettes\":{}}",
		0, NULL);
	struct lf_why why = {{0}};
	json_t *r = cassette_replay_policy(p, &why);
	json_t *rules = json_object_get(r, "interactions");

	cr_assert_str_eq(str(json_array_get(rules, 0), "mode"), "mock");
	cr_assert_null(json_object_get(json_array_get(rules, 0), "exec"));
	cr_assert_str_eq(str(json_array_get(rules, 1), "mode"), "block");
	cr_assert_str_eq(str(json_array_get(rules, 2), "mode"), "mock");
	cr_assert_str_eq(str(json_object_get(r, "default"), "mode"), "mock");
	cr_assert_null(json_object_get(r, "cassettes"));
	json_decref(p);
	json_decref(r);
}

/* ---- comparing a re-run ---- */

static json_t *calls_of(json_t *rows)
{
	struct lf_why why = {{0}};
	json_t *c = cassette_calls(rows, &why);

	cr_assert_not_null(c, "%s", why.msg);
	json_decref(rows);
	return c;
}

static json_t *recorded(void)
{
	return calls_of(rows_of(decision(1, "a", "pass", NULL, false),
				result(1, "target_reported", "7", false),
				decision(2, "b", "mock", "{\"m\":1}", false),
				NULL));
}

Test(cassette_compare, a_rerun_with_the_same_calls_and_replies_is_the_same)
{
	json_t *e = recorded(), *a;
	struct cassette_diff d;
	char *line;

	/* The re-run's replies come from mocks: the modes may differ. */
	a = calls_of(rows_of(decision(1, "a", "mock", "7", false),
			     decision(2, "b", "mock", "{\"m\":1}", false),
			     NULL));
	cassette_compare(e, a, &d);
	cr_assert(d.same);
	line = cassette_diff_line(&d);
	cr_assert_str_eq(line, "same: 2 calls, same tools, args and replies");
	free(line);
	cassette_diff_clear(&d);
	json_decref(e);
	json_decref(a);
}

Test(cassette_compare, the_first_differing_tool_is_named_with_both_sides)
{
	json_t *e = recorded(), *a;
	struct cassette_diff d;
	char *line;

	a = calls_of(rows_of(decision(1, "a", "mock", "7", false),
			     decision(2, "z", "mock", "{\"m\":1}", false),
			     NULL));
	cassette_compare(e, a, &d);
	cr_assert_not(d.same);
	cr_assert_str_eq(d.what, "call");
	cr_assert_eq(d.sequence, 2);
	line = cassette_diff_line(&d);
	cr_assert_str_eq(line, "differs at call 2: expected tool \"b\" args "
			       "{\"n\":2}; actual tool \"z\" args {\"n\":2}");
	free(line);
	cassette_diff_clear(&d);
	json_decref(e);
	json_decref(a);
}

Test(cassette_compare, differing_args_are_a_differing_call)
{
	json_t *e = recorded(), *a, *d1 = decision(1, "a", "mock", "7", false);
	struct cassette_diff d;

	json_object_set_new(d1, "args", json_pack("{s:i}", "n", 9));
	a = calls_of(rows_of(d1, NULL));
	cassette_compare(e, a, &d);
	cr_assert_str_eq(d.what, "call");
	cr_assert_eq(d.sequence, 1);
	cassette_diff_clear(&d);
	json_decref(e);
	json_decref(a);
}

Test(cassette_compare, a_differing_reply_is_named)
{
	json_t *e = recorded(), *a;
	struct cassette_diff d;
	char *line;

	a = calls_of(rows_of(decision(1, "a", "mock", "8", true), NULL));
	cassette_compare(e, a, &d);
	cr_assert_str_eq(d.what, "reply");
	line = cassette_diff_line(&d);
	cr_assert_str_eq(line, "differs at call 1: reply: expected returned 7 "
			       "is_error false; actual returned 8 is_error "
			       "true");
	free(line);
	cassette_diff_clear(&d);
	json_decref(e);
	json_decref(a);
}

Test(cassette_compare, missing_and_extra_calls_are_named)
{
	json_t *e = recorded(), *a;
	struct cassette_diff d;
	char *line;

	a = calls_of(rows_of(decision(1, "a", "mock", "7", false), NULL));
	cassette_compare(e, a, &d);
	cr_assert_str_eq(d.what, "missing");
	cr_assert_eq(d.sequence, 2);
	line = cassette_diff_line(&d);
	cr_assert_str_eq(line, "differs at call 2: expected tool \"b\" args "
			       "{\"n\":2}; actual no call");
	free(line);
	cassette_diff_clear(&d);
	cassette_compare(a, e, &d);
	cr_assert_str_eq(d.what, "extra");
	cassette_diff_clear(&d);
	json_decref(e);
	json_decref(a);
}
