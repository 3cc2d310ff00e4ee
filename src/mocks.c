/*
 * mocks.c - the mock library: load and validate a mocks document into the
 * immutable shape of mocks_impl.h (regexes compiled, cassettes with their
 * overrides applied once).  Resolution lives in mocks_resolve.c.
 */
#include "mocks.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mocks_impl.h"
#include "mocks_json.h"

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

/* ---- load ---------------------------------------------------------- */

static int find_op(const char *name, enum mocks_op *op)
{
	size_t i;

	for (i = 0; i < sizeof(op_table) / sizeof(op_table[0]); i++) {
		if (!strcmp(op_table[i].name, name)) {
			*op = op_table[i].op;
			return 0;
		}
	}
	return -1;
}

static enum lf_err load_cond(struct mcond *c, const char *key, const json_t *v,
			     const char *at, struct lf_why *why)
{
	const char *problem, *k, *opname = NULL;
	const json_t *x;
	size_t nops = 0;
	struct lf_why pwhy;
	enum lf_err rc;

	c->key = key;
	c->pointer = key[0] == '/';
	if (!*key)
		return lf_fail(why, LF_EINVAL_DOC, "%s.when: empty key", at);
	if (c->pointer && (problem = mocks_pointer_problem(key)))
		return lf_fail(why, LF_EINVAL_DOC, "%s.when.%.60s: %s", at, key,
			       problem);
	c->op = OP_EQ;
	c->operand = v;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, x)
		{
			enum mocks_op op;

			if (!find_op(k, &op)) {
				nops++;
				opname = k;
				c->op = op;
				c->operand = x;
			}
		}
		if (nops > 1 && nops == json_object_size(v))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.when.%.60s: one operator per entry",
				       at, key);
		/* Anything but one lone operator key is a value to equal. */
		if (nops != 1 || json_object_size(v) != 1) {
			c->op = OP_EQ;
			c->operand = v;
			opname = NULL;
		}
	}
	switch (c->op) {
	case OP_GT:
	case OP_GTE:
	case OP_LT:
	case OP_LTE:
		if (!json_is_number(c->operand))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.%s: operand must be a number",
				at, key, opname);
		break;
	case OP_REGEX:
		if (!json_is_string(c->operand))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.regex: operand must be a string",
				at, key);
		/* Python re, bounded: ledgerfs-policy(5) PATTERNS. */
		rc = pattern_compile(json_string_value(c->operand),
				     json_string_length(c->operand), &c->re,
				     &pwhy);
		if (rc)
			return lf_fail(why, rc, "%s.when.%.60s.regex: %s", at,
				       key, pwhy.msg);
		break;
	case OP_IN:
		if (!json_is_array(c->operand))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.in: operand must be a list", at,
				key);
		break;
	case OP_ABSENT:
		if (!json_is_boolean(c->operand))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.absent: operand must be true or false",
				at, key);
		break;
	case OP_ANY:
		if (json_is_false(c->operand))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.when.%.60s.any: write 'absent: true' for a missing argument",
				at, key);
		break;
	default:
		break;
	}
	return LF_OK;
}

/* cassette (+ overrides) of obj into pay, resolved once at load. */
static enum lf_err load_cassette(struct mpay *pay, const json_t *obj,
				 const char *at, struct lf_why *why)
{
	struct lf_why inner;
	const json_t *ov = json_object_get(obj, "overrides");

	pay->kind = PAY_CASSETTE;
	pay->value = json_object_get(obj, "cassette");
	pay->overridden = ov != NULL;
	pay->resolved = mocks_apply_overrides(pay->value, ov, &inner);
	if (!pay->resolved)
		return lf_fail(why, LF_EINVAL_DOC, "%s.%s", at, inner.msg);
	return LF_OK;
}

static enum lf_err opt_str(const json_t *obj, const char *key, const char **out,
			   const char *at, struct lf_why *why)
{
	const json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v)
		return LF_OK;
	if (!json_is_string(v) || !json_string_length(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.%s: must be a non-empty string", at, key);
	*out = json_string_value(v);
	return LF_OK;
}

static enum lf_err load_steps(struct mrule *r, const json_t *list,
			      const char *at, struct lf_why *why)
{
	static const char *const step_keys[] = {
		"response",  "error",	   "cassette",
		"overrides", "sets_state", NULL,
	};
	char sat[96];
	const json_t *s;
	struct mstep *st;
	enum lf_err rc;
	size_t i;
	int n;

	if (!json_is_array(list) || !json_array_size(list))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.responses: must be a non-empty list", at);
	r->steps = calloc(json_array_size(list), sizeof(*r->steps));
	if (!r->steps)
		return lf_fail(why, LF_NOMEM, "out of memory");
	json_array_foreach(list, i, s)
	{
		st = &r->steps[i];
		r->nsteps = i + 1;
		snprintf(sat, sizeof(sat), "%s.responses[%zu]", at, i);
		rc = mocks_check_keys(s, step_keys, sat, why);
		if (rc)
			return rc;
		n = !!json_object_get(s, "response") +
		    !!json_object_get(s, "error") +
		    !!json_object_get(s, "cassette");
		if (n != 1)
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s: needs exactly one of response, error, cassette",
				sat);
		if (json_object_get(s, "overrides") &&
		    !json_object_get(s, "cassette"))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.overrides: only with a cassette",
				       sat);
		rc = opt_str(s, "sets_state", &st->sets_state, sat, why);
		if (rc)
			return rc;
		if (st->sets_state && !r->scenario)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.sets_state: requires a scenario",
				       sat);
		if (json_object_get(s, "cassette")) {
			rc = load_cassette(&st->pay, s, sat, why);
			if (rc)
				return rc;
		} else if (json_object_get(s, "error")) {
			st->pay.kind = PAY_ERROR;
			st->pay.value = json_object_get(s, "error");
		} else {
			st->pay.kind = PAY_RESPONSE;
			st->pay.value = json_object_get(s, "response");
		}
	}
	return LF_OK;
}

static enum lf_err load_rule(struct mrule *r, const json_t *obj, const char *at,
			     struct lf_why *why)
{
	static const char *const keys[] = {
		"tool",	 "name",      "note",	    "description", "case_id",
		"when",	 "scenario",  "when_state", "sets_state",  "response",
		"error", "responses", "cassette",   "overrides",   NULL,
	};
	static const char *const strs[] = {"name", "note", "description"};
	const char *k, *problem;
	const json_t *when, *v;
	enum lf_err rc;
	size_t i;
	int n;

	rc = mocks_check_keys(obj, keys, at, why);
	if (rc)
		return rc;
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		v = json_object_get(obj, strs[i]);
		if (v && !json_is_string(v))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.%s: must be a string", at, strs[i]);
	}
	if ((rc = opt_str(obj, "tool", &r->tool, at, why)))
		return rc;
	if (!r->tool)
		return lf_fail(why, LF_EINVAL_DOC, "%s.tool: required", at);
	if ((problem = mocks_pattern_problem(r->tool)))
		return lf_fail(why, LF_EINVAL_DOC, "%s.tool: %s: '%.60s'", at,
			       problem, r->tool);
	if ((rc = opt_str(obj, "case_id", &r->case_id, at, why)))
		return rc;
	if (r->case_id && (problem = mocks_pattern_problem(r->case_id)))
		return lf_fail(why, LF_EINVAL_DOC, "%s.case_id: %s: '%.60s'",
			       at, problem, r->case_id);
	if ((rc = opt_str(obj, "scenario", &r->scenario, at, why)) ||
	    (rc = opt_str(obj, "when_state", &r->when_state, at, why)) ||
	    (rc = opt_str(obj, "sets_state", &r->sets_state, at, why)))
		return rc;
	if (r->when_state && !r->scenario)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.when_state: requires a scenario", at);
	if (r->sets_state && !r->scenario)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.sets_state: requires a scenario", at);
	when = json_object_get(obj, "when");
	if (when && !json_is_object(when))
		return lf_fail(why, LF_EINVAL_DOC, "%s.when: must be a mapping",
			       at);
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
	n = !!json_object_get(obj, "response") +
	    !!json_object_get(obj, "error") +
	    !!json_object_get(obj, "responses") +
	    !!json_object_get(obj, "cassette");
	if (n != 1)
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s: needs exactly one of response, error, responses, cassette",
			at);
	if (json_object_get(obj, "overrides") &&
	    !json_object_get(obj, "cassette"))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.overrides: only with a cassette", at);
	if ((v = json_object_get(obj, "responses")))
		return load_steps(r, v, at, why);
	if (json_object_get(obj, "cassette"))
		return load_cassette(&r->pay, obj, at, why);
	if ((v = json_object_get(obj, "error"))) {
		r->pay.kind = PAY_ERROR;
		r->pay.value = v;
	} else {
		r->pay.kind = PAY_RESPONSE;
		r->pay.value = json_object_get(obj, "response");
	}
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

/* All patterns of one document together: ledgerfs-policy(5) PATTERNS. */
static enum lf_err bound_patterns(const struct mrule *r, size_t *total,
				  const char *at, struct lf_why *why)
{
	size_t j;

	for (j = 0; j < r->nconds; j++)
		*total += pattern_size(r->conds[j].re);
	if (*total > PATTERN_MAX_DOC)
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s: the document's patterns compile to more than the bound of %u bytes",
			at, PATTERN_MAX_DOC);
	return LF_OK;
}

enum lf_err mocks_load(json_t *doc, struct mocks **out, struct lf_why *why)
{
	static const char *const top_keys[] = {
		"version", "mocks", "name", "description", NULL,
	};
	struct mocks *m = NULL;
	const json_t *list, *v;
	const char *k;
	char at[40];
	enum lf_err rc;
	size_t i, compiled = 0;

	*out = NULL;
	if (!json_is_object(doc))
		return lf_fail(why, LF_EINVAL_DOC,
			       "mocks: the document must be a mapping");
	json_object_foreach(doc, k, v)
	{
		if (!strcmp(k, "cassette_dir"))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"cassette_dir: cassette_dir must be resolved by ledgerctl before loading");
		if (!mocks_key_in(k, top_keys))
			return lf_fail(why, LF_EINVAL_DOC,
				       "unknown top-level key '%.60s'", k);
	}
	v = json_object_get(doc, "version");
	if (v && !(json_is_integer(v) && json_integer_value(v) == 1))
		return lf_fail(why, LF_EINVAL_DOC, "version: must be 1");
	list = json_object_get(doc, "mocks");
	if (list && !json_is_array(list) && !json_is_null(list))
		return lf_fail(why, LF_EINVAL_DOC, "mocks: must be a list");
	m = calloc(1, sizeof(*m));
	if (!m)
		return lf_fail(why, LF_NOMEM, "out of memory");
	m->n = json_array_size(list);
	m->rules = calloc(m->n ? m->n : 1, sizeof(*m->rules));
	m->order = calloc(m->n ? m->n : 1, sizeof(*m->order));
	if (!m->rules || !m->order) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	for (i = 0; i < m->n; i++) {
		snprintf(at, sizeof(at), "mocks[%zu]", i);
		m->rules[i].index = (int)i;
		m->order[i] = &m->rules[i];
		rc = load_rule(&m->rules[i], json_array_get(list, i), at, why);
		if (rc)
			goto fail;
		rc = bound_patterns(&m->rules[i], &compiled, at, why);
		if (rc)
			goto fail;
	}
	qsort(m->order, m->n, sizeof(*m->order), rule_cmp);
	m->doc = json_incref(doc);
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

		for (j = 0; j < r->nconds; j++)
			pattern_free(r->conds[j].re);
		free(r->conds);
		json_decref(r->pay.resolved);
		for (j = 0; j < r->nsteps; j++)
			json_decref(r->steps[j].pay.resolved);
		free(r->steps);
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
