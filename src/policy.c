/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the mediation policy: load and validate a policy document,
 * then decide pass, mock or block per tool name.  Immutable after load,
 * so decide needs no lock and is shared by every thread of a case.
 */
#include "policy.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "exec_spec.h"
#include "mocks.h"
#include "mocks_json.h"
#include "pyval.h"

struct prule {
	const char *match;
	const char *label; /* match, or "<default>" */
	char *note;	   /* str(note), "" when absent */
	enum lf_mode mode;
	const json_t *obj;	/* borrowed from the policy's document */
	struct exec_spec *exec; /* a pass the host runs itself, or NULL */
};

struct policy {
	json_t *doc;		 /* own reference */
	const json_t *cassettes; /* recordings by stem, or NULL: no folder */
	struct prule *rules;
	size_t n;
	struct prule def;
};

static const struct {
	const char *spelling;
	enum lf_mode mode;
} mode_table[] = {
	{"pass", LF_MODE_PASS},	       {"pass_through", LF_MODE_PASS},
	{"passthrough", LF_MODE_PASS}, {"execute", LF_MODE_PASS},
	{"audit", LF_MODE_PASS},       {"mock", LF_MODE_MOCK},
	{"inline", LF_MODE_MOCK},      {"replay", LF_MODE_MOCK},
	{"poison", LF_MODE_MOCK},      {"inject", LF_MODE_MOCK},
	{"block", LF_MODE_BLOCK},      {"deny", LF_MODE_BLOCK},
};

bool policy_match_tool(const char *pattern, const char *tool)
{
	size_t pl, tl;

	if (!pattern || !tool)
		return false;
	pl = strlen(pattern);
	tl = strlen(tool);
	if (!strcmp(pattern, "*"))
		return true;
	/* Patterns with a '*' elsewhere are refused at load; here literal. */
	if (pl > 1 && pattern[pl - 1] == '*' && !strchr(pattern, '*')[1] &&
	    pattern[0] != '*')
		return tl >= pl - 1 && !strncmp(pattern, tool, pl - 1);
	if (pl > 1 && pattern[0] == '*' && !strchr(pattern + 1, '*'))
		return tl >= pl - 1 &&
		       !strcmp(tool + tl - (pl - 1), pattern + 1);
	return !strcmp(pattern, tool);
}

const char *policy_mode_name(enum lf_mode mode)
{
	switch (mode) {
	case LF_MODE_PASS:
		return "pass";
	case LF_MODE_MOCK:
		return "mock";
	case LF_MODE_BLOCK:
		return "block";
	}
	return "block";
}

int policy_parse_mode(const char *spelling, enum lf_mode *mode)
{
	size_t i, len;

	if (!spelling)
		return -1;
	while (isspace((unsigned char)*spelling))
		spelling++;
	len = strlen(spelling);
	while (len && isspace((unsigned char)spelling[len - 1]))
		len--;
	for (i = 0; i < sizeof(mode_table) / sizeof(mode_table[0]); i++) {
		if (strlen(mode_table[i].spelling) == len &&
		    !strncasecmp(mode_table[i].spelling, spelling, len)) {
			*mode = mode_table[i].mode;
			return 0;
		}
	}
	return -1;
}

static const char *const rule_keys[] = {
	"match",       "mode",	 "name",   "note",     "description",
	"mock",	       "poison", "inject", "cassette", "overrides",
	"mock_source", "flag",	 "audit",  "exec",     NULL,
};
/* The default's payload keys are accepted and, as in ASSERT, unused. */
static const char *const default_keys[] = {
	"mode",	  "note",     "description", "mock",	    "poison",
	"inject", "cassette", "overrides",   "mock_source", "flag",
	"audit",  "name",     NULL,
};

/* Optional string member; -1 when present and not a string. */
static int opt_string(const json_t *obj, const char *key, const char **out)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return -1;
	*out = json_string_value(v);
	return 0;
}

/* ASSERT reads overrides as list(rule.get("overrides") or []). */
static enum lf_err check_overrides(const json_t *v, const char *at,
				   struct lf_why *why)
{
	const json_t *o;
	size_t i;

	if (!pyval_truthy(v))
		return LF_OK;
	if (!json_is_array(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.overrides: must be a list", at);
	json_array_foreach(v, i, o)
	{
		if (!json_is_object(o) || !json_object_get(o, "path") ||
		    !json_object_get(o, "value"))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.overrides[%zu]: needs a path and a "
				       "value",
				       at, i);
	}
	return LF_OK;
}

/*
 * Validate one interaction (or the default, where keys differs) and fill
 * r.  at is "interactions[N]" or "default" for the reasons.
 */
static enum lf_err load_rule(const json_t *obj, const char *at, bool is_def,
			     struct prule *r, struct lf_why *why)
{
	const char *const *keys = is_def ? default_keys : rule_keys;
	const char *mode = NULL, *problem, *desc;
	const json_t *v;
	enum lf_err rc;

	rc = mocks_check_keys(obj, keys, at, why);
	if (rc != LF_OK)
		return rc;
	if (!is_def) {
		if (opt_string(obj, "match", &r->match) || !r->match ||
		    !*r->match)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.match: required, a non-empty string",
				       at);
		problem = mocks_pattern_problem(r->match);
		if (problem)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.match: %s: '%.60s'", at, problem,
				       r->match);
		/* ASSERT shows match, never name, in matched and reason. */
		r->label = r->match;
	} else {
		r->match = NULL;
		r->label = "<default>";
	}
	/* ASSERT: rule.get("mode", "block"). */
	if (opt_string(obj, "mode", &mode))
		return lf_fail(why, LF_EINVAL_DOC, "%s.mode: must be a string",
			       at);
	if (!mode)
		r->mode = LF_MODE_BLOCK;
	else if (policy_parse_mode(mode, &r->mode))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.mode: unknown mode '%.60s'", at, mode);
	/*
	 * ASSERT: str(rule.get("note", "")), so a null note reads "None"
	 * and a list or mapping its repr().
	 */
	v = json_object_get(obj, "note");
	r->note = v ? pyval_str(v) : strdup("");
	if (!r->note)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (opt_string(obj, "description", &desc))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.description: must be a string", at);
	rc = check_overrides(json_object_get(obj, "overrides"), at, why);
	if (rc != LF_OK)
		return rc;
	/* A ledgerfs extension (ledgerfs-policy(5) HOST EXECUTORS). */
	v = json_object_get(obj, "exec");
	if (v) {
		if (r->mode != LF_MODE_PASS)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.exec: only a pass rule runs on the "
				       "host",
				       at);
		rc = exec_spec_parse(v, at, &r->exec, why);
		if (rc != LF_OK)
			return rc;
	}
	r->obj = is_def ? NULL : obj;
	return LF_OK;
}

static enum lf_err load_default(struct policy *p, const json_t *d,
				struct lf_why *why)
{
	if (json_is_string(d) && json_string_length(d)) {
		/* A bare mode (a ledgerfs extension): no note. */
		if (policy_parse_mode(json_string_value(d), &p->def.mode))
			return lf_fail(why, LF_EINVAL_DOC,
				       "default: unknown mode '%.60s'",
				       json_string_value(d));
		p->def.label = "<default>";
		p->def.note = strdup("");
		return p->def.note ? LF_OK
				   : lf_fail(why, LF_NOMEM, "out of memory");
	}
	if (!pyval_truthy(d)) {
		/* ASSERT: data.get("default") or {block, "deny unknown tool"} */
		p->def.mode = LF_MODE_BLOCK;
		p->def.label = "<default>";
		p->def.note = strdup("deny unknown tool");
		return p->def.note ? LF_OK
				   : lf_fail(why, LF_NOMEM, "out of memory");
	}
	if (!json_is_object(d))
		return lf_fail(why, LF_EINVAL_DOC,
			       "default: must be a mapping");
	return load_rule(d, "default", true, &p->def, why);
}

enum lf_err policy_load(json_t *doc, struct policy **out, struct lf_why *why)
{
	static const char *const top_keys[] = {
		"interactions", "default",   "version", "name",
		"description",	"cassettes", NULL,
	};
	struct policy *p = NULL;
	const json_t *list, *v;
	const char *k;
	char at[48];
	enum lf_err rc;
	size_t i;

	*out = NULL;
	/*
	 * ASSERT loads yaml.safe_load(...) or {}: a document Python deems
	 * false (empty, null, false, 0, '', []) is an empty policy.
	 */
	if (!doc || (!json_is_object(doc) && !pyval_truthy(doc))) {
		json_t *empty = json_object();

		if (!empty)
			return lf_fail(why, LF_NOMEM, "out of memory");
		rc = policy_load(empty, out, why);
		json_decref(empty);
		return rc;
	}
	if (!json_is_object(doc))
		return lf_fail(why, LF_EINVAL_DOC,
			       "policy: the document must be a mapping");
	json_object_foreach(doc, k, v)
	{
		if (!strcmp(k, "cassette_dir"))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s: %s must be resolved by ledgerctl before loading",
				k, k);
		if (!mocks_key_in(k, top_keys))
			return lf_fail(why, LF_EINVAL_DOC,
				       "unknown top-level key '%.60s'", k);
	}
	list = json_object_get(doc, "interactions");
	if (!pyval_truthy(list))
		list = NULL;
	if (list && !json_is_array(list))
		return lf_fail(why, LF_EINVAL_DOC,
			       "interactions: must be a list");
	v = json_object_get(doc, "name");
	if (v && !json_is_string(v))
		return lf_fail(why, LF_EINVAL_DOC, "name: must be a string");
	v = json_object_get(doc, "description");
	if (v && !json_is_string(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "description: must be a string");
	v = json_object_get(doc, "cassettes");
	if (v && !json_is_object(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "cassettes: must be a mapping");
	p = calloc(1, sizeof(*p));
	if (!p)
		return lf_fail(why, LF_NOMEM, "out of memory");
	p->cassettes = v;
	p->n = json_array_size(list);
	p->rules = calloc(p->n ? p->n : 1, sizeof(*p->rules));
	if (!p->rules) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < p->n; i++) {
		snprintf(at, sizeof(at), "interactions[%zu]", i);
		rc = load_rule(json_array_get(list, i), at, false, &p->rules[i],
			       why);
		if (rc)
			goto fail;
	}
	rc = load_default(p, json_object_get(doc, "default"), why);
	if (rc)
		goto fail;
	p->doc = json_incref(doc);
	*out = p;
	return LF_OK;
fail:
	policy_free(p);
	return rc;
}

void policy_free(struct policy *p)
{
	size_t i;

	if (!p)
		return;
	json_decref(p->doc);
	for (i = 0; p->rules && i < p->n; i++) {
		free(p->rules[i].note);
		exec_spec_free(p->rules[i].exec);
	}
	free(p->def.note);
	free(p->rules);
	free(p);
}

const json_t *policy_doc(const struct policy *p)
{
	return p ? p->doc : NULL;
}

void policy_decide(const struct policy *p, const char *tool,
		   struct policy_decision *out)
{
	static const char *const verbs[] = {
		[LF_MODE_PASS] = "allowed",
		[LF_MODE_MOCK] = "mocked",
		[LF_MODE_BLOCK] = "blocked",
	};
	const struct prule *r = NULL;
	char *quoted;
	size_t i;

	for (i = 0; p && i < p->n; i++) {
		if (policy_match_tool(p->rules[i].match, tool)) {
			r = &p->rules[i];
			break;
		}
	}
	memset(out, 0, sizeof(*out));
	if (r && strcmp(r->label, "<default>")) {
		out->mode = r->mode;
		out->rule_index = (int)i;
		out->matched = r->label;
		out->note = r->note;
		out->rule = r->obj;
		out->exec = r->exec;
		/* ASSERT writes the rule with Python's repr(). */
		quoted = pyval_repr_text(r->label);
		snprintf(out->reason, sizeof(out->reason),
			 "%s by mediation policy rule %s", verbs[r->mode],
			 quoted ? quoted : r->label);
		free(quoted);
		return;
	}
	if (r) {
		/* A rule matched as "<default>" reads as the default. */
		out->mode = r->mode;
		out->rule_index = (int)i;
		out->note = r->note;
		out->rule = r->obj;
		out->exec = r->exec;
	} else {
		out->rule_index = -1;
		out->mode = p ? p->def.mode : LF_MODE_BLOCK;
		out->note = p ? p->def.note : "deny unknown tool";
	}
	out->matched = "<default>";
	snprintf(out->reason, sizeof(out->reason),
		 "%s by default mediation policy", verbs[out->mode]);
}

const json_t *policy_cassettes(const struct policy *p)
{
	return p ? p->cassettes : NULL;
}

json_t *policy_block_payload(const char *tool)
{
	return json_pack(
		"{s:s, s:o}", "status", "blocked", "message",
		json_sprintf("Tool %s was blocked by sandbox mediation policy.",
			     tool ? tool : ""));
}
