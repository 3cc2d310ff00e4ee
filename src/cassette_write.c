/* SPDX-License-Identifier: MIT */
/*
 * cassette_write.c - a closed case's rows turned into ASSERT's mocks file
 * and cassette recordings that give a re-run the same results in the
 * same call order, and the replay policy that sends passed calls to them
 * (ledgerctl(1) CASSETTES).
 */
#include "cassette_write.h"

#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "jsoneq.h"
#include "mocks_json.h"
#include "policy.h"

/* ---- the calls of a ledger ----------------------------------------- */

static bool str_is(const json_t *v, const char *s)
{
	const char *t = json_string_value(v);

	return t && strcmp(t, s) == 0;
}

/* Rows that carry a result of their own (ledgerfs-ledger(5) CALL ROWS):
 * a reported or host-executed result, complete. */
static bool row_has_result(const json_t *row)
{
	const json_t *src = json_object_get(row, "result_source");

	return (str_is(src, "target_reported") ||
		str_is(src, "host_executed")) &&
	       str_is(json_object_get(row, "completion_status"), "complete") &&
	       json_object_get(row, "returned");
}

static void set_result(json_t *call, const json_t *row)
{
	json_t *r = json_object_get(row, "returned");

	json_object_set_new(call, "returned",
			    r ? json_deep_copy(r) : json_null());
	json_object_set_new(
		call, "is_error",
		json_boolean(json_is_true(json_object_get(row, "is_error"))));
	json_object_set(call, "result_source",
			json_object_get(row, "result_source"));
}

/* A block the policy itself decides, which a re-run's policy repeats;
 * the limits' blocks (ledgerfs(8) LIMITS, PROTOCOL) are replayed. */
static bool policy_block(const json_t *row)
{
	return str_is(json_object_get(row, "mode"), "block") &&
	       !json_is_true(json_object_get(row, "over_limit")) &&
	       !json_is_true(json_object_get(row, "pattern_limit"));
}

/* The call object of a decision row.  New reference. */
static json_t *call_of(const json_t *row)
{
	static const char *const keys[] = {"sequence", "call_id", "tool",
					   "args", "mode"};
	json_t *c = json_object();

	if (!c)
		return NULL;
	json_copy_keys(c, row, keys, sizeof(keys) / sizeof(keys[0]));
	if (str_is(json_object_get(row, "mode"), "pass") &&
	    !row_has_result(row)) {
		/* Its result comes later; until then what the target saw. */
		json_object_set_new(c, "returned", json_null());
		json_object_set_new(c, "is_error", json_false());
		json_object_set_new(c, "result_source",
				    json_string("not_reported"));
	} else {
		set_result(c, row);
	}
	json_object_set_new(
		c, "replay",
		json_string(policy_block(row) ? "policy" : "mocks"));
	return c;
}

static json_int_t seq_of(const json_t *row)
{
	return json_integer_value(json_object_get(row, "sequence"));
}

json_t *cassette_calls(const json_t *rows, struct lf_why *why)
{
	json_t *calls = json_array(), *row, *c;
	size_t i, j;

	if (!calls) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	/* Sequences are given in attempt order, 1, 2, ... (decision rows). */
	json_array_foreach(rows, i, row)
	{
		if (!str_is(json_object_get(row, "phase"), "decision") ||
		    seq_of(row) <= 0)
			continue;
		if ((size_t)seq_of(row) != json_array_size(calls) + 1) {
			lf_fail(why, LF_EINVAL_DOC,
				"row %zu: call sequence %lld out of order",
				i + 1, (long long)seq_of(row));
			goto fail;
		}
		c = call_of(row);
		if (!c || json_array_append_new(calls, c)) {
			lf_fail(why, LF_NOMEM, "out of memory");
			goto fail;
		}
	}
	/* Results that came in rows of their own, by sequence. */
	json_array_foreach(rows, i, row)
	{
		if (str_is(json_object_get(row, "phase"), "decision") ||
		    !row_has_result(row))
			continue;
		j = (size_t)seq_of(row);
		c = j ? json_array_get(calls, j - 1) : NULL;
		if (c &&
		    str_is(json_object_get(c, "result_source"), "not_reported"))
			set_result(c, row);
	}
	return calls;
fail:
	json_decref(calls);
	return NULL;
}

/* ---- the mocks file ------------------------------------------------- */

/* The recording of call seq: "call-000042". */
static void stem_of(json_int_t seq, char out[32])
{
	snprintf(out, 32, "call-%06lld", (long long)seq);
}

/* The code point of the UTF-8 sequence at s (jansson checked it). */
static unsigned long code_point(const unsigned char *s)
{
	if (s[0] < 0x80)
		return s[0];
	if ((s[0] & 0xE0) == 0xC0)
		return ((s[0] & 0x1Ful) << 6) | (s[1] & 0x3F);
	if ((s[0] & 0xF0) == 0xE0)
		return ((s[0] & 0x0Ful) << 12) | ((s[1] & 0x3Ful) << 6) |
		       (s[2] & 0x3F);
	return ((s[0] & 0x07ul) << 18) | ((s[1] & 0x3Ful) << 12) |
	       ((s[2] & 0x3Ful) << 6) | (s[3] & 0x3F);
}

/* What Python's str.strip() removes (str.isspace()). */
static bool py_space(unsigned long c)
{
	return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) ||
	       c == 0x85 || c == 0xA0 || c == 0x1680 ||
	       (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Can tool be a mocks rule's `tool` that matches it and no recorded
 * tool before it?  NULL, or why not. */
static const char *tool_problem(const char *tool)
{
	const unsigned char *t = (const unsigned char *)tool;
	size_t n = strlen(tool), last = n;

	while (last > 0 && (t[last - 1] & 0xC0) == 0x80)
		last--;
	if (!n || py_space(code_point(t)) ||
	    (last > 0 && py_space(code_point(t + last - 1))))
		return "a mocks rule's tool is trimmed";
	return mocks_pattern_problem(tool);
}

/* "case C, calls 1, 4, 9" (the first 20). */
static json_t *rule_note(const char *case_id, const json_t *seqs)
{
	char buf[512];
	size_t i, n = json_array_size(seqs), at;
	int w;

	w = snprintf(buf, sizeof(buf), "replay of case %s, call%s", case_id,
		     n == 1 ? "" : "s");
	at = w > 0 ? (size_t)w : 0;
	for (i = 0; i < n && i < 20 && at < sizeof(buf); i++) {
		w = snprintf(
			buf + at, sizeof(buf) - at, "%s %lld", i ? "," : "",
			(long long)json_integer_value(json_array_get(seqs, i)));
		at += w > 0 ? (size_t)w : 0;
	}
	if (n > 20 && at < sizeof(buf))
		snprintf(buf + at, sizeof(buf) - at, ", ...");
	return json_string(buf);
}

static bool same_result(const json_t *a, const json_t *b)
{
	return json_value_equal(json_object_get(a, "returned"),
				json_object_get(b, "returned")) &&
	       json_is_true(json_object_get(a, "is_error")) ==
		       json_is_true(json_object_get(b, "is_error"));
}

/* One tool's rule from its calls (in order) into *out (new ref). */
static enum lf_err tool_rule(const char *case_id, const char *tool,
			     const json_t *calls, json_t **out,
			     struct lf_why *why)
{
	json_t *first = json_array_get(calls, 0), *c, *steps, *seqs, *r;
	bool uniform = true;
	char stem[32];
	size_t i;

	*out = NULL;

	seqs = json_array();
	json_array_foreach(calls, i, c)
	{
		json_array_append(seqs, json_object_get(c, "sequence"));
		uniform = uniform && same_result(first, c);
	}
	r = json_pack("{s:s}", "tool", tool);
	if (!r || !seqs)
		goto nomem;
	if (uniform && json_is_true(json_object_get(first, "is_error"))) {
		json_object_set(r, "error", json_object_get(first, "returned"));
	} else if (uniform) {
		stem_of(seq_of(first), stem);
		json_object_set_new(r, "backend", json_string("replay"));
		json_object_set_new(r, "cassette_file", json_string(stem));
	} else {
		json_object_set_new(r, "backend", json_string("scenario"));
		json_object_set_new(r, "scenario",
				    json_string(CASSETTE_SCENARIO));
		steps = json_array();
		json_object_set_new(r, "responses", steps);
		json_array_foreach(calls, i, c)
		{
			const json_t *v = json_object_get(c, "returned");
			bool err = json_is_true(json_object_get(c, "is_error"));

			if (json_is_null(v)) {
				lf_fail(why, LF_EINVAL_DOC,
					"call %lld (%.60s): a null result among "
					"other results of its tool; ASSERT's "
					"scenario steps cannot replay null",
					(long long)seq_of(c), tool);
				json_decref(r);
				json_decref(seqs);
				return LF_EINVAL_DOC;
			}
			json_array_append_new(
				steps,
				json_pack("{s:O}", err ? "error" : "response",
					  v));
		}
	}
	json_object_set_new(r, "note", rule_note(case_id, seqs));
	json_decref(seqs);
	*out = r;
	return LF_OK;
nomem:
	json_decref(r);
	json_decref(seqs);
	return lf_fail(why, LF_NOMEM, "out of memory");
}

/* Tools with a '*' (only first or last: tool_problem) go after the
 * others, longest first, so no rule's pattern takes another's calls. */
static int rule_order(const void *a, const void *b)
{
	const char *ta =
		json_string_value(json_object_get(*(json_t *const *)a, "tool"));
	const char *tb =
		json_string_value(json_object_get(*(json_t *const *)b, "tool"));
	bool wa = strchr(ta, '*') != NULL, wb = strchr(tb, '*') != NULL;

	if (wa != wb)
		return wa ? 1 : -1;
	if (!wa)
		return 0;
	return strlen(ta) < strlen(tb) ? 1 : strlen(ta) > strlen(tb) ? -1 : 0;
}

/* The mocks rules and recordings from the calls replayed by mocks. */
static enum lf_err build_rules(const char *case_id, json_t *calls,
			       json_t *rules, json_t *recordings,
			       struct lf_why *why)
{
	json_t *by_tool = json_object(), *order = json_array(), *c, *list;
	json_t **sorted = NULL;
	enum lf_err e = LF_OK;
	const char *tool, *problem;
	char stem[32];
	size_t i, n;

	if (!by_tool || !order)
		goto nomem;
	json_array_foreach(calls, i, c)
	{
		if (!str_is(json_object_get(c, "replay"), "mocks"))
			continue;
		tool = json_string_value(json_object_get(c, "tool"));
		if (!tool)
			continue;
		if ((problem = tool_problem(tool))) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "call %lld: tool '%.60s' cannot be "
				    "replayed: %s",
				    (long long)seq_of(c), tool, problem);
			goto out;
		}
		stem_of(seq_of(c), stem);
		json_object_set_new(c, "cassette", json_string(stem));
		json_object_set(recordings, stem,
				json_object_get(c, "returned"));
		list = json_object_get(by_tool, tool);
		if (!list) {
			list = json_array();
			json_object_set_new(by_tool, tool, list);
			json_array_append_new(order, json_string(tool));
		}
		json_array_append(list, c);
	}
	n = json_array_size(order);
	sorted = calloc(n ? n : 1, sizeof(*sorted));
	if (!sorted)
		goto nomem;
	for (i = 0; i < n; i++) {
		tool = json_string_value(json_array_get(order, i));
		e = tool_rule(case_id, tool, json_object_get(by_tool, tool),
			      &sorted[i], why);
		if (e != LF_OK)
			goto out;
	}
	/* Stable: qsort is not, so ties keep first-call order by index. */
	for (i = 1; i < n; i++) {
		size_t j = i;

		while (j > 0 && rule_order(&sorted[j - 1], &sorted[j]) > 0) {
			json_t *t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
			j--;
		}
	}
	for (i = 0; i < n; i++) {
		json_array_append_new(rules, sorted[i]);
		sorted[i] = NULL;
	}
	goto out;
nomem:
	e = lf_fail(why, LF_NOMEM, "out of memory");
out:
	if (sorted)
		for (i = 0; i < json_array_size(order); i++)
			json_decref(sorted[i]);
	free(sorted);
	json_decref(by_tool);
	json_decref(order);
	return e;
}

/* The mocks document as YAML: block style, values in flow style. */
static char *mocks_text(const json_t *mocks, const char *header)
{
	const json_t *rules = json_object_get(mocks, "mocks"), *r, *s;
	char *out = NULL;
	size_t cap = 0, i, j;
	const char *k;
	json_t *v;
	FILE *f = open_memstream(&out, &cap);
	int bad = 0;

	if (!f)
		return NULL;
	if (header)
		fputs(header, f);
	fprintf(f, "version: 1\ncassette_dir: ./%s\nmocks:%s\n", CASSETTE_DIR,
		json_array_size(rules) ? "" : " []");
	json_array_foreach(rules, i, r)
	{
		const char *lead = "  - ";

		json_object_foreach((json_t *)r, k, v)
		{
			fprintf(f, "%s%s:", lead, k);
			lead = "    ";
			if (!json_is_array(v) || strcmp(k, "responses")) {
				bad |= fputc(' ', f) == EOF ||
				       cassette_yaml_value(f, v);
				fputc('\n', f);
				continue;
			}
			fputc('\n', f);
			json_array_foreach(v, j, s)
			{
				const char *sk = json_object_iter_key(
					json_object_iter((json_t *)s));

				fprintf(f, "      - %s: ", sk);
				bad |= cassette_yaml_value(
					f, json_object_get(s, sk));
				fputc('\n', f);
			}
		}
	}
	if (fclose(f) || bad) {
		free(out);
		return NULL;
	}
	return out;
}

enum lf_err cassette_build(const json_t *rows, const char *case_id,
			   const char *header, struct cassette_set *out,
			   struct lf_why *why)
{
	json_t *rules = json_array(), *back;
	enum lf_err e;

	memset(out, 0, sizeof(*out));
	why->msg[0] = '\0';
	out->recordings = json_object();
	out->calls = cassette_calls(rows, why);
	if (!out->calls || !rules || !out->recordings) {
		json_decref(rules);
		e = why->msg[0] ? LF_EINVAL_DOC : LF_NOMEM;
		goto fail;
	}
	e = build_rules(case_id, out->calls, rules, out->recordings, why);
	if (e != LF_OK) {
		json_decref(rules);
		goto fail;
	}
	out->mocks = json_pack("{s:i, s:s, s:o}", "version", 1, "cassette_dir",
			       "./" CASSETTE_DIR, "mocks", rules);
	out->mocks_yaml = out->mocks ? mocks_text(out->mocks, header) : NULL;
	if (!out->mocks_yaml) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	/* The text must mean the document, to ledgerfs as to PyYAML. */
	back = doc_parse(out->mocks_yaml, strlen(out->mocks_yaml), why);
	if (!back || !json_equal(back, out->mocks)) {
		json_decref(back);
		e = lf_fail(why, LF_EINVAL_DOC,
			    "the mocks text does not read back as written");
		goto fail;
	}
	json_decref(back);
	return LF_OK;
fail:
	cassette_set_clear(out);
	return e;
}

void cassette_set_clear(struct cassette_set *s)
{
	json_decref(s->calls);
	json_decref(s->mocks);
	json_decref(s->recordings);
	free(s->mocks_yaml);
	memset(s, 0, sizeof(*s));
}

/* ---- the replay policy ---------------------------------------------- */

static void unpass(json_t *rule)
{
	enum lf_mode m;

	if (!json_is_object(rule) ||
	    policy_parse_mode(json_string_value(json_object_get(rule, "mode")),
			      &m) ||
	    m != LF_MODE_PASS)
		return;
	json_object_set_new(rule, "mode", json_string("mock"));
	json_object_del(rule, "exec");
}

json_t *cassette_replay_policy(const json_t *policy, struct lf_why *why)
{
	json_t *p = json_deep_copy(policy), *r;
	size_t i;

	if (!json_is_object(p)) {
		json_decref(p);
		lf_fail(why, LF_EINVAL_DOC, "the policy is not a mapping");
		return NULL;
	}
	json_array_foreach(json_object_get(p, "interactions"), i, r)
	{
		unpass(r);
	}
	unpass(json_object_get(p, "default"));
	json_object_del(p, "cassettes");
	return p;
}
