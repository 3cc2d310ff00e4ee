/* SPDX-License-Identifier: MIT */
/*
 * mocks_resolve.c - what a mocked call returns once mocks_fit.c has said
 * which rules fit: scenario state and cursors, the fallback chain, and the
 * replay of recorded decisions at restart.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"
#include "mocks.h"
#include "mocks_impl.h"
#include "mocks_json.h"
#include "policy.h"
#include "pyval.h"

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

/* The cursor key: per (scenario, tool), as ASSERT keys it. malloc'd. */
static char *cursor_key(const struct mrule *r, const char *tool)
{
	size_t len = strlen(tool) + strlen(r->scenario) + 4;
	char *k = malloc(len);

	if (k)
		snprintf(k, len, "%s\x1f%s", r->scenario, tool);
	return k;
}

/* A malloc'd printf. */
static char *fmt_dup(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static char *fmt_dup(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

static bool state_fits(const struct mrule *r, const struct mocks_state *st)
{
	return !waits_for_state(r) ||
	       !strcmp(state_of(st, r->scenario), r->when_state);
}

/* ---- resolve ------------------------------------------------------- */

static json_t *step_payload(const json_t *step, bool *is_error)
{
	const json_t *v = json_object_get(step, "error");

	*is_error = v != NULL;
	return json_deep_copy(v ? v : json_object_get(step, "response"));
}

/* ScenarioBackend.resolve: the cursor moves, then sets_state applies. */
static enum lf_err serve_scenario(const struct mrule *r, struct mocks_state *st,
				  const char *tool, struct mock_result *out,
				  json_t *detail, char **note,
				  struct lf_why *why)
{
	size_t n = json_array_size(r->steps);
	const json_t *step, *sets;
	const char *after;
	char *key = cursor_key(r, tool), *before = NULL, *to = NULL;
	json_int_t cur;

	if (!key)
		return lf_fail(why, LF_NOMEM, "out of memory");
	cur = json_integer_value(json_object_get(st->cursors, key));
	step = json_array_get(r->steps,
			      cur < (json_int_t)n ? (size_t)cur : n - 1);
	before = strdup(state_of(st, r->scenario));
	sets = json_object_get(step, "sets_state");
	if (sets)
		to = pyval_str(sets);
	out->returned = step_payload(step, &out->is_error);
	if (!before || (sets && !to) || !out->returned ||
	    json_object_set_new(st->cursors, key,
				json_integer(cur < INT_MAX ? cur + 1 : cur)) ||
	    (to &&
	     json_object_set_new(st->states, r->scenario, json_string(to)))) {
		free(key);
		free(before);
		free(to);
		return lf_fail(why, LF_NOMEM, "out of memory");
	}
	free(key);
	free(to);
	after = state_of(st, r->scenario);
	out->step = (int)(cur < INT_MAX ? cur : INT_MAX);
	out->scenario = r->scenario;
	out->scenario_state = after;
	json_object_set_new(detail, "scenario", json_string(r->scenario));
	json_object_set_new(detail, "step", json_integer(cur));
	json_object_set_new(detail, "state", json_string(after));
	if (strcmp(before, after))
		*note = fmt_dup("%s: %s -> %s", r->scenario, before, after);
	else
		*note = fmt_dup("%s: %s", r->scenario, after);
	free(before);
	return *note ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

/* ReplayBackend.resolve: the recording, with its overrides applied. */
static enum lf_err serve_replay(const struct mocks *lib, const struct mrule *r,
				const char *tool, struct mock_result *out,
				json_t *detail, struct lf_why *why)
{
	const json_t *base = r->cassette;
	const char *name = r->cassette_name ? r->cassette_name : tool;
	struct lf_why inner;
	char *stem, *rn;

	if (!base) {
		stem = mocks_cassette_stem(name, &inner);
		if (!stem)
			return lf_fail(why, LF_EINVAL_JSON,
				       "cassette for '%.60s' could not be read "
				       "safely: %s",
				       tool, inner.msg);
		base = json_object_get(lib->cassettes, stem);
		free(stem);
		if (!base) {
			rn = pyval_repr_text(name);
			lf_fail(why, LF_EINVAL_JSON,
				"cassette not found for '%.60s': %.80s", tool,
				rn ? rn : "");
			free(rn);
			return LF_EINVAL_JSON;
		}
	}
	out->returned = mocks_apply_overrides(base, r->overrides, why);
	if (!out->returned)
		return why->msg[0] ? LF_EINVAL_JSON : LF_NOMEM;
	out->source = r->noverrides ? "override" : "replay";
	json_object_set_new(
		detail, "replay_origin",
		json_string(r->cassette ? "inline" : "cassette_file"));
	json_object_set_new(detail, "overrides",
			    json_integer((json_int_t)r->noverrides));
	return LF_OK;
}

static const char *const backend_names[] = {
	[BK_INLINE] = "inline",
	[BK_SCENARIO] = "scenario",
	[BK_REPLAY] = "replay",
};

/* MockLibrary.resolve + the mediator's replay dict for the chosen rule. */
static enum lf_err serve_rule(const struct mocks *lib, const struct mrule *r,
			      struct mocks_state *st, const char *tool,
			      struct mock_result *out, struct lf_why *why)
{
	json_t *detail = json_object(), *names;
	char *note = NULL;
	enum lf_err e = LF_OK;
	size_t i, j;

	if (!detail)
		return lf_fail(why, LF_NOMEM, "out of memory");
	out->source = "inline";
	if (r->backend == BK_INLINE)
		out->returned = step_payload(r->raw, &out->is_error);
	else if (r->backend == BK_SCENARIO)
		e = serve_scenario(r, st, tool, out, detail, &note, why);
	else
		e = serve_replay(lib, r, tool, out, detail, why);
	if (e == LF_OK && !out->returned)
		e = lf_fail(why, LF_NOMEM, "out of memory");
	if (e != LF_OK)
		goto fail;
	out->mock_rule = r->index;
	json_object_set_new(detail, "mock_rule", json_string(r->tool));
	json_object_set_new(detail, "backend",
			    json_string(backend_names[r->backend]));
	if (r->nconds) {
		/* sorted(rule.when): UTF-8 byte order is code point order */
		names = json_array();
		for (i = 0; names && i < r->nconds; i++) {
			for (j = json_array_size(names); j > 0; j--)
				if (strcmp(json_string_value(json_array_get(
						   names, j - 1)),
					   r->conds[i].key) <= 0)
					break;
			json_array_insert_new(names, j,
					      json_string(r->conds[i].key));
		}
		json_object_set_new(detail, "matched_args", names);
	}
	if (r->case_id)
		json_object_set_new(detail, "matched_case_id",
				    json_string(r->case_id));
	if (*r->note)
		json_object_set_new(detail, "note", json_string(r->note));
	if (note)
		json_object_set_new(detail, "state", json_string(note));
	free(note);
	out->replay = detail;
	return LF_OK;
fail:
	free(note);
	json_decref(detail);
	json_decref(out->returned);
	out->returned = NULL;
	return e;
}

/* The first of mock, poison, inject that the rule has (its value). */
static const json_t *inline_payload(const json_t *rule)
{
	static const char *const keys[] = {"mock", "poison", "inject"};
	size_t i;

	for (i = 0; i < 3; i++)
		if (json_object_get(rule, keys[i]))
			return json_object_get(rule, keys[i]);
	return NULL;
}

/* ActionMediator._mock: the policy rule's payload and its provenance. */
static enum lf_err policy_payload(const char *tool, const json_t *rule,
				  const json_t *cassettes,
				  struct mock_result *out, struct lf_why *why)
{
	const json_t *ov = json_object_get(rule, "overrides");
	const json_t *cas = json_object_get(rule, "cassette");
	const json_t *file = NULL, *base;
	const char *declared = NULL;
	char *stem, *ms = NULL;
	size_t nov;

	if (!pyval_truthy(ov))
		ov = NULL;
	nov = json_array_size(ov);
	if (json_is_null(cas))
		cas = NULL;
	if (!cas && cassettes) {
		const char *refused;

		stem = mocks_cassette_stem(tool, why);
		if (!stem)
			return LF_EINVAL_JSON;
		file = json_object_get(cassettes, stem);
		/* ASSERT's cassette_exists raises for a link or a folder. */
		refused = mocks_cassette_refused(cassettes, stem);
		free(stem);
		if (refused)
			return lf_fail(why, LF_EINVAL_JSON, "%s", refused);
	}
	if (pyval_truthy(json_object_get(rule, "mock_source"))) {
		char *p;

		ms = pyval_str(json_object_get(rule, "mock_source"));
		if (!ms)
			return lf_fail(why, LF_NOMEM, "out of memory");
		p = ms;
		while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
			p++;
		memmove(ms, p, strlen(p) + 1);
		for (p = ms + strlen(ms);
		     p > ms &&
		     (p[-1] == ' ' || (p[-1] >= '\t' && p[-1] <= '\r'));)
			*--p = '\0';
		for (p = ms; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p - 'A' + 'a');
		if (!strcmp(ms, "inline") || !strcmp(ms, "replay") ||
		    !strcmp(ms, "override"))
			declared = ms;
	}
	out->source = nov ? "override"
		      : declared
			      ? (strcmp(declared, "inline") == 0   ? "inline"
				 : strcmp(declared, "replay") == 0 ? "replay"
								   : "override")
		      : (cas || file) ? "replay"
				      : "inline";
	free(ms);
	if (strcmp(out->source, "inline")) {
		json_t *ok = NULL;

		base = cas ? cas : file;
		if (!base) {
			/* No recording: the authored payload, else ok. */
			base = inline_payload(rule);
			if (!base)
				base = ok = json_pack("{s:s}", "status", "ok");
			out->source = nov ? "override" : "inline";
		}
		out->returned = !base ? NULL
				: nov ? mocks_apply_overrides(base, ov, why)
				      : json_deep_copy(base);
		json_decref(ok);
		if (!out->returned)
			return why->msg[0] ? LF_EINVAL_JSON
					   : lf_fail(why, LF_NOMEM,
						     "out of memory");
		out->replay = json_pack("{s:s, s:I}", "source",
					cas ? "inline" : "cassette_file",
					"overrides", (json_int_t)nov);
		return out->replay ? LF_OK
				   : lf_fail(why, LF_NOMEM, "out of memory");
	}
	base = inline_payload(rule);
	if (base && !json_is_null(base))
		out->returned = json_deep_copy(base);
	else
		out->returned = json_pack(
			"{s:s, s:o}", "status", "ok", "note",
			json_sprintf("No mock payload configured for %s; "
				     "sandbox returned a placeholder.",
				     tool));
	return out->returned ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

enum lf_err mocks_resolve_fit(const struct mocks *lib, struct mocks_state *st,
			      const char *case_id, const char *tool,
			      const json_t *args, const json_t *policy_rule,
			      const json_t *policy_cassettes,
			      const struct mocks_fit *fit,
			      struct mock_result *out, struct lf_why *why)
{
	struct mocks_state *scratch = NULL;
	struct mocks_fit *own = NULL;
	struct pattern_budget b;
	enum lf_err e;
	size_t i;

	memset(out, 0, sizeof(*out));
	why->msg[0] = '\0';
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
		if (fit->fits[i] == 2) {
			e = lf_fail(why, LF_EINVAL_JSON, "%s", fit->error);
			goto out;
		}
		if (!fit->fits[i] || !state_fits(lib->order[i], st))
			continue;
		/* No state given (a dry run): a fresh one, then dropped. */
		if (!st && !(st = scratch = mocks_state_new())) {
			e = lf_fail(why, LF_NOMEM, "out of memory");
			goto out;
		}
		e = serve_rule(lib, lib->order[i], st, tool, out, why);
		if (scratch) {
			out->scenario_state = NULL;
			mocks_state_free(scratch);
		}
		goto out;
	}
	e = policy_payload(tool, policy_rule, policy_cassettes, out, why);
out:
	mocks_fit_free(own);
	return e;
}

enum lf_err mocks_resolve(const struct mocks *lib, struct mocks_state *st,
			  const char *case_id, const char *tool,
			  const json_t *args, const json_t *policy_rule,
			  const json_t *policy_cassettes,
			  struct mock_result *out, struct lf_why *why)
{
	return mocks_resolve_fit(lib, st, case_id, tool, args, policy_rule,
				 policy_cassettes, NULL, out, why);
}

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
	if (r->backend != BK_SCENARIO)
		return LF_OK;
	key = cursor_key(r, tool);
	if (!key)
		return lf_fail(why, LF_NOMEM, "out of memory");
	cur = json_integer_value(json_object_get(st->cursors, key));
	if (json_object_set_new(st->cursors, key,
				json_integer(cur < INT_MAX ? cur + 1 : cur))) {
		free(key);
		return lf_fail(why, LF_NOMEM, "out of memory");
	}
	free(key);
	if (state_after && json_object_set_new(st->states, r->scenario,
					       json_string(state_after)))
		return lf_fail(why, LF_NOMEM, "out of memory");
	return LF_OK;
}

void mocks_result_clear(struct mock_result *r)
{
	json_decref(r->returned);
	json_decref(r->replay);
	r->returned = NULL;
	r->replay = NULL;
}
