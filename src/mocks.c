/* SPDX-License-Identifier: MIT */
/*
 * mocks.c - the mock library: load and validate a mocks document into the
 * shape of mocks_impl.h, as ASSERT's MockLibrary.from_dict reads it.
 * What ASSERT only finds out when a call reaches a broken rule (a missing
 * payload, an unknown operator) is refused here, at load, naming the rule
 * (ledgerfs-policy(5) DIFFERENCES FROM ASSERT).  Resolution lives in
 * mocks_resolve.c.
 */
#include "mocks.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mocks_impl.h"
#include "mocks_json.h"
#include "pyval.h"

static const struct {
	const char *name;
	enum mocks_op op;
} op_table[] = {
	{"eq", OP_EQ},	     {"ne", OP_NE},
	{"not", OP_NE},	     {"gt", OP_GT},
	{"gte", OP_GTE},     {"ge", OP_GTE},
	{"lt", OP_LT},	     {"lte", OP_LTE},
	{"le", OP_LTE},	     {"contains", OP_CONTAINS},
	{"regex", OP_REGEX}, {"in", OP_IN},
	{"any", OP_ANY},     {"absent", OP_ABSENT},
};

/* ASSERT's sorted(_OPERATORS), for its error text. */
static const char SUPPORTED[] =
	"['absent', 'any', 'contains', 'eq', 'ge', 'gt', 'gte', 'in', 'le', "
	"'lt', 'lte', 'ne', 'not', 'regex']";

/* A copy of s without leading and trailing blanks (Python's strip()). */
static char *strip_dup(const char *s)
{
	size_t n;

	while (isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return strndup(s, n);
}

/* str(v).strip().lower(), as ASSERT normalises operators and backends. */
static char *norm_dup(const json_t *v)
{
	char *s = pyval_str(v), *t;

	if (!s)
		return NULL;
	t = strip_dup(s);
	free(s);
	for (s = t; s && *s; s++)
		*s = (char)tolower((unsigned char)*s);
	return t;
}

static enum lf_err load_cond(struct mcond *c, const char *key, const json_t *v,
			     const char *at, struct lf_why *why)
{
	const char *k = NULL;
	const json_t *x = NULL;
	char *keys;
	size_t i;
	enum lf_err rc;

	c->key = key;
	c->op = OP_EQ;
	c->operand = v;
	if (!json_is_object(v))
		return LF_OK;
	if (json_object_size(v) != 1) {
		json_t *names = json_array();
		json_object_foreach((json_t *)v, k, x)
		{
			json_array_append_new(names, json_string(k));
		}
		/* sorted(): jansson keys are UTF-8, byte order is code order */
		for (i = 1; i < json_array_size(names); i++) {
			size_t j = i;
			while (j && strcmp(json_string_value(json_array_get(
						   names, j - 1)),
					   json_string_value(json_array_get(
						   names, j))) > 0) {
				json_t *t = json_incref(
					json_array_get(names, j - 1));
				json_array_set(names, j - 1,
					       json_array_get(names, j));
				json_array_set_new(names, j, t);
				j--;
			}
		}
		keys = pyval_repr(names);
		json_decref(names);
		lf_fail(why, LF_EINVAL_DOC,
			"%s.when.%.60s: an operator matcher takes exactly one "
			"key, got %.80s; use a plain value for exact match",
			at, key, keys ? keys : "[]");
		free(keys);
		return LF_EINVAL_DOC;
	}
	json_object_foreach((json_t *)v, k, x)
	{
		break;
	}
	{
		json_t *kj = json_string(k);
		c->opname = norm_dup(kj);
		json_decref(kj);
	}
	if (!c->opname)
		return lf_fail(why, LF_NOMEM, "out of memory");
	c->operand = x;
	for (i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++)
		if (!strcmp(op_table[i].name, c->opname))
			break;
	if (i == sizeof(op_table) / sizeof(op_table[0]))
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s.when.%.60s: unknown matcher operator '%.40s'; "
			"supported: %s",
			at, key, c->opname, SUPPORTED);
	c->op = op_table[i].op;
	switch (c->op) {
	case OP_GT:
	case OP_GTE:
	case OP_LT:
	case OP_LTE:
		if (!json_is_number(x))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.%s: operand must be a number",
				at, key, c->opname);
		break;
	case OP_IN:
		if (!json_is_array(x))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.when.%.60s.in: 'in' needs a list of "
				       "allowed values",
				       at, key);
		break;
	case OP_REGEX: {
		/* Python re, bounded: ledgerfs-policy(5) PATTERNS. */
		char *re = pyval_str(x);
		struct lf_why pwhy;

		if (!re)
			return lf_fail(why, LF_NOMEM, "out of memory");
		rc = pattern_compile(re, strlen(re), &c->re, &pwhy);
		free(re);
		if (rc)
			return lf_fail(why, rc, "%s.when.%.60s.regex: %s", at,
				       key, pwhy.msg);
		break;
	}
	default:
		break;
	}
	return LF_OK;
}

/* Optional scalar member as str(); *out NULL when absent or null. */
static enum lf_err opt_text(const json_t *obj, const char *key, char **out,
			    const char *at, struct lf_why *why)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return LF_OK;
	if (json_is_object(v) || json_is_array(v))
		return lf_fail(why, LF_EINVAL_DOC, "%s.%s: must be a scalar",
			       at, key);
	*out = pyval_str(v);
	return *out ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

const char *mocks_cassette_refused(const json_t *cassettes, const char *stem)
{
	char key[300];

	if (!cassettes || snprintf(key, sizeof(key), "%s%s", CASSETTE_REFUSED,
				   stem) >= (int)sizeof(key))
		return NULL;
	return json_string_value(json_object_get(cassettes, key));
}

/*
 * cassette_file: NAME ending in .json with no NAME.json.json names NAME
 * itself (ledgerfs-policy(5) CASSETTE FILES), as for a policy's rules:
 * the stem is cut in place then.
 */
static void mocks_cassette_json_name(const json_t *cassettes, char *stem)
{
	size_t n = strlen(stem);

	if (json_object_get(cassettes, stem) || n <= 5 ||
	    strcmp(stem + n - 5, ".json"))
		return;
	stem[n - 5] = '\0';
	if (!json_object_get(cassettes, stem))
		stem[n - 5] = '.';
}

/* A step serves `error` when it has that key, else `response`. */
static enum lf_err check_step(const json_t *s, const char *sat,
			      struct lf_why *why)
{
	static const char *const step_keys[] = {
		"response", "error", "sets_state", "note", "description", NULL,
	};
	const json_t *pay;
	enum lf_err rc;

	rc = mocks_check_keys(s, step_keys, sat, why);
	if (rc)
		return rc;
	pay = json_object_get(s, "error");
	if (!pay)
		pay = json_object_get(s, "response");
	if (!pay || json_is_null(pay))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s: declares neither `response:` nor `error:`",
			       sat);
	if (json_is_object(json_object_get(s, "sets_state")) ||
	    json_is_array(json_object_get(s, "sets_state")))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.sets_state: must be a scalar", sat);
	return LF_OK;
}

static enum lf_err load_scenario(struct mrule *r, const json_t *obj,
				 const char *at, struct lf_why *why)
{
	static const char *const single[] = {"response", "error", "sets_state"};
	const json_t *list = json_object_get(obj, "responses"), *s;
	char sat[96];
	enum lf_err rc;
	size_t i;

	if (!pyval_truthy(json_object_get(obj, "scenario")))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.scenario: a scenario mock needs `scenario:`",
			       at);
	r->steps = json_array();
	if (!r->steps)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (!list || json_is_null(list)) {
		/* One step made of the rule's own keys, as ASSERT makes it. */
		json_t *step = json_object();

		for (i = 0; step && i < 3; i++)
			if (json_object_get(obj, single[i]))
				json_object_set(
					step, single[i],
					json_object_get(obj, single[i]));
		if (!step || json_array_append_new(r->steps, step))
			return lf_fail(why, LF_NOMEM, "out of memory");
		if (!json_object_size(step))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s: declares neither `responses:` nor "
				       "`response:`",
				       at);
		return check_step(step, at, why);
	}
	if (!json_is_array(list) || !json_array_size(list))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.responses: must be a non-empty list", at);
	json_array_foreach(list, i, s)
	{
		snprintf(sat, sizeof(sat), "%s.responses[%zu]", at, i);
		rc = check_step(s, sat, why);
		if (rc)
			return rc;
		if (json_array_append(r->steps, (json_t *)s))
			return lf_fail(why, LF_NOMEM, "out of memory");
	}
	return LF_OK;
}

static enum lf_err load_replay(struct mrule *r, const json_t *obj,
			       const json_t *cassettes, const char *at,
			       struct lf_why *why)
{
	const json_t *ov = json_object_get(obj, "overrides"), *o;
	const json_t *f = json_object_get(obj, "cassette_file");
	struct lf_why inner;
	size_t i;

	r->cassette = json_object_get(obj, "cassette");
	if (json_is_null(r->cassette))
		r->cassette = NULL;
	if (pyval_truthy(ov)) {
		if (!json_is_array(ov))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.overrides: must be a list", at);
		json_array_foreach(ov, i, o)
		{
			if (!json_is_object(o) || !json_object_get(o, "path") ||
			    !json_object_get(o, "value"))
				return lf_fail(
					why, LF_EINVAL_DOC,
					"%s.overrides[%zu]: needs a path "
					"and a value",
					at, i);
		}
		r->overrides = ov;
		r->noverrides = json_array_size(ov);
	}
	if (r->cassette)
		return LF_OK;
	if (!cassettes)
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s: replay mock for '%.60s' needs a cassette dir "
			"or an inline `cassette:`",
			at, r->tool);
	if (pyval_truthy(f)) {
		char *name = pyval_str(f);

		if (!name)
			return lf_fail(why, LF_NOMEM, "out of memory");
		r->cassette_name = mocks_cassette_stem(name, &inner);
		free(name);
		if (!r->cassette_name)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.cassette_file: %s", at, inner.msg);
		mocks_cassette_json_name(cassettes, r->cassette_name);
	}
	/* A named recording must exist now, as ASSERT's setup checks. */
	if ((r->cassette_name || !strchr(r->tool, '*')) &&
	    mocks_cassette_refused(
		    cassettes, r->cassette_name ? r->cassette_name : r->tool))
		return lf_fail(why, LF_EINVAL_DOC, "%s: %s", at,
			       mocks_cassette_refused(cassettes,
						      r->cassette_name
							      ? r->cassette_name
							      : r->tool));
	if ((r->cassette_name || !strchr(r->tool, '*')) &&
	    !json_object_get(cassettes,
			     r->cassette_name ? r->cassette_name : r->tool))
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s: replay cassette file not found for '%.60s': "
			"'%.60s'",
			at, r->tool,
			r->cassette_name ? r->cassette_name : r->tool);
	return LF_OK;
}

static enum lf_err load_rule(struct mrule *r, const json_t *obj,
			     const json_t *cassettes, const char *at,
			     struct lf_why *why)
{
	static const char *const keys[] = {
		"tool",	      "name",	    "note",	 "description",
		"case_id",    "when",	    "backend",	 "scenario",
		"when_state", "sets_state", "response",	 "error",
		"responses",  "cassette",   "overrides", "cassette_file",
		NULL,
	};
	const char *k, *problem;
	const json_t *when, *v;
	char *backend = NULL, *s;
	enum lf_err rc;

	rc = mocks_check_keys(obj, keys, at, why);
	if (rc)
		return rc;
	r->raw = obj;
	v = json_object_get(obj, "tool");
	if (json_is_object(v) || json_is_array(v))
		return lf_fail(why, LF_EINVAL_DOC, "%s.tool: must be a string",
			       at);
	s = pyval_truthy(v) ? pyval_str(v) : strdup("");
	r->tool = s ? strip_dup(s) : NULL;
	free(s);
	if (!r->tool)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (!*r->tool)
		return lf_fail(why, LF_EINVAL_DOC, "%s is missing `tool:`", at);
	if ((problem = mocks_pattern_problem(r->tool)))
		return lf_fail(why, LF_EINVAL_DOC, "%s.tool: %s: '%.60s'", at,
			       problem, r->tool);
	v = json_object_get(obj, "case_id");
	if (v) {
		if (!json_is_string(v) ||
		    !(r->case_id = strip_dup(json_string_value(v))) ||
		    !*r->case_id)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.case_id must be a non-empty string",
				       at);
		if ((problem = mocks_pattern_problem(r->case_id)))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.case_id: %s: '%.60s'", at, problem,
				       r->case_id);
	}
	v = json_object_get(obj, "note");
	r->note = pyval_truthy(v) ? pyval_str(v) : strdup("");
	if (!r->note)
		return lf_fail(why, LF_NOMEM, "out of memory");
	when = json_object_get(obj, "when");
	if (when && !json_is_null(when) && !json_is_object(when))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.when must be a mapping, got %s", at,
			       pyval_type_name(when));
	if (json_object_size(when)) {
		r->conds = calloc(json_object_size(when), sizeof(*r->conds));
		if (!r->conds)
			return lf_fail(why, LF_NOMEM, "out of memory");
		json_object_foreach((json_t *)when, k, v)
		{
			rc = load_cond(&r->conds[r->nconds++], k, v, at, why);
			if (rc)
				return rc;
		}
	}
	v = json_object_get(obj, "backend");
	if (pyval_truthy(v) && !(backend = norm_dup(v)))
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (!backend || !*backend) {
		free(backend);
		/* ASSERT's _infer_backend: the rule's shape names it. */
		if (json_object_get(obj, "scenario") ||
		    json_object_get(obj, "responses"))
			backend = strdup("scenario");
		else if (json_object_get(obj, "cassette") ||
			 json_object_get(obj, "cassette_file") ||
			 json_object_get(obj, "overrides"))
			backend = strdup("replay");
		else
			backend = strdup("inline");
		if (!backend)
			return lf_fail(why, LF_NOMEM, "out of memory");
	}
	if (!strcmp(backend, "inline")) {
		r->backend = BK_INLINE;
		if (!json_object_get(obj, "response") &&
		    !json_object_get(obj, "error"))
			rc = lf_fail(why, LF_EINVAL_DOC,
				     "%s: inline mock for '%.60s' declares "
				     "neither `response:` nor `error:`",
				     at, r->tool);
	} else if (!strcmp(backend, "scenario")) {
		r->backend = BK_SCENARIO;
		rc = opt_text(obj, "scenario", &r->scenario, at, why);
		if (!rc)
			rc = opt_text(obj, "when_state", &r->when_state, at,
				      why);
		if (!rc)
			rc = load_scenario(r, obj, at, why);
	} else if (!strcmp(backend, "replay")) {
		r->backend = BK_REPLAY;
		rc = load_replay(r, obj, cassettes, at, why);
	} else if (!strcmp(backend, "contract")) {
		rc = lf_fail(why, LF_EINVAL_DOC,
			     "%s: backend 'contract' is not implemented", at);
	} else {
		rc = lf_fail(why, LF_EINVAL_DOC,
			     "%s: mock for '%.60s' asks for unknown backend "
			     "'%.40s'; available: ['contract', 'inline', "
			     "'replay', 'scenario']",
			     at, r->tool, backend);
	}
	free(backend);
	return rc;
}

/* All patterns of one document together: ledgerfs-policy(5) PATTERNS. */
static enum lf_err bound_patterns(const struct mrule *r, size_t *total,
				  const char *at, struct lf_why *why)
{
	size_t j;

	for (j = 0; j < r->nconds; j++)
		if (r->conds[j].re)
			*total += pattern_size(r->conds[j].re);
	if (*total > PATTERN_MAX_DOC)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s: the document's patterns compile to more "
			       "than the bound of %u bytes",
			       at, PATTERN_MAX_DOC);
	return LF_OK;
}

/* Case-bound rules first, then more `when` keys, then file order. */
static int rule_cmp(const void *a, const void *b)
{
	const struct mrule *x = *(const struct mrule *const *)a;
	const struct mrule *y = *(const struct mrule *const *)b;

	if (!x->case_id != !y->case_id)
		return x->case_id ? -1 : 1;
	if (x->nconds != y->nconds)
		return x->nconds > y->nconds ? -1 : 1;
	return x->index - y->index;
}

enum lf_err mocks_load(json_t *doc, struct mocks **out, struct lf_why *why)
{
	static const char *const top_keys[] = {
		"version", "mocks", "name", "description", "cassettes", NULL,
	};
	struct mocks *m = NULL;
	const json_t *list, *v;
	const char *k;
	char at[40];
	enum lf_err rc;
	size_t i, compiled = 0;

	*out = NULL;
	/* ASSERT: yaml.safe_load(...) or {}, so a false document is empty. */
	if (doc && !json_is_object(doc) && !pyval_truthy(doc))
		doc = NULL;
	if (doc && !json_is_object(doc))
		return lf_fail(why, LF_EINVAL_DOC,
			       "mock file must be a mapping, got %s",
			       pyval_type_name(doc));
	json_object_foreach(doc, k, v)
	{
		if (!strcmp(k, "cassette_dir"))
			return lf_fail(why, LF_EINVAL_DOC,
				       "cassette_dir: cassette_dir must be "
				       "resolved by ledgerctl before loading");
		if (!mocks_key_in(k, top_keys))
			return lf_fail(why, LF_EINVAL_DOC,
				       "unknown top-level key '%.60s'", k);
	}
	/* `version in {1}`: Python's 1 == 1.0 == True. */
	v = json_object_get(doc, "version");
	if (v) {
		json_t *one = json_integer(1);
		bool ok = pyval_equal(v, one);

		json_decref(one);
		if (!ok)
			return lf_fail(
				why, LF_EINVAL_DOC,
				"version: unsupported mock file version; "
				"supported: [1]");
	}
	v = json_object_get(doc, "cassettes");
	if (v && !json_is_object(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "cassettes: must be a mapping");
	list = json_object_get(doc, "mocks");
	if (!pyval_truthy(list))
		list = NULL;
	if (list && !json_is_array(list))
		return lf_fail(why, LF_EINVAL_DOC, "`mocks:` must be a list");
	m = calloc(1, sizeof(*m));
	if (!m)
		return lf_fail(why, LF_NOMEM, "out of memory");
	m->cassettes = v;
	m->n = json_array_size(list);
	m->rules = calloc(m->n ? m->n : 1, sizeof(*m->rules));
	m->order = calloc(m->n ? m->n : 1, sizeof(*m->order));
	if (!m->rules || !m->order) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < m->n; i++) {
		const json_t *e = json_array_get(list, i);

		snprintf(at, sizeof(at), "mocks[%zu]", i);
		m->rules[i].index = (int)i;
		m->order[i] = &m->rules[i];
		if (json_is_null(e)) {
			rc = lf_fail(why, LF_EINVAL_DOC,
				     "%s is missing `tool:`", at);
			goto fail;
		}
		rc = load_rule(&m->rules[i], e, m->cassettes, at, why);
		if (rc)
			goto fail;
		rc = bound_patterns(&m->rules[i], &compiled, at, why);
		if (rc)
			goto fail;
	}
	qsort(m->order, m->n, sizeof(*m->order), rule_cmp);
	m->doc = doc ? json_incref(doc) : json_object();
	*out = m;
	return LF_OK;
fail:
	mocks_free(m);
	return rc;
}

void mocks_free(struct mocks *m)
{
	size_t i, j;

	if (!m)
		return;
	for (i = 0; m->rules && i < m->n; i++) {
		struct mrule *r = &m->rules[i];

		for (j = 0; j < r->nconds; j++) {
			pattern_free(r->conds[j].re);
			free(r->conds[j].opname);
		}
		free(r->conds);
		free(r->tool);
		free(r->case_id);
		free(r->note);
		free(r->scenario);
		free(r->when_state);
		free(r->cassette_name);
		json_decref(r->steps);
	}
	free(m->rules);
	free(m->order);
	json_decref(m->doc);
	free(m);
}

const json_t *mocks_doc(const struct mocks *m)
{
	return m ? m->doc : NULL;
}
