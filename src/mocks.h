/*
 * mocks.h - the mock library: what a mocked call returns (DESIGN 6).
 * It never changes a decision.  The library is immutable once loaded;
 * scenario state and cursors live in a per-case struct mocks_state.
 */
#ifndef LF_MOCKS_H
#define LF_MOCKS_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "pattern.h"

struct mocks;
struct mocks_state;
struct mocks_fit;

/* Validate doc (borrowed) and build a library. LF_EINVAL_DOC with why. */
enum lf_err mocks_load(json_t *doc, struct mocks **out, struct lf_why *why);
void mocks_free(struct mocks *m);
const json_t *mocks_doc(const struct mocks *m);

/* Per-case scenario states (all "start") and cursors (all 0). */
struct mocks_state *mocks_state_new(void);
void mocks_state_free(struct mocks_state *s);

/*
 * What a mocked call returns.  returned is a new reference.  source is
 * one of "inline", "replay", "override", "placeholder".  mock_rule is the
 * index of the mocks rule used, or -1 when the payload came from the
 * policy rule or the placeholder.  scenario/state point at strings owned
 * by the library or state (NULL when no scenario applied); state is the
 * scenario's state after the call.
 */
struct mock_result {
	json_t *returned;
	bool is_error;
	const char *source;
	int mock_rule;
	int step; /* index in `responses`, -1 when the rule has none */
	const char *scenario;
	const char *scenario_state;
};

/*
 * Resolve a mocked call.  lib may be NULL (no mocks file).  policy_rule is
 * the policy interaction (or default) that decided mock; it may be NULL.
 * Chooses the rule (case-bound first, then more `when` keys, then file
 * order), advances its cursor, applies sets_state, and falls back to the
 * policy rule's mock/poison/inject, then its cassette + overrides, then
 * the placeholder.  Deterministic: replaying the same calls in order from
 * a fresh state rebuilds the same state (used after a restart).
 */
enum lf_err mocks_resolve(const struct mocks *lib, struct mocks_state *st,
			  const char *case_id, const char *tool,
			  const json_t *args, const json_t *policy_rule,
			  struct mock_result *out, struct lf_why *why);

/*
 * The part of resolution that reads only the call (tool, case, `when`,
 * so every pattern), not the scenario state: it may run without the
 * case's lock.  Rules are tried in order until one fits that waits for no
 * state.  *out is freed with mocks_fit_free.  LF_PATTERN_LIMIT with why
 * ("pattern_limit: mocks[N].when.KEY.regex: ...") when b ran out.
 */
enum lf_err mocks_fit(const struct mocks *lib, const char *case_id,
		      const char *tool, const json_t *args,
		      struct pattern_budget *b, struct mocks_fit **out,
		      struct lf_why *why);
void mocks_fit_free(struct mocks_fit *f);

/*
 * mocks_resolve with fit from mocks_fit for the same call and library
 * (NULL: computed here on a fresh per-call budget, so this may return
 * LF_PATTERN_LIMIT).  Only this part touches st.
 */
enum lf_err mocks_resolve_fit(const struct mocks *lib, struct mocks_state *st,
			      const char *case_id, const char *tool,
			      const json_t *args, const json_t *policy_rule,
			      const struct mocks_fit *fit,
			      struct mock_result *out, struct lf_why *why);

/*
 * After a restart: move st as serving mock rule number `rule` to tool did,
 * from the facts its decision row recorded (mock_rule, scenario_state),
 * without matching anything again (ledgerfs(8), RESTART).  A rule of -1
 * (a policy payload or the placeholder) moves nothing.
 */
enum lf_err mocks_state_replay(const struct mocks *lib, struct mocks_state *st,
			       const char *tool, int rule,
			       const char *state_after, struct lf_why *why);

/*
 * Apply dotted-path overrides [{path:"a.0.b", value:..}] to a deep copy of
 * cassette.  New reference, or NULL with why when a path does not resolve.
 */
json_t *mocks_apply_overrides(const json_t *cassette, const json_t *overrides,
			      struct lf_why *why);

/*
 * Names of policy rules in mock mode that carry no payload of their own
 * and that no mock rule covers for every call: one whose tool pattern
 * covers theirs and that has no case_id, when or when_state (for
 * `ledgerctl validate`).
 * New reference: a JSON array of strings.
 */
json_t *mocks_uncovered(const json_t *policy_doc, const struct mocks *lib);

#endif
