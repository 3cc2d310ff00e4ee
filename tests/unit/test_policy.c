/* SPDX-License-Identifier: MIT */
/*
 * test_policy.c - the mediation policy: mode spellings, matching, rule
 * order, the default, exact reason texts and load-time refusals.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

#include "doc.h"
#include "policy.h"

static struct policy *load_text(const char *text)
{
	struct lf_why why = {{0}};
	struct policy *p = NULL;
	json_t *doc = doc_parse(text, strlen(text), &why);

	cr_assert_not_null(doc, "%s", why.msg);
	cr_assert_eq(policy_load(doc, &p, &why), LF_OK, "%s", why.msg);
	json_decref(doc);
	return p;
}

static struct policy *load_file(const char *path)
{
	struct lf_why why = {{0}};
	struct policy *p = NULL;
	json_t *doc = doc_load_file(path, &why);

	cr_assert_not_null(doc, "%s: %s", path, why.msg);
	cr_assert_eq(policy_load(doc, &p, &why), LF_OK, "%s", why.msg);
	json_decref(doc);
	return p;
}

/* Load text expecting LF_EINVAL_DOC with exactly the reason want. */
static void refused(const char *text, const char *want)
{
	struct lf_why why = {{0}};
	struct policy *p = NULL;
	json_t *doc = doc_parse(text, strlen(text), &why);

	cr_assert_not_null(doc, "%s", why.msg);
	cr_assert_eq(policy_load(doc, &p, &why), LF_EINVAL_DOC, "accepted: %s",
		     text);
	cr_assert_null(p);
	cr_assert_str_eq(why.msg, want);
	json_decref(doc);
}

Test(policy, every_mode_spelling_maps_to_its_mode)
{
	static const struct {
		const char *spelling;
		enum lf_mode mode;
	} t[] = {
		{"pass", LF_MODE_PASS},	       {"pass_through", LF_MODE_PASS},
		{"passthrough", LF_MODE_PASS}, {"execute", LF_MODE_PASS},
		{"audit", LF_MODE_PASS},       {"mock", LF_MODE_MOCK},
		{"inline", LF_MODE_MOCK},      {"replay", LF_MODE_MOCK},
		{"poison", LF_MODE_MOCK},      {"inject", LF_MODE_MOCK},
		{"block", LF_MODE_BLOCK},      {"deny", LF_MODE_BLOCK},
		{"  Pass ", LF_MODE_PASS},     {"PASS_THROUGH", LF_MODE_PASS},
		{"Replay", LF_MODE_MOCK},      {"\tDENY\n", LF_MODE_BLOCK},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		enum lf_mode m = LF_MODE_PASS;
		struct policy *p;
		struct policy_decision d;
		json_t *doc;
		struct lf_why why;

		cr_assert_eq(policy_parse_mode(t[i].spelling, &m), 0, "'%s'",
			     t[i].spelling);
		cr_assert_eq(m, t[i].mode, "'%s'", t[i].spelling);
		/* And the same through a loaded document. */
		doc = json_pack("{s:[{s:s, s:s}]}", "interactions", "match",
				"t", "mode", t[i].spelling);
		cr_assert_eq(policy_load(doc, &p, &why), LF_OK, "%s", why.msg);
		policy_decide(p, "t", &d);
		cr_assert_eq(d.mode, t[i].mode, "'%s'", t[i].spelling);
		policy_free(p);
		json_decref(doc);
	}
	cr_assert_str_eq(policy_mode_name(LF_MODE_PASS), "pass");
	cr_assert_str_eq(policy_mode_name(LF_MODE_MOCK), "mock");
	cr_assert_str_eq(policy_mode_name(LF_MODE_BLOCK), "block");
}

Test(policy, unknown_mode_is_refused_naming_the_rule)
{
	enum lf_mode m;

	cr_assert_eq(policy_parse_mode("maybe", &m), -1);
	cr_assert_eq(policy_parse_mode("", &m), -1);
	cr_assert_eq(policy_parse_mode("pass through", &m), -1);
	refused("interactions:\n  - {match: a, mode: pass}\n"
		"  - {match: b, mode: maybe}\n",
		"interactions[1].mode: unknown mode 'maybe'");
	refused("default: {mode: allow}\n",
		"default.mode: unknown mode 'allow'");
	refused("default: allow\n", "default: unknown mode 'allow'");
}

Test(policy, first_matching_rule_wins)
{
	struct policy *p = load_text("interactions:\n"
				     "  - {match: send_message, mode: block}\n"
				     "  - {match: send_*, mode: mock}\n"
				     "  - {match: '*', mode: pass}\n");
	struct policy_decision d;

	policy_decide(p, "send_message", &d);
	cr_assert_eq(d.mode, LF_MODE_BLOCK);
	cr_assert_eq(d.rule_index, 0);
	policy_decide(p, "send_fax", &d);
	cr_assert_eq(d.mode, LF_MODE_MOCK);
	cr_assert_eq(d.rule_index, 1);
	policy_decide(p, "other", &d);
	cr_assert_eq(d.mode, LF_MODE_PASS);
	cr_assert_eq(d.rule_index, 2);
	policy_free(p);
}

Test(policy, match_is_exact_star_prefix_or_suffix)
{
	static const struct {
		const char *pattern, *tool;
		bool fits;
	} t[] = {
		{"lookup", "lookup", true},
		{"lookup", "lookup_x", false},
		{"lookup", "Lookup", false},
		{"lookup", "", false},
		{"*", "anything", true},
		{"*", "", true},
		{"lookup_*", "lookup_", true},
		{"lookup_*", "lookup_cust", true},
		{"lookup_*", "lookup", false},
		{"lookup_*", "xlookup_a", false},
		{"*_status", "_status", true},
		{"*_status", "line_status", true},
		{"*_status", "line_statusx", false},
		{"*_status", "status", false},
		{"a.b", "a.b", true},
		{"a.b", "axb", false},
		{"a?", "ab", false},
		{"[ab]", "a", false},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_eq(policy_match_tool(t[i].pattern, t[i].tool),
			     t[i].fits, "'%s' vs '%s'", t[i].pattern,
			     t[i].tool);
}

Test(policy, star_anywhere_else_is_refused_at_load_naming_the_rule)
{
	static const struct {
		const char *match, *why;
	} t[] = {
		{"a*b",
		 "interactions[1].match: '*' is a wildcard only alone, at the start or at the end: 'a*b'"},
		{"**", "interactions[1].match: only one '*' is allowed: '**'"},
		{"*a*",
		 "interactions[1].match: only one '*' is allowed: '*a*'"},
		{"", "interactions[1].match: required, a non-empty string"},
	};
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text),
			 "interactions:\n  - {match: ok, mode: pass}\n"
			 "  - {match: '%s', mode: pass}\n",
			 t[i].match);
		refused(text, t[i].why);
	}
	refused("interactions:\n  - {mode: pass}\n",
		"interactions[0].match: required, a non-empty string");
	refused("interactions:\n  - {match: 3, mode: pass}\n",
		"interactions[0].match: required, a non-empty string");
}

Test(policy, absent_default_blocks_with_the_exact_reason)
{
	struct policy *p = load_text("interactions: []\n");
	struct policy_decision d;

	policy_decide(p, "delete_account", &d);
	cr_assert_eq(d.mode, LF_MODE_BLOCK);
	cr_assert_eq(d.rule_index, -1);
	cr_assert_str_eq(d.matched, "<default>");
	cr_assert_str_eq(d.reason, "blocked by default mediation policy");
	cr_assert_null(d.rule);
	/* ASSERT's own default: {mode: block, note: deny unknown tool}. */
	cr_assert_str_eq(d.note, "deny unknown tool");
	policy_free(p);
	p = load_text("version: 1\ndefault: {}\n");
	policy_decide(p, "x", &d);
	cr_assert_str_eq(d.note, "deny unknown tool");
	policy_free(p);
	p = load_text("version: 1\n");
	policy_decide(p, "x", &d);
	cr_assert_eq(d.mode, LF_MODE_BLOCK);
	policy_free(p);
}

/* ASSERT loads yaml.safe_load(...) or {}: a false document is empty. */
Test(policy, a_false_document_is_an_empty_policy_that_blocks_as_assert_loads_it)
{
	static const char *const docs[] = {"",	     "# nothing\n", "~\n",
					   "null\n", "false\n",	    "0\n",
					   "''\n",   "[]\n"};
	struct policy_decision d;
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct policy *p = load_text(docs[i]);

		policy_decide(p, "lookup", &d);
		cr_assert_eq(d.mode, LF_MODE_BLOCK, "%s", docs[i]);
		cr_assert_str_eq(d.matched, "<default>");
		cr_assert_str_eq(d.note, "deny unknown tool");
		policy_free(p);
	}
	refused("[1]\n", "policy: the document must be a mapping");
	refused("yes\n", "policy: the document must be a mapping");
}

Test(policy, reason_and_matched_texts_are_exact)
{
	static const struct {
		const char *tool, *matched, *reason;
		enum lf_mode mode;
	} t[] = {
		{"p", "p", "allowed by mediation policy rule 'p'",
		 LF_MODE_PASS},
		{"m_x", "m_*", "mocked by mediation policy rule 'm_*'",
		 LF_MODE_MOCK},
		{"b", "b", "blocked by mediation policy rule 'b'",
		 LF_MODE_BLOCK},
	};
	static const struct {
		const char *mode, *reason;
	} d_t[] = {
		{"pass", "allowed by default mediation policy"},
		{"mock", "mocked by default mediation policy"},
		{"deny", "blocked by default mediation policy"},
	};
	struct policy *p =
		load_text("interactions:\n  - {match: p, mode: pass}\n"
			  "  - {match: m_*, mode: mock}\n"
			  "  - {match: b, mode: block}\n");
	struct policy_decision d;
	char text[64];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		policy_decide(p, t[i].tool, &d);
		cr_assert_eq(d.mode, t[i].mode);
		cr_assert_str_eq(d.matched, t[i].matched);
		cr_assert_str_eq(d.reason, t[i].reason);
	}
	policy_free(p);
	for (i = 0; i < sizeof(d_t) / sizeof(d_t[0]); i++) {
		snprintf(text, sizeof(text), "default: {mode: %s}\n",
			 d_t[i].mode);
		p = load_text(text);
		policy_decide(p, "anything", &d);
		cr_assert_str_eq(d.matched, "<default>");
		cr_assert_str_eq(d.reason, d_t[i].reason);
		cr_assert_null(d.rule);
		policy_free(p);
	}
}

Test(policy, note_is_recorded_but_never_in_the_reason)
{
	struct policy *p = load_text(
		"interactions:\n  - {match: send_message, mode: mock, "
		"note: irreversible, mock: {status: sent}}\n"
		"default: {mode: block, note: deny unknown tool}\n");
	struct policy_decision d;

	policy_decide(p, "send_message", &d);
	cr_assert_str_eq(d.note, "irreversible");
	cr_assert_str_eq(d.reason,
			 "mocked by mediation policy rule 'send_message'");
	cr_assert_null(strstr(d.reason, "irreversible"));
	policy_decide(p, "x", &d);
	cr_assert_str_eq(d.note, "deny unknown tool");
	cr_assert_str_eq(d.reason, "blocked by default mediation policy");
	policy_free(p);
}

Test(policy, match_not_name_is_shown_in_matched_and_reason)
{
	struct policy *p = load_text(
		"interactions:\n  - {match: lookup_*, name: lookups, mode: pass}\n"
		"  - {match: \"it's\", mode: pass}\n  - {match: plain}\n"
		"  - {match: noted, mode: pass, note: null}\n");
	struct policy_decision d;

	policy_decide(p, "lookup_customer", &d);
	cr_assert_str_eq(d.matched, "lookup_*");
	cr_assert_str_eq(d.reason,
			 "allowed by mediation policy rule 'lookup_*'");
	/* Python's repr() quotes a name holding ' with ". */
	policy_decide(p, "it's", &d);
	cr_assert_str_eq(d.reason, "allowed by mediation policy rule \"it's\"");
	/* A rule without a mode blocks, as ASSERT's rule.get("mode", "block"). */
	policy_decide(p, "plain", &d);
	cr_assert_eq(d.mode, LF_MODE_BLOCK);
	cr_assert_str_eq(d.note, "");
	/* str(None) */
	policy_decide(p, "noted", &d);
	cr_assert_str_eq(d.note, "None");
	policy_free(p);
}

Test(policy, yaml_and_json_forms_decide_identically)
{
	static const char *const tools[] = {
		"lookup_customer",   "lookup_",		"send_message",
		"apply_bill_credit", "charge_card",	"get_invoice",
		"resume_line",	     "get_line_status", "reset_password",
		"delete_account",    "unknown_tool",	"",
	};
	struct policy *y = load_file(TEST_DATA "/policy/telecom.policy.yaml");
	struct policy *j = load_file(TEST_DATA "/policy/telecom.policy.json");
	struct policy_decision a, b;
	size_t i;

	cr_assert(json_equal((json_t *)policy_doc(y), (json_t *)policy_doc(j)));
	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		policy_decide(y, tools[i], &a);
		policy_decide(j, tools[i], &b);
		cr_assert_eq(a.mode, b.mode, "%s", tools[i]);
		cr_assert_eq(a.rule_index, b.rule_index, "%s", tools[i]);
		cr_assert_str_eq(a.matched, b.matched, "%s", tools[i]);
		cr_assert_str_eq(a.reason, b.reason, "%s", tools[i]);
		cr_assert_eq(!a.note, !b.note, "%s", tools[i]);
		if (a.note)
			cr_assert_str_eq(a.note, b.note);
	}
	policy_decide(y, "lookup_customer", &a);
	cr_assert_str_eq(a.reason,
			 "allowed by mediation policy rule 'lookup_*'");
	policy_decide(y, "delete_account", &a);
	cr_assert_str_eq(a.reason,
			 "blocked by mediation policy rule 'delete_account'");
	policy_free(y);
	policy_free(j);
}

Test(policy, unknown_keys_are_refused_naming_them)
{
	refused("interactions:\n  - {match: a, mode: pass}\n"
		"  - {match: b, mode: pass}\n  - {match: c, mode: pass}\n"
		"  - {match: d, mdoe: pass}\n",
		"interactions[3]: unknown key 'mdoe'");
	refused("interaction: []\n", "unknown top-level key 'interaction'");
	refused("default: {mode: block, match: x}\n",
		"default: unknown key 'match'");
	refused("interactions:\n  - {match: a, mode: mock, cassette_file: x}\n",
		"interactions[0]: unknown key 'cassette_file'");
	refused("cassette_dir: c\n",
		"cassette_dir: cassette_dir must be resolved by ledgerctl before loading");
}

Test(policy, rule_shape_is_checked_at_load)
{
	refused("interactions: {match: a}\n", "interactions: must be a list");
	refused("interactions: [x]\n", "interactions[0]: must be a mapping");
	refused("- a\n", "policy: the document must be a mapping");
	refused("interactions:\n  - {match: a, mode: mock, overrides: 1}\n",
		"interactions[0].overrides: must be a list");
	refused("interactions:\n  - {match: a, mode: mock, overrides: [{path: b}]}\n",
		"interactions[0].overrides[0]: needs a path and a value");
	refused("interactions:\n  - {match: a, mode: 1}\n",
		"interactions[0].mode: must be a string");
}

Test(policy, a_note_that_is_a_list_or_mapping_reads_as_its_python_repr)
{
	struct policy *p = load_text(
		"interactions:\n  - {match: a, mode: pass, note: [1, x]}\n"
		"  - {match: b, mode: pass, note: {k: true}}\n");
	struct policy_decision d;

	policy_decide(p, "a", &d);
	cr_assert_str_eq(d.note, "[1, 'x']");
	policy_decide(p, "b", &d);
	cr_assert_str_eq(d.note, "{'k': True}");
	policy_free(p);
}

Test(policy, legacy_and_provenance_keys_are_accepted)
{
	struct policy *p = load_text(
		"interactions:\n  - {match: a, mode: mock, mock_source: inline, "
		"flag: true, audit: false, name: x, overrides: [], mock: 1, "
		"inject: 2}\n"
		"default: {mode: mock, mock: {unused: true}}\n");

	cr_assert_not_null(p);
	policy_free(p);
}

Test(policy, block_payload_is_exact)
{
	json_t *b = policy_block_payload("delete_account");
	char *s = json_dumps(b, JSON_SORT_KEYS | JSON_COMPACT);

	cr_assert_str_eq(
		s,
		"{\"message\":\"Tool delete_account was blocked by sandbox mediation policy.\",\"status\":\"blocked\"}");
	free(s);
	json_decref(b);
}

Test(policy, bare_default_mode_is_the_default_mode)
{
	struct policy *p = load_text("default: mock\n");
	struct policy_decision d;

	policy_decide(p, "x", &d);
	cr_assert_eq(d.mode, LF_MODE_MOCK);
	cr_assert_null(d.rule);
	cr_assert_str_eq(d.note, "");
	policy_free(p);
}

static void *decide_many(void *arg)
{
	const struct policy *p = arg;
	struct policy_decision d;
	int i;

	for (i = 0; i < 20000; i++) {
		policy_decide(p, i % 2 ? "lookup_x" : "nope", &d);
		if (d.mode != (i % 2 ? LF_MODE_PASS : LF_MODE_BLOCK))
			return (void *)1;
	}
	return NULL;
}

Test(policy, decide_is_safe_from_many_threads)
{
	struct policy *p =
		load_text("interactions:\n  - {match: lookup_*, mode: pass}\n");
	pthread_t t[8];
	void *r;
	int i;

	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, decide_many, p);
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], &r);
		cr_assert_null(r);
	}
	policy_free(p);
}
