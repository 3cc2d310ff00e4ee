/* SPDX-License-Identifier: MIT */
/*
 * mocks_coverage.c - which policy mock rules no mock rule covers, for
 * `ledgerctl validate` (ledgerctl(1) COMMANDS, validate).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"
#include "mocks.h"
#include "mocks_impl.h"
#include "mocks_json.h"
#include "policy.h"
#include "pyval.h"

/*
 * A payload of the rule's own: mock, poison, inject, a cassette, its
 * overrides (of the placeholder, when nothing else serves it), or the
 * policy's recording named after its tool (no wildcard).
 */
static bool has_own_payload(const json_t *rule, const char *match,
			    const json_t *cassettes)
{
	struct lf_why why = {{0}};
	bool named = false;
	char *stem;

	if (json_object_get(rule, "mock") || json_object_get(rule, "poison") ||
	    json_object_get(rule, "inject") ||
	    json_object_get(rule, "cassette") ||
	    pyval_truthy(json_object_get(rule, "overrides")))
		return true;
	if (!cassettes || !match || strchr(match, '*'))
		return false;
	stem = mocks_cassette_stem(match, &why);
	named = stem && json_object_get(cassettes, stem) &&
		!mocks_cassette_refused(cassettes, stem);
	free(stem);
	return named;
}

/* A rule that fits every call to its tool: no case, when or state. */
static bool unconditional(const struct mrule *r)
{
	return (!r->case_id || !strcmp(r->case_id, "*")) && !r->nconds &&
	       !(r->backend == BK_SCENARIO && r->when_state);
}

/*
 * Can some mock rule serve every call matched by pattern?  Only a rule
 * without conditions can; an exact name is covered by such a rule whose
 * pattern matches it, a wildcard only by the same pattern or by "*", since
 * a narrower rule leaves part of it uncovered.
 */
static bool covered(const char *pattern, const struct mocks *lib)
{
	bool wild = strchr(pattern, '*') != NULL;
	size_t i;

	for (i = 0; lib && i < lib->n; i++) {
		const char *t = lib->rules[i].tool;

		if (!unconditional(&lib->rules[i]))
			continue;
		if (wild ? (!strcmp(t, pattern) || !strcmp(t, "*"))
			 : policy_match_tool(t, pattern))
			return true;
	}
	return false;
}

static bool mock_mode(const json_t *rule)
{
	enum lf_mode mode;
	const json_t *m =
		json_is_string(rule) ? rule : json_object_get(rule, "mode");

	return json_is_string(m) &&
	       !policy_parse_mode(json_string_value(m), &mode) &&
	       mode == LF_MODE_MOCK;
}

json_t *mocks_uncovered(const json_t *policy_doc, const struct mocks *lib,
			const json_t *cassettes)
{
	json_t *out = json_array(), *rule;
	const json_t *list, *def;
	const char *match;
	size_t i;

	if (!out)
		return NULL;
	list = json_object_get(policy_doc, "interactions");
	json_array_foreach(list, i, rule)
	{
		match = json_string_value(json_object_get(rule, "match"));
		if (!match || !mock_mode(rule) ||
		    has_own_payload(rule, match, cassettes) ||
		    covered(match, lib))
			continue;
		json_array_append_new(
			out, json_sprintf("interactions[%zu] '%s'", i, match));
	}
	/* A mock-mode default serves every other tool: only "*" covers it. */
	def = json_object_get(policy_doc, "default");
	if (def && mock_mode(def) &&
	    !(json_is_object(def) && has_own_payload(def, NULL, NULL)) &&
	    !covered("*", lib))
		json_array_append_new(out, json_string("default '*'"));
	return out;
}
