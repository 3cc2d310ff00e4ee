/* SPDX-License-Identifier: MIT */
/*
 * test_doc.c - YAML/JSON documents: core schema, refusals, bounds, and a
 * deterministic mutation replay that must never crash the parser.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"

static json_t *parse(const char *text, struct lf_why *why)
{
	return doc_parse(text, strlen(text), why);
}

/* Parse, expecting a refusal whose reason contains want. */
static void refused(const char *text, const char *want)
{
	struct lf_why why = {{0}};
	json_t *v = parse(text, &why);

	cr_assert_null(v, "accepted: %s", text);
	cr_assert(strstr(why.msg, want), "reason '%s' lacks '%s' for: %s",
		  why.msg, want, text);
	cr_assert(!strncmp(why.msg, "line ", 5), "no position in '%s'",
		  why.msg);
}

Test(doc, json_and_yaml_of_one_document_are_equal)
{
	struct lf_why why;
	json_t *j =
		parse("{\"a\": [1, 2.5, \"x\", true, null], \"b\": {}}", &why);
	json_t *y = parse(
		"a:\n  - 1\n  - 2.5\n  - x\n  - true\n  - null\nb: {}\n", &why);

	cr_assert_not_null(j);
	cr_assert_not_null(y, "%s", why.msg);
	cr_assert(json_equal(j, y));
	json_decref(j);
	json_decref(y);
}

Test(doc, plain_scalars_resolve_as_pyyaml_safe_load_resolves_them)
{
	static const struct {
		const char *yaml;
		const char *json;
	} t[] = {
		{"v: ", "null"},
		{"v: ~", "null"},
		{"v: null", "null"},
		{"v: NULL", "null"},
		{"v: Null", "null"},
		{"v: true", "true"},
		{"v: True", "true"},
		{"v: TRUE", "true"},
		{"v: false", "false"},
		{"v: FALSE", "false"},
		{"v: yes", "true"},
		{"v: Yes", "true"},
		{"v: OFF", "false"},
		{"v: y", "\"y\""},
		{"v: no", "false"},
		{"v: on", "true"},
		{"v: 0", "0"},
		{"v: 42", "42"},
		{"v: -17", "-17"},
		{"v: +5", "5"},
		{"v: 0x1F", "31"},
		{"v: 0o17", "\"0o17\""},
		{"v: 017", "15"},
		{"v: 09", "\"09\""},
		{"v: 0b101", "5"},
		{"v: 1.5", "1.5"},
		{"v: -0.25", "-0.25"},
		{"v: 1e3", "\"1e3\""},
		{"v: 1.0e3", "\"1.0e3\""},
		{"v: 1.0e+3", "1000.0"},
		{"v: -.5", "\"-.5\""},
		{"v: .5", "0.5"},
		{"v: ._5", "\"._5\""},
		{"v: .5_", "0.5"},
		{"v: ._", "\"._\""},
		{"v: +.5", "\"+.5\""},
		{"v: 2.", "2.0"},
		{"v: 1.5e-2", "0.015"},
		{"v: 1:30.5", "90.5"},
		{"v: 0x", "\"0x\""},
		{"v: 0b", "\"0b\""},
		{"v: 0b_", "\"0b_\""},
		{"v: 0x_1f", "31"},
		{"v: -0x10", "-16"},
		{"v: 0_", "0"},
		{"v: -017", "-15"},
		{"v: 0b102", "\"0b102\""},
		{"v: 0o8", "\"0o8\""},
		{"v: 2026-07-28", "\"2026-07-28\""},
		{"v: 1_000", "1000"},
		{"v: 12:30", "750"},
		{"v: 1:2:3", "3723"},
		{"v: abc", "\"abc\""},
		{"v: '42'", "\"42\""},
		{"v: \"true\"", "\"true\""},
		{"v: 'null'", "\"null\""},
		{"v: |\n  7\n", "\"7\\n\""},
		{"v: >-\n  a\n  b\n", "\"a b\""},
		{"v: !!str 42", "\"42\""},
		{"v: !!int \"42\"", "42"},
		{"v: !!float 3", "3.0"},
		{"v: ! 42", "42"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct lf_why why = {{0}};
		json_t *doc = parse(t[i].yaml, &why);
		json_t *want = json_loads(t[i].json, JSON_DECODE_ANY, NULL);

		cr_assert_not_null(doc, "%s: %s", t[i].yaml, why.msg);
		cr_assert_not_null(want);
		cr_assert(json_equal(json_object_get(doc, "v"), want),
			  "'%s' did not resolve to %s", t[i].yaml, t[i].json);
		json_decref(doc);
		json_decref(want);
	}
}

Test(doc, infinity_and_nan_are_refused)
{
	refused("v: .inf", "cannot be represented");
	refused("v: -.Inf", "cannot be represented");
	refused("v: .NaN", "cannot be represented");
	refused("v: 1.0e+999", "out of range");
	refused("v: 99999999999999999999", "out of range");
}

Test(doc, nul_characters_are_refused)
{
	refused("v: \"a\\0b\"", "NUL characters are not supported");
	refused("\"a\\0\": 1", "NUL characters are not supported");
	refused("{\"v\": \"a\\u0000b\"}", "not allowed");
}

Test(doc, yaml_flow_documents_that_start_like_json_are_yaml)
{
	struct lf_why why = {{0}};
	json_t *v = parse("{match: x, mode: mock, n: [1, {a: ~}]}", &why);
	json_t *want = json_loads(
		"{\"match\":\"x\",\"mode\":\"mock\",\"n\":[1,{\"a\":null}]}", 0,
		NULL);

	cr_assert_not_null(v, "%s", why.msg);
	cr_assert(json_equal(v, want));
	json_decref(v);
	json_decref(want);
	/* Neither JSON nor YAML: the JSON reason is reported. */
	refused("{\"a\": 1,, }", "");
}

Test(doc, mapping_keys_must_be_strings)
{
	refused("1: a", "keys must be strings");
	refused("true: a", "keys must be strings");
	refused("? [a]\n: b\n", "keys must be strings");
	refused("x: {? {a: 1} : b}", "keys must be strings");
}

Test(doc, quoted_keys_that_look_like_numbers_are_strings)
{
	struct lf_why why;
	json_t *v = parse("'1': a\n\"true\": b\n", &why);

	cr_assert_not_null(v, "%s", why.msg);
	cr_assert_str_eq(json_string_value(json_object_get(v, "1")), "a");
	json_decref(v);
}

Test(doc, duplicate_keys_are_refused)
{
	refused("a: 1\nb: 2\na: 3\n", "duplicate key 'a'");
	refused("{\"a\": 1, \"a\": 2}", "duplicate");
}

Test(doc, anchors_aliases_and_merge_keys_read_as_pyyaml_reads_them)
{
	static const struct {
		const char *yaml, *json;
	} t[] = {
		{"a: &x 1\nb: *x\n", "{\"a\":1,\"b\":1}"},
		{"a: &x {k: [1]}\nb: [*x, *x]\n",
		 "{\"a\":{\"k\":[1]},\"b\":[{\"k\":[1]},{\"k\":[1]}]}"},
		{"b: &b {x: 1, y: 2}\nm: {<<: *b, y: 3, z: 4}\n",
		 "{\"b\":{\"x\":1,\"y\":2},\"m\":{\"x\":1,\"y\":3,\"z\":4}}"},
		{"m: {z: 1, <<: [{a: 1, z: 2}, {a: 2, w: 3}]}\n",
		 "{\"m\":{\"a\":1,\"w\":3,\"z\":1}}"},
		{"\"<<\": 1\n", "{\"<<\":1}"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct lf_why why = {{0}};
		json_t *doc = parse(t[i].yaml, &why);
		char *s;

		cr_assert_not_null(doc, "%s: %s", t[i].yaml, why.msg);
		s = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		/* PyYAML's order: merged pairs first, the first one placing */
		if (i == 3)
			cr_assert_str_eq(s,
					 "{\"m\":{\"a\":1,\"w\":3,\"z\":1}}");
		else
			cr_assert_str_eq(s, t[i].json);
		free(s);
		json_decref(doc);
	}
	refused("- *x\n", "unknown alias 'x'");
	refused("a: &a\n  b: *a\n", "recursive alias 'a'");
	refused("a: {<<: 5}\n", "expected a mapping or list of mappings");
}

Test(doc, billion_laughs_is_refused_by_the_alias_bounds)
{
	char text[4096];
	int i, j;
	size_t n;

	n = (size_t)snprintf(text, sizeof(text),
			     "a: &a [x,x,x,x,x,x,x,x,x,x]\n");
	for (i = 1; i < 9; i++) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%c: &%c [",
				      'a' + i, 'a' + i);
		for (j = 0; j < 10; j++)
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "%s*%c", j ? "," : "",
					      'a' + i - 1);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "]\n");
	}
	refused(text, "aliases expand past the bound of 100000 nodes or 4 MiB");
}

Test(doc, more_than_one_document_is_refused)
{
	refused("a: 1\n---\nb: 2\n", "more than one document");
}

Test(doc, non_core_tags_are_refused)
{
	refused("v: !foo 1", "tag not supported");
	refused("v: !!binary aGk=", "tag not supported");
	refused("v: !!int abc", "does not fit its tag");
	refused("v: !!set {a}", "tag not supported");
}

Test(doc, plain_value_and_merge_scalars_are_refused_as_pyyaml_does)
{
	refused("response: =", "'tag:yaml.org,2002:value'");
	refused("v: [1, =]", "'tag:yaml.org,2002:value'");
	refused("response: <<", "'tag:yaml.org,2002:merge'");
	refused("v: [<<]", "'tag:yaml.org,2002:merge'");
	/* Quoted, part of a longer scalar, or "=" as a key: strings. */
	{
		struct lf_why why = {{0}};
		json_t *v = parse("v: ['=', \"<<\", <<x, a=b]\n=: 1", &why);
		json_t *want = json_pack("{s:[s,s,s,s], s:i}", "v", "=", "<<",
					 "<<x", "a=b", "=", 1);

		cr_assert_not_null(v, "%s", why.msg);
		cr_assert(json_equal(v, want));
		json_decref(v);
		json_decref(want);
	}
}

Test(doc, tagged_scalars_are_read_as_pyyamls_constructors_read_them)
{
	static const struct {
		const char *yaml, *json;
	} t[] = {
		{"v: ! 12", "{\"v\":12}"},
		{"v: ! \"12\"", "{\"v\":12}"},
		{"v: ! yes", "{\"v\":true}"},
		{"v: !  'x'", "{\"v\":\"x\"}"},
		{"v: !!float 1e3", "{\"v\":1000.0}"},
		{"v: !!float 1E3", "{\"v\":1000.0}"},
		{"v: !!float 1_0", "{\"v\":10.0}"},
		{"v: !!float -1_000.5", "{\"v\":-1000.5}"},
		{"v: !!float 1:30.5", "{\"v\":90.5}"},
		{"v: !!float \" 2.5 \"", "{\"v\":2.5}"},
		{"v: !!null foo", "{\"v\":null}"},
		{"v: !!bool yEs", "{\"v\":true}"},
		{"v: !!bool OFF", "{\"v\":false}"},
		{"v: !!str 12", "{\"v\":\"12\"}"},
		{"v: !!int 12", "{\"v\":12}"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct lf_why why = {{0}};
		json_t *v = parse(t[i].yaml, &why);
		char *got;

		cr_assert_not_null(v, "%s: %s", t[i].yaml, why.msg);
		got = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17));
		cr_assert_str_eq(got, t[i].json, "%s", t[i].yaml);
		free(got);
		json_decref(v);
	}
	refused("v: !!float abc", "value does not fit its tag");
	refused("v: !!float .inf", "infinity and NaN");
	refused("v: !!float inf", "infinity and NaN");
	refused("v: !!bool maybe", "value does not fit its tag");
}

Test(doc, errors_carry_line_and_column)
{
	struct lf_why why = {{0}};
	json_t *v = parse("a: 1\nb: [1, 2\n", &why);

	cr_assert_null(v);
	cr_assert(!strncmp(why.msg, "line 3 column 1: ", 17), "%s", why.msg);
	v = parse("{\"a\": 1,\n \"b\" 2}", &why);
	cr_assert_null(v);
	cr_assert(!strncmp(why.msg, "line 2 column ", 14), "%s", why.msg);
}

Test(doc, empty_document_is_null)
{
	struct lf_why why;
	json_t *v = parse("# only a comment\n", &why);

	cr_assert(json_is_null(v));
	json_decref(v);
}

static char *nested(int depth, bool json)
{
	char *s = malloc((size_t)depth * 2 + 8), *p = s;
	int i;

	if (!json)
		p += sprintf(p, "v: ");
	for (i = 0; i < depth; i++)
		*p++ = '[';
	for (i = 0; i < depth; i++)
		*p++ = ']';
	*p = '\0';
	return s;
}

Test(doc, nesting_beyond_the_depth_bound_is_refused)
{
	struct lf_why why;
	char *ok = nested(DOC_MAX_DEPTH - 1, false);
	char *deep = nested(DOC_MAX_DEPTH + 5, false);
	char *jdeep = nested(DOC_MAX_DEPTH + 5, true);
	char *big = nested(100000, false);
	json_t *v = parse(ok, &why);

	cr_assert_not_null(v, "%s", why.msg);
	json_decref(v);
	refused(deep, "nested too deeply");
	refused(jdeep, "deeper than");
	refused(big, "nested too deeply");
	free(ok);
	free(deep);
	free(jdeep);
	free(big);
}

/* A flow list of n ones after prefix. malloc'd. */
static char *ones(const char *prefix, size_t n)
{
	char *s = malloc(n * 2 + strlen(prefix) + 4), *p = s;
	size_t i;

	p += sprintf(p, "%s[", prefix);
	for (i = 0; i < n; i++) {
		*p++ = '1';
		*p++ = ',';
	}
	strcpy(p - 1, "]");
	return s;
}

Test(doc, documents_over_the_byte_or_node_bound_are_refused)
{
	char *j = ones("", DOC_MAX_NODES + 2),
	     *y = ones("v: ", DOC_MAX_NODES + 2);
	struct lf_why why = {{0}};

	cr_assert_null(doc_parse(j, strlen(j), &why));
	cr_assert(strstr(why.msg, "nodes"), "%s", why.msg);
	cr_assert_null(doc_parse(y, strlen(y), &why));
	cr_assert(strstr(why.msg, "too many nodes"), "%s", why.msg);
	cr_assert_null(doc_parse(y, DOC_MAX_BYTES + 1, &why));
	cr_assert(strstr(why.msg, "larger than"), "%s", why.msg);
	free(j);
	free(y);
}

Test(doc, load_file_reads_yaml_and_reports_unreadable_files)
{
	struct lf_why why = {{0}};
	json_t *v = doc_load_file(TEST_DATA "/policy/telecom.mocks.yaml", &why);

	cr_assert_not_null(v, "%s", why.msg);
	cr_assert_eq(json_integer_value(json_object_get(v, "version")), 1);
	json_decref(v);
	cr_assert_null(doc_load_file(TEST_DATA "/policy/no-such-file", &why));
	cr_assert(strstr(why.msg, "cannot open"), "%s", why.msg);
}

/* xorshift64*: the same mutations on every run and every machine. */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

Test(doc, fifty_thousand_mutations_never_crash_the_parser)
{
	static const char *const seeds[] = {
		"interactions:\n  - match: lookup_*\n    mode: pass\n"
		"  - {match: send, mode: mock, mock: {status: sent}}\n"
		"default: {mode: block, note: \"deny\"}\n",
		"version: 1\nmocks:\n  - tool: a\n    when: {amount: {gt: 100}, "
		"'/x/0': [1, 2.5, ~, 'q']}\n    responses:\n      - |\n"
		"        block text\n      - >-\n        folded\n",
		"{\"interactions\": [{\"match\": \"*\", \"mode\": \"deny\"}], "
		"\"default\": \"pass\", \"n\": [1e3, -0.5, true, null]}",
		"a: &x [1]\nb: *x\n--- !!map\n? c\n: !!str d\n",
	};
	static const char alphabet[] =
		"{}[]:,-?&*!|>'\"#%@`~\n \t0x.e\\\x80\xff";
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	char buf[512];
	int round, edits, k, accepted = 0;

	for (round = 0; round < 50000; round++) {
		const char *seed = seeds[round % 4];
		size_t len = strlen(seed), pos;
		struct lf_why why = {{0}};
		json_t *v;

		memcpy(buf, seed, len);
		for (edits = 1 + (int)(next(&s) % 4), k = 0; k < edits; k++) {
			pos = len ? next(&s) % len : 0;
			switch (next(&s) % 3) {
			case 0: /* replace a byte */
				buf[pos] = alphabet[next(&s) %
						    (sizeof(alphabet) - 1)];
				break;
			case 1: /* delete a byte */
				memmove(buf + pos, buf + pos + 1,
					len - pos - 1);
				len--;
				break;
			default: /* insert a byte */
				if (len + 1 >= sizeof(buf))
					break;
				memmove(buf + pos + 1, buf + pos, len - pos);
				buf[pos] = alphabet[next(&s) %
						    (sizeof(alphabet) - 1)];
				len++;
			}
		}
		v = doc_parse(buf, len, &why);
		if (v)
			accepted++;
		else
			cr_assert(why.msg[0], "NULL without a reason");
		json_decref(v);
	}
	cr_log_info("mutations accepted: %d of 50000", accepted);
}
