/* SPDX-License-Identifier: MIT */
/*
 * decision.c - decision rows and replies (see decision.h).
 */
#include "decision.h"

#include <stdlib.h>
#include <string.h>

#include "canon.h"
#include "jsoneq.h"

char *decision_add_newline(char *s)
{
	size_t n;
	char *t;

	if (!s)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}

void decision_host_result(json_t *row, json_t *returned, bool is_error)
{
	json_object_set_new(row, "returned", returned);
	json_object_set_new(row, "is_error", json_boolean(is_error));
	json_object_set_new(row, "real_executed", json_false());
	json_object_set_new(row, "execution_status",
			    json_string("not_executed"));
	json_object_set_new(row, "result_source", json_string("host_mediator"));
	json_object_set_new(row, "result_authoritative", json_true());
	json_object_set_new(row, "completion_status", json_string("complete"));
}

/* A passed call: its result is the target's to report, later. */
static void decision_pending(json_t *row)
{
	json_object_set_new(row, "returned", json_null());
	json_object_set_new(row, "is_error", json_null());
	json_object_set_new(row, "real_executed", json_null());
	json_object_set_new(row, "execution_status", json_string("pending"));
	json_object_set_new(row, "result_source", json_string("not_reported"));
	json_object_set_new(row, "completion_status", json_string("pending"));
}

static void decision_mock_provenance(json_t *row, struct mock_result *mr)
{
	json_object_set_new(row, "mock_source", json_string(mr->source));
	json_object_set_new(row, "mock_rule",
			    mr->mock_rule < 0 ? json_null()
					      : json_integer(mr->mock_rule));
	if (mr->step >= 0)
		json_object_set_new(row, "mock_step", json_integer(mr->step));
	if (mr->scenario) {
		json_object_set_new(row, "scenario", json_string(mr->scenario));
		json_object_set_new(row, "scenario_state",
				    json_string(mr->scenario_state));
	}
	/* ASSERT's `replay`: where the bytes came from (stolen). */
	if (mr->replay)
		json_object_set_new(row, "replay", mr->replay);
	mr->replay = NULL;
}

enum lf_err decision_fill(const struct policy *p, const struct mocks *m,
			  struct mocks_state *st, const char *case_id,
			  const char *tool, const json_t *args, json_t *row,
			  enum lf_mode *mode, struct lf_why *why)
{
	return decision_fill_fit(p, m, st, case_id, tool, args, NULL, row, mode,
				 why);
}

enum lf_err decision_fill_fit(const struct policy *p, const struct mocks *m,
			      struct mocks_state *st, const char *case_id,
			      const char *tool, const json_t *args,
			      const struct mocks_fit *fit, json_t *row,
			      enum lf_mode *mode, struct lf_why *why)
{
	struct policy_decision d;
	struct mock_result mr;
	enum lf_err e;

	policy_decide(p, tool, &d);
	*mode = d.mode;
	json_object_set_new(row, "mode", json_string(policy_mode_name(d.mode)));
	json_object_set_new(row, "matched", json_string(d.matched));
	json_object_set_new(row, "reason", json_string(d.reason));
	json_object_set_new(row, "policy_rule",
			    d.rule_index < 0 ? json_null()
					     : json_integer(d.rule_index));
	if (d.note && *d.note)
		json_object_set_new(row, "policy_note", json_string(d.note));
	switch (d.mode) {
	case LF_MODE_PASS:
		decision_pending(row);
		if (d.exec) {
			/* The host runs it (case_exec.c): not the target's. */
			json_object_set_new(row, "executor",
					    json_string("host"));
			json_object_set_new(row, "result_source",
					    json_string("host_executed"));
		}
		return LF_OK;
	case LF_MODE_BLOCK:
		decision_host_result(row, policy_block_payload(tool), true);
		return LF_OK;
	case LF_MODE_MOCK:
		e = mocks_resolve_fit(m, st, case_id, tool, args, d.rule,
				      policy_cassettes(p), fit, &mr, why);
		if (e != LF_OK)
			return e;
		decision_host_result(row, mr.returned, mr.is_error);
		mr.returned = NULL;
		decision_mock_provenance(row, &mr);
		mocks_result_clear(&mr);
		return LF_OK;
	}
	return lf_fail(why, LF_EINVAL_DOC, "unknown mode");
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * v with every mapping's keys in byte order (a new reference): replies
 * read back from the ledger see its canonical, sorted form, so every
 * reply shows nested objects that way.
 */
static json_t *sorted_copy(const json_t *v)
{
	const char **keys;
	const char *k;
	json_t *out, *e;
	size_t i, n;

	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, e)
		{
			json_array_append_new(out, sorted_copy(e));
		}
		return out;
	}
	if (!json_is_object(v))
		return json_incref((json_t *)v);
	n = json_object_size(v);
	keys = calloc(n ? n : 1, sizeof(*keys));
	out = json_object();
	if (!keys || !out) {
		free(keys);
		json_decref(out);
		return NULL;
	}
	i = 0;
	json_object_foreach((json_t *)v, k, e)
	{
		keys[i++] = k;
	}
	qsort(keys, n, sizeof(*keys), key_cmp);
	for (i = 0; i < n; i++)
		json_object_set_new(out, keys[i],
				    sorted_copy(json_object_get(v, keys[i])));
	free(keys);
	return out;
}

/* v as the reply shows it: a sorted copy, or v itself where the whole
 * reply is written in canonical form (which sorts it as it goes). */
static json_t *reply_value(const json_t *v, bool copy)
{
	return copy ? sorted_copy(v) : json_incref((json_t *)v);
}

/*
 * The reply object, ledgerfs(8) PROTOCOL: call_id and sequence, then
 * every key of ASSERT's decision payload in its order (mode,
 * real_executed, flagged, reason, decision_reason, matched, returned,
 * policy_note, mock_source and replay when set, is_error), then where the
 * result comes from.  mode stays third: ledgercall finds it by text.
 * With copy, returned and replay are sorted copies (a new reference).
 */
static json_t *reply_object(const json_t *row, bool copy)
{
	static const char *const ids[] = {"call_id", "sequence", "mode"};
	const char *mode = json_string_value(json_object_get(row, "mode"));
	const char *src =
		json_string_value(json_object_get(row, "result_source"));
	const json_t *v;
	json_t *r = json_object();
	bool pass = mode && strcmp(mode, "pass") == 0;
	/* A pass whose result is still the target's to report. */
	bool pending = pass && (!src || strcmp(src, "not_reported") == 0 ||
				strcmp(src, "target_reported") == 0);

	if (!r)
		return NULL;
	json_copy_keys(r, row, ids, sizeof(ids) / sizeof(ids[0]));
	json_object_set_new(
		r, "real_executed",
		json_boolean(!pending && json_is_true(json_object_get(
						 row, "real_executed"))));
	json_object_set_new(r, "flagged", json_boolean(!pass));
	v = json_object_get(row, "reason");
	if (v) {
		json_object_set(r, "reason", (json_t *)v);
		json_object_set(r, "decision_reason", (json_t *)v);
	}
	v = json_object_get(row, "matched");
	if (v)
		json_object_set(r, "matched", (json_t *)v);
	v = pending ? NULL : json_object_get(row, "returned");
	json_object_set_new(r, "returned",
			    v ? reply_value(v, copy) : json_null());
	v = json_object_get(row, "policy_note");
	if (json_string_length(v))
		json_object_set(r, "policy_note", (json_t *)v);
	v = json_object_get(row, "mock_source");
	if (json_string_length(v))
		json_object_set(r, "mock_source", (json_t *)v);
	v = json_object_get(row, "replay");
	if (json_object_size(v))
		json_object_set_new(r, "replay", reply_value(v, copy));
	json_object_set_new(
		r, "is_error",
		json_boolean(!pending &&
			     json_is_true(json_object_get(row, "is_error"))));
	json_object_set_new(r, "result_source",
			    json_string(pending ? "target_reported"
					: src	? src
						: "host_mediator"));
	json_object_set_new(r, "result_authoritative", json_boolean(!pending));
	if (json_is_true(json_object_get(row, "over_limit")))
		json_object_set_new(r, "over_limit", json_true());
	return r;
}

static bool is_container(const json_t *v)
{
	return json_is_object(v) || json_is_array(v);
}

char *decision_reply(const json_t *row)
{
	json_t *r = reply_object(row, false);
	char *s = NULL;

	/* Written in one pass where only returned and replay hold objects
	 * (always, for rows the daemon writes); otherwise, or where jansson
	 * must decide, from sorted copies as jansson writes them. */
	if (r && !is_container(json_object_get(row, "reason")) &&
	    !is_container(json_object_get(row, "matched")))
		s = canon_dump_in_order(r, NULL);
	if (!s) {
		json_decref(r);
		r = reply_object(row, true);
		s = r ? json_dumps(r, JSON_COMPACT | JSON_PRESERVE_ORDER)
		      : NULL;
	}
	json_decref(r);
	return decision_add_newline(s);
}
