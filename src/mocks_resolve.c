/*
 * mocks_resolve.c - what a mocked call returns: rule choice, `when`
 * operators, scenario state and cursors, the fallback chain, and the
 * coverage check used by `ledgerctl validate`.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"
#include "mocks.h"
#include "mocks_impl.h"
#include "mocks_json.h"
#include "policy.h"

static const char START[] = "start";

/* ---- state --------------------------------------------------------- */

struct mocks_state *mocks_state_new(void)
{
	struct mocks_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->states = json_object();
	s->cursors = json_object();
	if (!s->states || !s->cursors) {
		mocks_state_free(s);
		return NULL;
	}
	return s;
}

void mocks_state_free(struct mocks_state *s)
{
	if (!s)
		return;
	json_decref(s->states);
	json_decref(s->cursors);
	free(s);
}

/* A scenario's state: borrowed from st, or the static "start". */
static const char *state_of(const struct mocks_state *st, const char *scenario)
{
	const char *v = NULL;

	if (st && scenario)
		v = json_string_value(json_object_get(st->states, scenario));
	return v ? v : START;
}

/*
 * The cursor key: per (scenario, tool), or per (rule, tool) for a rule
 * with steps but no scenario.  A unit separator keeps the parts apart.
 * Returns malloc'd memory.
 */
static char *cursor_key(const struct mrule *r, const char *tool)
{
	size_t len =
		strlen(tool) + (r->scenario ? strlen(r->scenario) : 0) + 32;
	char *k = malloc(len);

	if (!k)
		return NULL;
	if (r->scenario)
		snprintf(k, len, "s:%s\x1f%s", r->scenario, tool);
	else
		snprintf(k, len, "r:%d\x1f%s", r->index, tool);
	return k;
}

/* ---- when ---------------------------------------------------------- */

static bool contains(const json_t *arg, const json_t *operand)
{
	size_t i;

	if (json_is_string(arg)) {
		return json_is_string(operand) &&
		       memmem(json_string_value(arg), json_string_length(arg),
			      json_string_value(operand),
			      json_string_length(operand)) != NULL;
	}
	if (json_is_array(arg)) {
		for (i = 0; i < json_array_size(arg); i++)
			if (json_value_equal(json_array_get(arg, i), operand))
				return true;
		return false;
	}
	if (json_is_object(arg))
		return json_is_string(operand) &&
		       json_object_get(arg, json_string_value(operand));
	return false;
}

static int num_cmp(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		return x < y ? -1 : x > y;
	}
	double x = json_number_value(a), y = json_number_value(b);
	return x < y ? -1 : x > y;
}

/* 1 fits, 0 does not, -1 a pattern ran out of budget (why says where). */
static int cond_fits(const struct mrule *r, const struct mcond *c,
		     const json_t *args, struct pattern_budget *b,
		     struct lf_why *why)
{
	const json_t *a;
	struct lf_why pwhy;
	bool found;
	size_t i;

	a = c->pointer ? mocks_pointer_get(args, c->key)
		       : json_object_get(args, c->key);
	if (c->op == OP_ABSENT)
		return json_is_true(c->operand) ? !a : a != NULL;
	if (!a)
		return false;
	switch (c->op) {
	case OP_EQ:
		return json_value_equal(a, c->operand);
	case OP_NE:
		return !json_value_equal(a, c->operand);
	case OP_GT:
		return json_is_number(a) && num_cmp(a, c->operand) > 0;
	case OP_GTE:
		return json_is_number(a) && num_cmp(a, c->operand) >= 0;
	case OP_LT:
		return json_is_number(a) && num_cmp(a, c->operand) < 0;
	case OP_LTE:
		return json_is_number(a) && num_cmp(a, c->operand) <= 0;
	case OP_CONTAINS:
		return contains(a, c->operand);
	case OP_REGEX:
		if (!json_is_string(a))
			return false;
		if (pattern_search(c->re, json_string_value(a),
				   json_string_length(a), b, &found, &pwhy)) {
			lf_fail(why, LF_PATTERN_LIMIT,
				"pattern_limit: mocks[%d].when.%.60s.regex: %s",
				r->index, c->key, pwhy.msg);
			return -1;
		}
		return found;
	case OP_IN:
		for (i = 0; i < json_array_size(c->operand); i++)
			if (json_value_equal(a, json_array_get(c->operand, i)))
				return true;
		return false;
	case OP_ANY:
		return true;
	default:
		return false;
	}
}

/*
 * Does the call fit r's tool, case and `when`?  What reads only the call,
 * not the scenario state: 1, 0, or -1 with why (a pattern's budget).
 */
static int args_fit(const struct mrule *r, const char *case_id,
		    const char *tool, const json_t *args,
		    struct pattern_budget *b, struct lf_why *why)
{
	size_t i;
	int fit;

	if (!policy_match_tool(r->tool, tool))
		return 0;
	if (r->case_id && (!case_id || !policy_match_tool(r->case_id, case_id)))
		return 0;
	for (i = 0; i < r->nconds; i++)
		if ((fit = cond_fits(r, &r->conds[i], args, b, why)) <= 0)
			return fit;
	return 1;
}

/* Per rule in trying order: 1 fits the call, 0 does not or not tried. */
struct mocks_fit {
	size_t n;
	unsigned char fits[];
};

enum lf_err mocks_fit(const struct mocks *lib, const char *case_id,
		      const char *tool, const json_t *args,
		      struct pattern_budget *b, struct mocks_fit **out,
		      struct lf_why *why)
{
	struct mocks_fit *f;
	size_t i, n = lib ? lib->n : 0;
	int fit;

	*out = NULL;
	f = calloc(1, sizeof(*f) + n + 1);
	if (!f)
		return lf_fail(why, LF_NOMEM, "out of memory");
	f->n = n;
	for (i = 0; tool && i < n; i++) {
		fit = args_fit(lib->order[i], case_id, tool, args, b, why);
		if (fit < 0) {
			free(f);
			return LF_PATTERN_LIMIT;
		}
		f->fits[i] = (unsigned char)fit;
		/* A fitting rule with no state to wait for ends the search,
		 * as it ends ASSERT's: no later rule's pattern runs. */
		if (fit && !lib->order[i]->when_state)
			break;
	}
	*out = f;
	return LF_OK;
}

void mocks_fit_free(struct mocks_fit *f)
{
	free(f);
}

static bool state_fits(const struct mrule *r, const struct mocks_state *st)
{
	return !r->when_state ||
	       !strcmp(state_of(st, r->scenario), r->when_state);
}

/* ---- resolve ------------------------------------------------------- */

static enum lf_err serve_rule(const struct mrule *r, struct mocks_state *st,
			      const char *tool, struct mock_result *out,
			      struct lf_why *why)
{
	const struct mpay *pay = &r->pay;
	const char *sets = r->sets_state;
	json_int_t cur = 0;
	char *key = NULL;

	if (r->nsteps) {
		key = cursor_key(r, tool);
		if (!key)
			return lf_fail(why, LF_NOMEM, "out of memory");
		if (st)
			cur = json_integer_value(
				json_object_get(st->cursors, key));
		out->step = cur < (json_int_t)r->nsteps ? (int)cur
							: (int)r->nsteps - 1;
		pay = &r->steps[out->step].pay;
		if (r->steps[out->step].sets_state)
			sets = r->steps[out->step].sets_state;
	}
	out->returned = json_deep_copy(pay->kind == PAY_CASSETTE ? pay->resolved
								 : pay->value);
	if (!out->returned)
		goto nomem;
	/* The cursor stops growing at INT_MAX: the last step repeats anyway. */
	if (key && st && cur < INT_MAX &&
	    json_object_set_new(st->cursors, key, json_integer(cur + 1)))
		goto nomem;
	if (sets && st &&
	    json_object_set_new(st->states, r->scenario, json_string(sets)))
		goto nomem;
	free(key);
	out->is_error = pay->kind == PAY_ERROR;
	out->source = pay->kind != PAY_CASSETTE ? "inline"
		      : pay->overridden		? "override"
						: "replay";
	out->mock_rule = r->index;
	if (r->scenario) {
		out->scenario = r->scenario;
		out->scenario_state =
			st ? state_of(st, r->scenario) : (sets ? sets : START);
	}
	return LF_OK;
nomem:
	free(key);
	json_decref(out->returned);
	out->returned = NULL;
	return lf_fail(why, LF_NOMEM, "out of memory");
}

/* The policy rule's own payload, its cassette, or the placeholder. */
static enum lf_err fallback(const char *tool, const json_t *policy_rule,
			    struct mock_result *out, struct lf_why *why)
{
	static const char *const inline_keys[] = {"mock", "poison", "inject"};
	const json_t *v, *cassette = NULL;
	size_t i;

	for (i = 0; policy_rule && i < 3; i++) {
		v = json_object_get(policy_rule, inline_keys[i]);
		if (v) {
			out->returned = json_deep_copy(v);
			out->source = "inline";
			goto done;
		}
	}
	if (policy_rule)
		cassette = json_object_get(policy_rule, "cassette");
	if (cassette) {
		v = json_object_get(policy_rule, "overrides");
		/* policy_load applied the paths once: only memory can fail. */
		out->returned = mocks_apply_overrides(cassette, v, why);
		if (!out->returned)
			return lf_fail(why, LF_NOMEM, "out of memory");
		out->source = v ? "override" : "replay";
		return LF_OK;
	}
	out->returned = json_pack(
		"{s:s, s:o}", "status", "ok", "note",
		json_sprintf(
			"No mock payload configured for %s; sandbox returned a placeholder.",
			tool));
	out->source = "placeholder";
done:
	if (!out->returned)
		return lf_fail(why, LF_NOMEM, "out of memory");
	return LF_OK;
}

enum lf_err mocks_resolve_fit(const struct mocks *lib, struct mocks_state *st,
			      const char *case_id, const char *tool,
			      const json_t *args, const json_t *policy_rule,
			      const struct mocks_fit *fit,
			      struct mock_result *out, struct lf_why *why)
{
	struct mocks_fit *own = NULL;
	struct pattern_budget b;
	enum lf_err e;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->mock_rule = -1;
	out->step = -1;
	if (!tool)
		return lf_fail(why, LF_EINVAL_JSON, "no tool name");
	if (!fit) {
		pattern_budget_init(&b, PATTERN_CALL_MS);
		e = mocks_fit(lib, case_id, tool, args, &b, &own, why);
		if (e != LF_OK)
			return e;
		fit = own;
	}
	for (i = 0; lib && i < lib->n && i < fit->n; i++) {
		if (fit->fits[i] && state_fits(lib->order[i], st)) {
			e = serve_rule(lib->order[i], st, tool, out, why);
			goto out;
		}
	}
	e = fallback(tool, policy_rule, out, why);
out:
	mocks_fit_free(own);
	return e;
}

enum lf_err mocks_resolve(const struct mocks *lib, struct mocks_state *st,
			  const char *case_id, const char *tool,
			  const json_t *args, const json_t *policy_rule,
			  struct mock_result *out, struct lf_why *why)
{
	return mocks_resolve_fit(lib, st, case_id, tool, args, policy_rule,
				 NULL, out, why);
}

/* ---- coverage ------------------------------------------------------ */

static bool has_own_payload(const json_t *rule)
{
	return json_object_get(rule, "mock") ||
	       json_object_get(rule, "poison") ||
	       json_object_get(rule, "inject") ||
	       json_object_get(rule, "cassette");
}

/* A rule that fits every call to its tool: no case, when or state. */
static bool unconditional(const struct mrule *r)
{
	return (!r->case_id || !strcmp(r->case_id, "*")) && !r->nconds &&
	       !r->when_state;
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

json_t *mocks_uncovered(const json_t *policy_doc, const struct mocks *lib)
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
		if (!match || !mock_mode(rule) || has_own_payload(rule) ||
		    covered(match, lib))
			continue;
		json_array_append_new(
			out, json_sprintf("interactions[%zu] '%s'", i, match));
	}
	/* A mock-mode default serves every other tool: only "*" covers it. */
	def = json_object_get(policy_doc, "default");
	if (def && mock_mode(def) &&
	    !(json_is_object(def) && has_own_payload(def)) &&
	    !covered("*", lib))
		json_array_append_new(out, json_string("default '*'"));
	return out;
}

/* ---- restart ------------------------------------------------------- */

enum lf_err mocks_state_replay(const struct mocks *lib, struct mocks_state *st,
			       const char *tool, int rule,
			       const char *state_after, struct lf_why *why)
{
	const struct mrule *r;
	json_int_t cur;
	char *key;

	if (!lib || !st || !tool || rule < 0 || (size_t)rule >= lib->n)
		return LF_OK;
	r = &lib->rules[rule];
	if (r->nsteps) {
		key = cursor_key(r, tool);
		if (!key)
			return lf_fail(why, LF_NOMEM, "out of memory");
		cur = json_integer_value(json_object_get(st->cursors, key));
		if (cur < INT_MAX &&
		    json_object_set_new(st->cursors, key,
					json_integer(cur + 1))) {
			free(key);
			return lf_fail(why, LF_NOMEM, "out of memory");
		}
		free(key);
	}
	if (r->scenario && state_after &&
	    json_object_set_new(st->states, r->scenario,
				json_string(state_after)))
		return lf_fail(why, LF_NOMEM, "out of memory");
	return LF_OK;
}
