/* SPDX-License-Identifier: MIT */
/*
 * test_mocks.c - the mock library: `when` operators, rule precedence,
 * scenarios and cursors, determinism, the fallback chain and coverage.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "doc.h"
#include "mocks.h"
#include "policy.h"

static json_t *yaml(const char *text)
{
	struct lf_why why = {{0}};
	json_t *v = doc_parse(text, strlen(text), &why);

	cr_assert_not_null(v, "%s: %s", text, why.msg);
	return v;
}

static struct mocks *load_text(const char *text)
{
	struct lf_why why = {{0}};
	struct mocks *m = NULL;
	json_t *doc = yaml(text);

	cr_assert_eq(mocks_load(doc, &m, &why), LF_OK, "%s", why.msg);
	json_decref(doc);
	return m;
}

static void refused(const char *text, const char *want)
{
	struct lf_why why = {{0}};
	struct mocks *m = NULL;
	json_t *doc = yaml(text);

	cr_assert_eq(mocks_load(doc, &m, &why), LF_EINVAL_DOC, "accepted: %s",
		     text);
	cr_assert_null(m);
	cr_assert_str_eq(why.msg, want);
	json_decref(doc);
}

/* Resolve tool with args (JSON text) and return the new result. */
static struct mock_result resolve(const struct mocks *m, struct mocks_state *st,
				  const char *case_id, const char *tool,
				  const char *args, const json_t *rule)
{
	struct lf_why why = {{0}};
	struct mock_result r;
	json_t *a = json_loads(args, 0, NULL);

	cr_assert_not_null(a, "%s", args);
	cr_assert_eq(
		mocks_resolve(m, st, case_id, tool, a, rule, NULL, &r, &why),
		LF_OK, "%s", why.msg);
	json_decref(a);
	return r;
}

/* The compact, key-sorted text of r.returned; the result is released. */
static char *returned_text(struct mock_result *r)
{
	char *s = json_dumps(r->returned,
			     JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY);

	mocks_result_clear(r);
	return s;
}

static void expect(const struct mocks *m, struct mocks_state *st,
		   const char *case_id, const char *tool, const char *args,
		   const char *want)
{
	struct mock_result r = resolve(m, st, case_id, tool, args, NULL);
	char *got = returned_text(&r);

	cr_assert_str_eq(got, want, "%s %s", tool, args);
	free(got);
}

/* Does a single `when` entry (YAML flow) fit args? */
static bool fits(const char *when, const char *args)
{
	char text[512];
	struct mocks *m;
	struct mock_result r;
	bool hit;

	snprintf(text, sizeof(text),
		 "version: 1\nmocks:\n  - tool: t\n    when: %s\n"
		 "    response: hit\n",
		 when);
	m = load_text(text);
	r = resolve(m, NULL, "c", "t", args, NULL);
	hit = r.mock_rule == 0;
	mocks_result_clear(&r);
	mocks_free(m);
	return hit;
}

/* ASSERT loads yaml.safe_load(...) or {}: a false document is empty. */
Test(mocks, a_false_document_is_an_empty_library_as_assert_loads_it)
{
	static const char *const docs[] = {
		"", "# nothing\n", "~\n", "false\n", "0\n", "''\n", "[]\n"};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct mocks *m = load_text(docs[i]);
		struct mock_result r = resolve(m, NULL, "c", "t", "{}", NULL);

		cr_assert_eq(r.mock_rule, -1, "%s", docs[i]);
		mocks_result_clear(&r);
		mocks_free(m);
	}
	refused("[1]\n", "mock file must be a mapping, got list");
}

Test(mocks, every_operator_fits_as_specified)
{
	static const struct {
		const char *when, *args;
		bool fits;
	} t[] = {
		{"{a: 5}", "{\"a\": 5}", true},
		{"{a: 5}", "{\"a\": 6}", false},
		{"{a: {eq: x}}", "{\"a\": \"x\"}", true},
		{"{a: {eq: x}}", "{\"a\": \"y\"}", false},
		{"{a: {ne: x}}", "{\"a\": \"y\"}", true},
		{"{a: {ne: x}}", "{\"a\": \"x\"}", false},
		{"{a: {not: x}}", "{\"a\": \"y\"}", true},
		{"{a: {not: x}}", "{\"a\": \"x\"}", false},
		{"{a: {gt: 100}}", "{\"a\": 150}", true},
		{"{a: {gt: 100}}", "{\"a\": 100}", false},
		{"{a: {gt: 100}}", "{\"a\": 100.5}", true},
		{"{a: {gte: 100}}", "{\"a\": 100}", true},
		{"{a: {gte: 100}}", "{\"a\": 99}", false},
		{"{a: {ge: 1.5}}", "{\"a\": 1.5}", true},
		{"{a: {lt: 0}}", "{\"a\": -1}", true},
		{"{a: {lt: 0}}", "{\"a\": 0}", false},
		{"{a: {lte: 0}}", "{\"a\": 0}", true},
		{"{a: {le: 0}}", "{\"a\": 0.1}", false},
		{"{a: {contains: ell}}", "{\"a\": \"hello\"}", true},
		{"{a: {contains: xyz}}", "{\"a\": \"hello\"}", false},
		{"{a: {contains: 2}}", "{\"a\": [1, 2.0, 3]}", true},
		{"{a: {contains: 4}}", "{\"a\": [1, 2, 3]}", false},
		{"{a: {contains: k}}", "{\"a\": {\"k\": 1}}", true},
		{"{a: {contains: z}}", "{\"a\": {\"k\": 1}}", false},
		{"{a: {contains: 1}}", "{\"a\": \"x1y\"}", true},
		{"{a: {contains: true}}", "{\"a\": [1]}", true},
		{"{a: {regex: '^ab+c$'}}", "{\"a\": \"abbc\"}", true},
		{"{a: {regex: 'b+'}}", "{\"a\": \"xxbxx\"}", true},
		{"{a: {regex: '^b'}}", "{\"a\": \"ab\"}", false},
		{"{a: {regex: '1'}}", "{\"a\": 1}", false},
		{"{a: {in: [x, 2]}}", "{\"a\": 2.0}", true},
		{"{a: {in: [x, 2]}}", "{\"a\": \"y\"}", false},
		{"{a: {any: true}}", "{\"a\": null}", true},
		{"{a: {any: true}}", "{\"b\": 1}", false},
		{"{a: {absent: true}}", "{\"b\": 1}", true},
		{"{a: {absent: true}}", "{\"a\": 1}", false},
		{"{a: {absent: false}}", "{\"a\": 1}", true},
		{"{a: {absent: false}}", "{}", false},
		{"{a: {eq: {x: 1}}}", "{\"a\": {\"x\": 1}}", true},
		{"{a: {' GT ': 1}}", "{\"a\": 2}", true},
		{"{a: {any: false}}", "{\"a\": 0}", true},
		{"{a: {absent: 0}}", "{\"a\": 0}", true},
		{"{a: [1, {b: 2}]}", "{\"a\": [1.0, {\"b\": 2}]}", true},
		{"{a: 1, b: 2}", "{\"a\": 1, \"b\": 3}", false},
		{"{a: 1, b: 2}", "{\"a\": 1, \"b\": 2}", true},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_eq(fits(t[i].when, t[i].args), t[i].fits,
			     "when %s with %s", t[i].when, t[i].args);
}

Test(mocks, missing_argument_fails_every_operator_but_absent)
{
	static const char *const ops[] = {
		"{a: 1}",	    "{a: null}",
		"{a: {eq: null}}",  "{a: {ne: 1}}",
		"{a: {not: 1}}",    "{a: {gt: 0}}",
		"{a: {gte: 0}}",    "{a: {ge: 0}}",
		"{a: {lt: 0}}",	    "{a: {lte: 0}}",
		"{a: {le: 0}}",	    "{a: {contains: x}}",
		"{a: {regex: ''}}", "{a: {in: [null]}}",
		"{a: {any: true}}", "{a: {absent: false}}",
	};
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		cr_assert_not(fits(ops[i], "{\"b\": 1}"),
			      "%s fit a missing arg", ops[i]);
	cr_assert(fits("{a: {absent: true}}", "{\"b\": 1}"));
}

/* Only what a rule is tried on can fail; nothing fits, nothing moves. */
static const char *fit_error(const char *when, const char *args)
{
	static struct lf_why why;
	char text[512];
	struct mocks *m;
	struct mock_result r;
	json_t *a = json_loads(args, 0, NULL);

	snprintf(text, sizeof(text),
		 "mocks:\n  - {tool: t, when: %s, response: 1}\n", when);
	m = load_text(text);
	cr_assert_eq(mocks_resolve(m, NULL, "c", "t", a, NULL, NULL, &r, &why),
		     LF_EINVAL_JSON, "%s with %s", when, args);
	json_decref(a);
	mocks_free(m);
	return why.msg;
}

Test(mocks, comparison_on_a_non_number_is_an_error_worded_as_assert)
{
	cr_assert_str_eq(fit_error("{a: {gt: 1}}", "{\"a\": \"5\"}"),
			 "operator 'gt' needs numeric operands, got '5' and 1");
	cr_assert_str_eq(
		fit_error("{a: {LTE: 1.5}}", "{\"a\": null}"),
		"operator 'lte' needs numeric operands, got None and 1.5");
	cr_assert_str_eq(
		fit_error("{a: {lt: 1}}", "{\"a\": false}"),
		"operator 'lt' needs numeric operands, got False and 1");
	cr_assert_str_eq(
		fit_error("{a: {ge: 1}}",
			  "{\"a\": [2, \"it's\", {\"k\": 1e20}]}"),
		"operator 'ge' needs numeric operands, got [2, \"it's\", {'k': 1e+20}] and 1");
	cr_assert_str_eq(fit_error("{a: {contains: 1}}", "{\"a\": 1}"),
			 "'contains' needs a string/list/mapping, got int");
	cr_assert_str_eq(fit_error("{a: {contains: [1]}}", "{\"a\": {}}"),
			 "unhashable type: 'list'");
}

Test(mocks, numbers_compare_by_value_two_equals_two_point_zero)
{
	cr_assert(fits("{a: 2}", "{\"a\": 2.0}"));
	cr_assert(fits("{a: 2.0}", "{\"a\": 2}"));
	cr_assert(fits("{a: {in: [2.0]}}", "{\"a\": 2}"));
	cr_assert_not(fits("{a: 2}", "{\"a\": 2.5}"));
}

Test(mocks, true_equals_one_as_in_python)
{
	cr_assert(fits("{a: true}", "{\"a\": 1}"));
	cr_assert(fits("{a: 1}", "{\"a\": true}"));
	cr_assert(fits("{a: false}", "{\"a\": 0.0}"));
	cr_assert(fits("{a: {in: [1, 2]}}", "{\"a\": true}"));
	cr_assert(fits("{a: {contains: 1}}", "{\"a\": [true]}"));
	cr_assert_not(fits("{a: null}", "{\"a\": 0}"));
	cr_assert_not(fits("{a: {ne: 1}}", "{\"a\": true}"));
}

Test(mocks, object_key_order_never_matters)
{
	cr_assert(fits("{a: {eq: {x: 1, y: [1, 2]}}}",
		       "{\"a\": {\"y\": [1, 2], \"x\": 1}}"));
	cr_assert_not(fits("{a: {eq: {x: 1, y: [1, 2]}}}",
			   "{\"a\": {\"y\": [2, 1], \"x\": 1}}"));
}

Test(mocks, slash_keys_are_plain_argument_names)
{
	cr_assert(fits("{/customer/id: 42}", "{\"/customer/id\": 42}"));
	cr_assert_not(
		fits("{/customer/id: 42}", "{\"customer\": {\"id\": 42}}"));
}

Test(mocks, unknown_one_key_matcher_is_refused)
{
	refused("mocks:\n  - {tool: t, when: {a: {nonsense: 1}}, response: 1}\n",
		"mocks[0].when.a: unknown matcher operator 'nonsense'; supported: "
		"['absent', 'any', 'contains', 'eq', 'ge', 'gt', 'gte', 'in', 'le', "
		"'lt', 'lte', 'ne', 'not', 'regex']");
	refused("mocks:\n  - {tool: t, when: {a: {x: 1, b: 2}}, response: 1}\n",
		"mocks[0].when.a: an operator matcher takes exactly one key, got "
		"['b', 'x']; use a plain value for exact match");
	refused("mocks:\n  - {tool: t, when: {a: {}}, response: 1}\n",
		"mocks[0].when.a: an operator matcher takes exactly one key, got "
		"[]; use a plain value for exact match");
}

Test(mocks, operands_are_checked_at_load)
{
	refused("mocks:\n  - {tool: t, when: {a: {gt: x}}, response: 1}\n",
		"mocks[0].when.a.gt: operand must be a number");
	{
		struct lf_why why = {{0}};
		struct mocks *m = NULL;
		json_t *doc = yaml("mocks:\n  - {tool: t, when: {a: {regex: "
				   "'('}}, response: 1}\n");

		cr_assert_eq(mocks_load(doc, &m, &why), LF_EINVAL_DOC);
		cr_assert(
			!strncmp(why.msg,
				 "mocks[0].when.a.regex: invalid regex: ", 38),
			"%s", why.msg);
		json_decref(doc);
	}
	refused("mocks:\n  - {tool: t, when: {a: {in: x}}, response: 1}\n",
		"mocks[0].when.a.in: 'in' needs a list of allowed values");
	refused("mocks:\n  - {tool: t, when: [a], response: 1}\n",
		"mocks[0].when must be a mapping, got list");
}

Test(mocks, rule_shape_is_checked_at_load)
{
	refused("version: 2\nmocks: []\n",
		"version: unsupported mock file version; supported: [1]");
	refused("mocks:\n  - {tool: t, respones: 1}\n",
		"mocks[0]: unknown key 'respones'");
	refused("mocks:\n  - {tool: t}\n",
		"mocks[0]: inline mock for 't' declares neither `response:` nor `error:`");
	refused("mocks:\n  - {response: 1}\n", "mocks[0] is missing `tool:`");
	refused("mocks:\n  - {tool: 'a*b', response: 1}\n",
		"mocks[0].tool: '*' is a wildcard only alone, at the start or at the end: 'a*b'");
	refused("mocks:\n  - {tool: t, case_id: 'c**', response: 1}\n",
		"mocks[0].case_id: only one '*' is allowed: 'c**'");
	refused("mocks:\n  - {tool: t, responses: []}\n",
		"mocks[0].scenario: a scenario mock needs `scenario:`");
	refused("mocks:\n  - {tool: t, scenario: s, responses: []}\n",
		"mocks[0].responses: must be a non-empty list");
	refused("mocks:\n  - {tool: t, backend: scenario, response: 1}\n",
		"mocks[0].scenario: a scenario mock needs `scenario:`");
	refused("mocks:\n  - {tool: t, scenario: s, responses: [{sets_state: x}]}\n",
		"mocks[0].responses[0]: declares neither `response:` nor `error:`");
	refused("mocks:\n  - {tool: t, scenario: s, responses: [{reply: 1}]}\n",
		"mocks[0].responses[0]: unknown key 'reply'");
	refused("mocks:\n  - {tool: t, backend: contract, response: 1}\n",
		"mocks[0]: backend 'contract' is not implemented");
	refused("mocks:\n  - {tool: t, backend: wiremock, response: 1}\n",
		"mocks[0]: mock for 't' asks for unknown backend 'wiremock'; "
		"available: ['contract', 'inline', 'replay', 'scenario']");
	refused("mocks:\n  - {tool: t, overrides: [{path: a, value: 1}]}\n",
		"mocks[0]: replay mock for 't' needs a cassette dir or an inline "
		"`cassette:`");
	refused("mocks:\n  - {tool: t, cassette: 1, overrides: [{path: a}]}\n",
		"mocks[0].overrides[0]: needs a path and a value");
	refused("mocks: 5\n", "`mocks:` must be a list");
	refused("mock: []\n", "unknown top-level key 'mock'");
}

Test(mocks, when_state_and_sets_state_outside_a_scenario_are_unused)
{
	struct mocks *m = load_text(
		"mocks:\n  - {tool: t, when_state: later, sets_state: s, "
		"response: 1}\n");

	expect(m, NULL, "c", "t", "{}", "1");
	mocks_free(m);
}

Test(mocks, case_bound_beats_more_when_beats_file_order)
{
	struct mocks *m = load_text(
		"version: 1\nmocks:\n"
		"  - {tool: t, response: plain}\n"
		"  - {tool: t, response: plain-later}\n"
		"  - {tool: t, when: {a: 1}, response: one-when}\n"
		"  - {tool: t, when: {a: 1, b: 2}, response: two-when}\n"
		"  - {tool: t, case_id: case-vip, response: case-bound}\n");

	expect(m, NULL, "case-vip", "t", "{\"a\": 1, \"b\": 2}",
	       "\"case-bound\"");
	expect(m, NULL, "case-x", "t", "{\"a\": 1, \"b\": 2}", "\"two-when\"");
	expect(m, NULL, "case-x", "t", "{\"a\": 1}", "\"one-when\"");
	expect(m, NULL, "case-x", "t", "{}", "\"plain\"");
	mocks_free(m);
}

Test(mocks, case_id_is_a_pattern)
{
	struct mocks *m = load_text(
		"mocks:\n"
		"  - {tool: charge_card, case_id: 'case-fail*', error: {code: DECLINED}}\n"
		"  - {tool: charge_card, response: {status: charged}}\n");
	struct mock_result r;

	r = resolve(m, NULL, "case-fail-7", "charge_card", "{}", NULL);
	cr_assert(r.is_error);
	cr_assert_eq(r.mock_rule, 0);
	mocks_result_clear(&r);
	r = resolve(m, NULL, "case-ok-1", "charge_card", "{}", NULL);
	cr_assert_not(r.is_error);
	cr_assert_eq(r.mock_rule, 1);
	mocks_result_clear(&r);
	r = resolve(m, NULL, NULL, "charge_card", "{}", NULL);
	cr_assert_eq(r.mock_rule, 1);
	mocks_result_clear(&r);
	mocks_free(m);
}

static struct mocks *telecom(void)
{
	struct lf_why why = {{0}};
	struct mocks *m = NULL;
	json_t *doc =
		doc_load_file(TEST_DATA "/policy/telecom.mocks.yaml", &why);

	cr_assert_not_null(doc, "%s", why.msg);
	cr_assert_eq(mocks_load(doc, &m, &why), LF_OK, "%s", why.msg);
	json_decref(doc);
	return m;
}

Test(mocks, scenario_cursor_advances_then_the_last_step_repeats)
{
	struct mocks *m = telecom();
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;
	char *s;
	int i;

	r = resolve(m, st, "c", "resume_line", "{}", NULL);
	cr_assert_eq(r.step, 0);
	cr_assert_str_eq(r.scenario, "restore");
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"status\":\"resumed\"}");
	free(s);
	for (i = 0; i < 3; i++) {
		/* ASSERT reports the cursor, which keeps counting. */
		r = resolve(m, st, "c", "resume_line", "{}", NULL);
		cr_assert_eq(r.step, i + 1);
		s = returned_text(&r);
		cr_assert_str_eq(s, "{\"status\":\"already_active\"}");
		free(s);
	}
	mocks_state_free(st);
	mocks_free(m);
}

Test(mocks, sets_state_applies_before_the_response_returns)
{
	struct mocks *m = telecom();
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;

	r = resolve(m, st, "c", "resume_line", "{}", NULL);
	cr_assert_str_eq(r.scenario_state, "resumed");
	mocks_result_clear(&r);
	mocks_state_free(st);
	mocks_free(m);
}

Test(mocks, when_state_gates_a_rule)
{
	struct mocks *m = telecom();
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;

	r = resolve(m, st, "c", "get_line_status", "{}", NULL);
	cr_assert_eq(r.mock_rule, 5);
	cr_assert_str_eq(r.scenario_state, "start");
	mocks_result_clear(&r);
	expect(m, st, "c", "get_line_status", "{}", "{\"suspended\":true}");
	expect(m, st, "c", "resume_line", "{}", "{\"status\":\"resumed\"}");
	expect(m, st, "c", "get_line_status", "{}", "{\"suspended\":false}");
	/* Another case's state is its own. */
	{
		struct mocks_state *other = mocks_state_new();

		expect(m, other, "d", "get_line_status", "{}",
		       "{\"suspended\":true}");
		mocks_state_free(other);
	}
	mocks_state_free(st);
	mocks_free(m);
}

/*
 * ledgerfs-policy(5) MOCKS, Scenarios: the cursor is per (scenario, tool),
 * not per rule.
 */
Test(mocks, rules_of_one_scenario_and_tool_share_one_cursor)
{
	struct mocks *m = load_text(
		"mocks:\n"
		"  - tool: t\n    scenario: s\n    when_state: start\n"
		"    responses: [{response: a0, sets_state: mid}, "
		"{response: a1}]\n"
		"  - tool: t\n    scenario: s\n    when_state: mid\n"
		"    responses: [{response: b0}, {response: b1}, "
		"{response: b2}]\n");
	struct mocks_state *st = mocks_state_new();

	expect(m, st, "c", "t", "{}", "\"a0\"");
	expect(m, st, "c", "t", "{}", "\"b1\"");
	expect(m, st, "c", "t", "{}", "\"b2\"");
	expect(m, st, "c", "t", "{}", "\"b2\"");
	mocks_state_free(st);
	mocks_free(m);
}

Test(mocks, one_response_scenario_rules_move_the_shared_cursor)
{
	struct mocks *m = load_text(
		"mocks:\n"
		"  - {tool: t, scenario: s, when_state: start, response: a, "
		"sets_state: mid}\n"
		"  - tool: t\n    scenario: s\n    sets_state: ignored\n"
		"    responses: [{response: b0}, {response: b1}, {response: b2}]\n");
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;

	expect(m, st, "c", "t", "{}", "\"a\"");
	r = resolve(m, st, "c", "t", "{}", NULL);
	cr_assert_eq(r.step, 1);
	cr_assert_str_eq(r.scenario_state, "mid");
	mocks_result_clear(&r);
	expect(m, st, "c", "t", "{}", "\"b2\"");
	mocks_state_free(st);
	mocks_free(m);
}

Test(mocks, replay_detail_is_asserts)
{
	struct mocks *m = load_text(
		"mocks:\n"
		"  - {tool: t, when: {b: 1, a: {any: 1}}, note: n, response: 1}\n"
		"  - {tool: t, scenario: s, responses: [{response: 2, sets_state: x}]}\n"
		"  - {tool: u, case_id: 'c*', cassette: {k: [1]}, overrides: "
		"[{path: k.0, value: 2}, {path: new.deep, value: 3}]}\n");
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;
	char *s;

	r = resolve(m, st, "c", "t", "{\"a\": 0, \"b\": 1}", NULL);
	s = json_dumps(r.replay, JSON_COMPACT);
	cr_assert_str_eq(s, "{\"mock_rule\":\"t\",\"backend\":\"inline\","
			    "\"matched_args\":[\"a\",\"b\"],\"note\":\"n\"}");
	free(s);
	mocks_result_clear(&r);
	r = resolve(m, st, "c", "t", "{}", NULL);
	s = json_dumps(r.replay, JSON_COMPACT);
	cr_assert_str_eq(s, "{\"scenario\":\"s\",\"step\":0,\"state\":\"s: "
			    "start -> x\",\"mock_rule\":\"t\",\"backend\":"
			    "\"scenario\"}");
	free(s);
	mocks_result_clear(&r);
	r = resolve(m, st, "c", "u", "{}", NULL);
	cr_assert_str_eq(r.source, "override");
	s = json_dumps(r.replay, JSON_COMPACT);
	cr_assert_str_eq(s, "{\"replay_origin\":\"inline\",\"overrides\":2,"
			    "\"mock_rule\":\"u\",\"backend\":\"replay\","
			    "\"matched_case_id\":\"c*\"}");
	free(s);
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"k\":[2],\"new\":{\"deep\":3}}");
	free(s);
	mocks_state_free(st);
	mocks_free(m);
}

Test(mocks, replaying_the_same_calls_from_fresh_states_ends_equal)
{
	static const char *const calls[] = {
		"get_line_status", "resume_line",     "apply_bill_credit",
		"resume_line",	   "get_line_status", "charge_card",
	};
	static const char *const probes[] = {
		"resume_line",
		"get_line_status",
		"resume_line",
	};
	struct mocks *m = telecom();
	struct mocks_state *a = mocks_state_new(), *b = mocks_state_new();
	struct mock_result ra, rb;
	size_t i, n;

	for (n = 0; n < 2; n++) {
		struct mocks_state *st = n ? b : a;

		for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
			ra = resolve(m, st, "c", calls[i], "{\"amount\": 5}",
				     NULL);
			mocks_result_clear(&ra);
		}
	}
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		ra = resolve(m, a, "c", probes[i], "{}", NULL);
		rb = resolve(m, b, "c", probes[i], "{}", NULL);
		cr_assert(json_equal(ra.returned, rb.returned));
		cr_assert_eq(ra.step, rb.step);
		cr_assert_eq(ra.mock_rule, rb.mock_rule);
		cr_assert_str_eq(ra.scenario_state, rb.scenario_state);
		mocks_result_clear(&ra);
		mocks_result_clear(&rb);
	}
	mocks_state_free(a);
	mocks_state_free(b);
	mocks_free(m);
}

Test(mocks,
     fallback_is_policy_payload_then_cassette_then_placeholder_all_inline)
{
	struct mocks *m =
		load_text("mocks:\n  - {tool: covered, response: 1}\n");
	json_t *inl = yaml("{match: x, mode: mock, poison: {status: sent}}");
	json_t *cas = yaml("{match: x, mode: replay, cassette: {bills: [{d: "
			   "plan}]}, overrides: [{path: bills.0.d, value: "
			   "INJECTED}]}");
	json_t *rep = yaml("{match: x, mode: replay, cassette: {a: 1}}");
	json_t *none = yaml("{match: x, mode: mock}");
	struct mock_result r;
	char *s;

	r = resolve(m, NULL, "c", "x", "{}", inl);
	cr_assert_str_eq(r.source, "inline");
	cr_assert_eq(r.mock_rule, -1);
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"status\":\"sent\"}");
	free(s);
	r = resolve(m, NULL, "c", "x", "{}", cas);
	cr_assert_str_eq(r.source, "override");
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"bills\":[{\"d\":\"INJECTED\"}]}");
	free(s);
	r = resolve(m, NULL, "c", "x", "{}", rep);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	r = resolve(m, NULL, "c", "x", "{}", none);
	cr_assert_str_eq(r.source, "inline");
	cr_assert_not(r.is_error);
	cr_assert_eq(r.mock_rule, -1);
	cr_assert_eq(r.step, -1);
	cr_assert_null(r.scenario);
	s = returned_text(&r);
	cr_assert_str_eq(
		s,
		"{\"note\":\"No mock payload configured for x; sandbox returned a placeholder.\",\"status\":\"ok\"}");
	free(s);
	/* No library and no policy rule at all: still the placeholder. */
	r = resolve(NULL, NULL, "c", "y", "{}", NULL);
	cr_assert_str_eq(r.source, "inline");
	mocks_result_clear(&r);
	/* A fitting mock rule beats the policy's own payload. */
	r = resolve(m, NULL, "c", "covered", "{}", inl);
	cr_assert_str_eq(r.source, "inline");
	cr_assert_eq(r.mock_rule, 0);
	s = returned_text(&r);
	cr_assert_str_eq(s, "1");
	free(s);
	json_decref(inl);
	json_decref(cas);
	json_decref(rep);
	json_decref(none);
	mocks_free(m);
}

Test(mocks, error_payload_is_an_error_still_mocked)
{
	struct mocks *m = telecom();
	struct mock_result r;
	char *s;

	r = resolve(m, NULL, "c", "apply_bill_credit", "{\"amount\": 150}",
		    NULL);
	cr_assert(r.is_error);
	cr_assert_str_eq(r.source, "inline");
	cr_assert_eq(r.mock_rule, 0);
	s = returned_text(&r);
	cr_assert(strstr(s, "CREDIT_LIMIT_EXCEEDED"), "%s", s);
	free(s);
	r = resolve(m, NULL, "c", "apply_bill_credit", "{\"amount\": 50}",
		    NULL);
	cr_assert_not(r.is_error);
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"status\":\"credit_applied\"}");
	free(s);
	mocks_free(m);
}

Test(mocks, cassette_rules_report_replay_or_override)
{
	struct mocks *m = load_text(
		"mocks:\n  - {tool: a, cassette: {x: [1, 2]}}\n"
		"  - {tool: b, cassette: {x: [1, 2]}, overrides: [{path: x.1, "
		"value: {y: z}}]}\n");
	struct mock_result r;
	char *s;

	r = resolve(m, NULL, "c", "a", "{}", NULL);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	r = resolve(m, NULL, "c", "b", "{}", NULL);
	cr_assert_str_eq(r.source, "override");
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"x\":[1,{\"y\":\"z\"}]}");
	free(s);
	mocks_free(m);
}

Test(mocks, empty_overrides_are_a_replay_not_an_override)
{
	struct mocks *m = load_text(
		"mocks:\n  - {tool: a, cassette: {x: 1}, overrides: []}\n");
	json_t *rule = yaml("{mode: mock, cassette: {x: 1}, overrides: []}");
	struct mock_result r;

	r = resolve(m, NULL, "c", "a", "{}", NULL);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	r = resolve(m, NULL, "c", "b", "{}", rule);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	json_decref(rule);
	mocks_free(m);
}

Test(mocks, overrides_change_a_copy_and_fail_as_python_fails)
{
	json_t *c = yaml("{bills: [{charges: [{description: plan}]}]}");
	json_t *o = yaml("[{path: bills.0.charges.0.description, value: X}]");
	json_t *bad = yaml("[{path: bills.1, value: X}]");
	struct lf_why why = {{0}};
	json_t *r = mocks_apply_overrides(c, o, &why);

	cr_assert_not_null(r, "%s", why.msg);
	cr_assert_str_eq(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(
					json_array_get(
						json_object_get(r, "bills"), 0),
					"charges"),
				0),
			"description")),
		"X");
	cr_assert_str_eq(
		json_string_value(json_object_get(
			json_array_get(
				json_object_get(
					json_array_get(
						json_object_get(c, "bills"), 0),
					"charges"),
				0),
			"description")),
		"plan");
	cr_assert_null(mocks_apply_overrides(c, bad, &why));
	cr_assert_str_eq(why.msg, "list assignment index out of range");
	json_decref(r);
	json_decref(c);
	json_decref(o);
	json_decref(bad);
	{
		static const char *const t[][3] = {
			{"{a: [1]}", "[{path: a.x, value: 1}]",
			 "invalid literal for int() with base 10: 'x'"},
			{"{a: [1]}", "[{path: a.-1, value: 2}]", NULL},
			{"{a: s}", "[{path: a.b, value: 1}]",
			 "'str' object does not support item assignment"},
			{"{a: 1}", "[{path: a.b.c, value: 1}]",
			 "'int' object has no attribute 'setdefault'"},
			{"{}", "[{path: x.y, value: 1}]", NULL},
		};
		size_t i;

		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			json_t *base = yaml(t[i][0]), *ov = yaml(t[i][1]);
			json_t *out = mocks_apply_overrides(base, ov, &why);

			if (t[i][2]) {
				cr_assert_null(out, "%s", t[i][1]);
				cr_assert_str_eq(why.msg, t[i][2]);
			} else {
				cr_assert_not_null(out, "%s: %s", t[i][1],
						   why.msg);
			}
			json_decref(out);
			json_decref(base);
			json_decref(ov);
		}
	}
}

Test(mocks, policy_payload_provenance_is_derived_as_assert_derives_it)
{
	json_t *cassettes = yaml("{x: {rec: 1}, 'a b': 2}");
	json_t *declared =
		yaml("{match: x, mode: mock, mock_source: ' Replay ',"
		     " mock: {m: 1}}");
	json_t *ov_only = yaml("{match: x, mode: mock, overrides: "
			       "[{path: rec, value: 9}]}");
	json_t *stale = yaml("{match: x, mode: mock, mock_source: poison, "
			     "mock: 3}");
	struct lf_why why = {{0}};
	struct mock_result r;
	char *s;

	/* Declared replay, no recording under that tool: the payload. */
	cr_assert_eq(mocks_resolve(NULL, NULL, "c", "y", NULL, declared,
				   cassettes, &r, &why),
		     LF_OK);
	cr_assert_str_eq(r.source, "inline");
	s = json_dumps(r.replay, JSON_COMPACT);
	cr_assert_str_eq(s, "{\"source\":\"cassette_file\",\"overrides\":0}");
	free(s);
	mocks_result_clear(&r);
	/* Overrides on the recording named after the tool. */
	cr_assert_eq(mocks_resolve(NULL, NULL, "c", "x", NULL, ov_only,
				   cassettes, &r, &why),
		     LF_OK);
	cr_assert_str_eq(r.source, "override");
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"rec\":9}");
	free(s);
	/* A recording exists, the stale declaration is ignored: replay. */
	cr_assert_eq(mocks_resolve(NULL, NULL, "c", "x", NULL, stale, cassettes,
				   &r, &why),
		     LF_OK);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	/* A tool name that is no safe file name, with a cassette folder. */
	cr_assert_eq(mocks_resolve(NULL, NULL, "c", "../x", NULL, stale,
				   cassettes, &r, &why),
		     LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "cassette name must be a single safe "
				  "filename stem, got '../x'");
	json_decref(cassettes);
	json_decref(declared);
	json_decref(ov_only);
	json_decref(stale);
}

Test(mocks, uncovered_lists_mock_rules_without_any_payload)
{
	struct lf_why why = {{0}};
	json_t *pol =
		doc_load_file(TEST_DATA "/policy/telecom.policy.yaml", &why);
	struct mocks *m = telecom();
	json_t *u = mocks_uncovered(pol, m, NULL);
	char *s = json_dumps(u, JSON_COMPACT);

	cr_assert_str_eq(s, "[\"interactions[7] 'reset_password'\"]");
	free(s);
	json_decref(u);
	mocks_free(m);
	json_decref(pol);
}

/*
 * What serves a call besides the mock library: the rule's overrides (of
 * the placeholder) and the policy's recording named after the tool, as
 * in ASSERT's example folder (lookup_customer_poisoned).
 */
Test(mocks, overrides_or_a_recording_named_after_the_tool_are_a_payload)
{
	json_t *pol = yaml("interactions:\n"
			   "  - {match: a, mode: mock, overrides: "
			   "[{path: x, value: 1}]}\n"
			   "  - {match: b, mode: mock, overrides: []}\n"
			   "  - {match: c, mode: mock}\n"
			   "  - {match: 'c*', mode: mock}\n"
			   "  - {match: d, mode: mock}\n");
	json_t *cassettes = json_pack("{s:{s:s}}", "c", "status", "ok");
	json_t *u = mocks_uncovered(pol, NULL, cassettes);
	char *s = json_dumps(u, JSON_COMPACT);

	cr_assert_str_eq(s, "[\"interactions[1] 'b'\",\"interactions[3] "
			    "'c*'\",\"interactions[4] 'd'\"]");
	free(s);
	json_decref(u);
	u = mocks_uncovered(pol, NULL, NULL);
	cr_assert_eq(json_array_size(u), 4);
	json_decref(u);
	json_decref(cassettes);
	json_decref(pol);
}

/* A rule that fits only some calls leaves the rest to the placeholder. */
Test(mocks, only_a_mock_rule_without_conditions_covers_a_policy_rule)
{
	static const struct {
		const char *rules;
		bool covered;
	} t[] = {
		{"{tool: charge, response: 1}", true},
		{"{tool: charge, case_id: 'fail*', response: 1}", false},
		{"{tool: charge, case_id: '*', response: 1}", true},
		{"{tool: charge, when: {amount: {gt: 100}}, response: 1}",
		 false},
		{"{tool: charge, scenario: s, when_state: on, response: 1}",
		 false},
		{"{tool: charge, scenario: s, response: 1}", true},
		{"{tool: charge, when: {a: 1}, response: 1}\n"
		 "  - {tool: 'ch*', response: 2}",
		 true},
	};
	json_t *pol = yaml("interactions:\n  - {match: charge, mode: mock}\n");
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct mocks *m;
		json_t *u;

		snprintf(text, sizeof(text), "mocks:\n  - %s\n", t[i].rules);
		m = load_text(text);
		u = mocks_uncovered(pol, m, NULL);
		cr_expect_eq(json_array_size(u), t[i].covered ? 0u : 1u, "%s",
			     t[i].rules);
		json_decref(u);
		mocks_free(m);
	}
	json_decref(pol);
}

Test(mocks, wildcard_policy_match_is_covered_only_by_same_pattern_or_star)
{
	static const struct {
		const char *tool;
		bool covered;
	} t[] = {
		{"send_message", false}, {"send_*", true}, {"*", true},
		{"*_message", false},	 {"other", false},
	};
	json_t *pol = yaml("interactions:\n  - {match: send_*, mode: mock}\n"
			   "  - {match: fax, mode: inject}\n"
			   "  - {match: p, mode: pass}\n");
	char text[128];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct mocks *m;
		json_t *u;

		snprintf(text, sizeof(text),
			 "mocks:\n  - {tool: '%s', response: 1}\n  - {tool: "
			 "'f*', response: 1}\n",
			 t[i].tool);
		m = load_text(text);
		u = mocks_uncovered(pol, m, NULL);
		cr_assert_eq(json_array_size(u), t[i].covered ? 0u : 1u,
			     "rule tool '%s'", t[i].tool);
		if (!t[i].covered)
			cr_assert_str_eq(
				json_string_value(json_array_get(u, 0)),
				"interactions[0] 'send_*'");
		json_decref(u);
		mocks_free(m);
	}
	json_decref(pol);
}

Test(mocks, cassette_file_ending_in_json_names_the_recording_itself)
{
	struct mocks *m = load_text(
		"cassettes: {foo: {status: ok}, bar.json: {x: 1}, bar: {x: 2}}\n"
		"mocks:\n"
		"  - {tool: a, cassette_file: foo.json}\n"
		"  - {tool: b, cassette_file: bar.json}\n");
	struct mocks_state *st = mocks_state_new();
	struct mock_result r;
	char *s;

	r = resolve(m, st, "c", "a", "{}", NULL);
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"status\":\"ok\"}");
	free(s);
	mocks_result_clear(&r);
	/* NAME.json.json is there: it wins. */
	r = resolve(m, st, "c", "b", "{}", NULL);
	s = returned_text(&r);
	cr_assert_str_eq(s, "{\"x\":1}");
	free(s);
	mocks_result_clear(&r);
	mocks_state_free(st);
	mocks_free(m);
	refused("cassettes: {foo: {status: ok}}\n"
		"mocks:\n  - {tool: a, cassette_file: baz.json}\n",
		"mocks[0]: replay cassette file not found for 'a': 'baz.json'");
}
