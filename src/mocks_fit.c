/* SPDX-License-Identifier: MIT */
/*
 * mocks_fit.c - which mock rules fit a call: the `when` operators with
 * Python's comparisons, under the call's pattern budget.  Stateless, so
 * the daemon runs it without the case lock (ledgerfs-policy(5) MOCKS).
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

/* ---- when ---------------------------------------------------------- */

static bool py_number(const json_t *v, double *d)
{
	if (json_is_integer(v))
		*d = (double)json_integer_value(v);
	else if (json_is_real(v))
		*d = json_real_value(v);
	else
		return false;
	return true;
}

/*
 * 1 fits, 0 does not, -1 an error ASSERT answers with HTTP 400 (why),
 * -2 a pattern ran out of its budget (why says where), -3 the daemon's
 * heap for matching is in use by other calls (pattern.c).
 */
static int cond_fits(const struct mrule *r, const struct mcond *c,
		     const json_t *args, struct pattern_budget *b,
		     struct lf_why *why)
{
	struct lf_why pwhy;
	enum lf_err e2;
	bool found;
	const json_t *a = json_object_get(args, c->key), *e;
	double x, y;
	char *ra, *rb;
	size_t i;

	if (!c->opname)
		return a && pyval_equal(a, c->operand);
	if (c->op == OP_ABSENT)
		return !a == pyval_truthy(c->operand);
	if (!a)
		return 0;
	switch (c->op) {
	case OP_ANY:
		return 1;
	case OP_EQ:
		return pyval_equal(a, c->operand);
	case OP_NE:
		return !pyval_equal(a, c->operand);
	case OP_GT:
	case OP_GTE:
	case OP_LT:
	case OP_LTE:
		if (!py_number(a, &x) || !py_number(c->operand, &y)) {
			ra = pyval_repr(a);
			rb = pyval_repr(c->operand);
			lf_fail(why, LF_EINVAL_JSON,
				"operator '%s' needs numeric operands, got %s "
				"and %s",
				c->opname, ra ? ra : "?", rb ? rb : "?");
			free(ra);
			free(rb);
			return -1;
		}
		return c->op == OP_GT	 ? x > y
		       : c->op == OP_GTE ? x >= y
		       : c->op == OP_LT	 ? x < y
					 : x <= y;
	case OP_CONTAINS:
		if (json_is_string(a)) {
			ra = pyval_str(c->operand);
			i = ra &&
			    memmem(json_string_value(a), json_string_length(a),
				   ra, strlen(ra)) != NULL;
			free(ra);
			return (int)i;
		}
		if (json_is_array(a)) {
			json_array_foreach(a, i, e)
			{
				if (pyval_equal(e, c->operand))
					return 1;
			}
			return 0;
		}
		if (json_is_object(a)) {
			if (json_is_array(c->operand) ||
			    json_is_object(c->operand)) {
				lf_fail(why, LF_EINVAL_JSON,
					"unhashable type: '%s'",
					pyval_type_name(c->operand));
				return -1;
			}
			return json_is_string(c->operand) &&
			       json_object_get(a,
					       json_string_value(c->operand));
		}
		lf_fail(why, LF_EINVAL_JSON,
			"'contains' needs a string/list/mapping, got %s",
			pyval_type_name(a));
		return -1;
	case OP_IN:
		json_array_foreach(c->operand, i, e)
		{
			if (pyval_equal(a, e))
				return 1;
		}
		return 0;
	case OP_REGEX:
		if (!json_is_string(a))
			return 0;
		e2 = pattern_search(c->re, json_string_value(a),
				    json_string_length(a), b, &found, &pwhy);
		if (e2 == LF_MATCH_HEAP_FULL) {
			/* Not this call's doing: refused, to be sent again. */
			*why = pwhy;
			return -3;
		}
		if (e2 != LF_OK) {
			lf_fail(why, LF_PATTERN_LIMIT,
				"pattern_limit: mocks[%d].when.%.60s.regex: %s",
				r->index, c->key, pwhy.msg);
			return -2;
		}
		return found;
	case OP_ABSENT:
		break;
	}
	return 0;
}

/*
 * Does the call fit r's tool, case and `when`?  What reads only the call,
 * not the scenario state: 1, 0, or as cond_fits -1 / -2 / -3 with why.
 */
static int args_fit(const struct mrule *r, const char *case_id,
		    const char *tool, const json_t *args,
		    struct pattern_budget *b, struct lf_why *why)
{
	size_t i;
	int f;

	if (!policy_match_tool(r->tool, tool))
		return 0;
	if (r->case_id &&
	    !policy_match_tool(r->case_id, case_id ? case_id : ""))
		return 0;
	for (i = 0; i < r->nconds; i++) {
		f = cond_fits(r, &r->conds[i], args, b, why);
		if (f <= 0)
			return f;
	}
	return 1;
}

enum lf_err mocks_fit(const struct mocks *lib, const char *case_id,
		      const char *tool, const json_t *args,
		      struct pattern_budget *b, struct mocks_fit **out,
		      struct lf_why *why)
{
	struct mocks_fit *f;
	struct lf_why ferr;
	size_t i, n = lib ? lib->n : 0;
	int fit;

	*out = NULL;
	f = calloc(1, sizeof(*f) + n + 1);
	if (!f)
		return lf_fail(why, LF_NOMEM, "out of memory");
	f->n = n;
	for (i = 0; tool && i < n; i++) {
		fit = args_fit(lib->order[i], case_id, tool, args, b, &ferr);
		if (fit == -2 || fit == -3) {
			*why = ferr;
			free(f);
			return fit == -2 ? LF_PATTERN_LIMIT
					 : LF_MATCH_HEAP_FULL;
		}
		if (fit == -1) {
			/* ASSERT raises when it reaches this rule: no later
			 * rule is tried, an earlier one may still serve. */
			f->fits[i] = 2;
			memcpy(f->error, ferr.msg, sizeof(f->error));
			break;
		}
		f->fits[i] = (unsigned char)fit;
		/* A fitting rule with no state to wait for ends the search,
		 * as it ends ASSERT's: no later rule's pattern runs. */
		if (fit && !waits_for_state(lib->order[i]))
			break;
	}
	*out = f;
	return LF_OK;
}

void mocks_fit_free(struct mocks_fit *f)
{
	free(f);
}
