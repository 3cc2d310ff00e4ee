/* SPDX-License-Identifier: MIT */
/*
 * mocks.h - the mock library: what a mocked call returns
 * (ledgerfs-policy(5) MOCKS).  It never changes a decision.  The library is
 * immutable once loaded; scenario state and cursors live in a per-case
 * struct mocks_state.
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
 * What a mocked call returns, as ASSERT's decision carries it.  returned
 * and replay are new references (replay NULL when empty).  source is
 * "inline", "replay" or "override".  mock_rule is the index of the mocks
 * rule used, or -1 when the payload came from the policy rule.
 * scenario/state point at strings owned by the library or state (NULL
 * when no scenario applied); state is the scenario's state after the call.
 */
struct mock_result {
	json_t *returned;
	json_t *replay;
	bool is_error;
	const char *source;
	int mock_rule;
	int step; /* the scenario cursor before the call, -1 when none */
	const char *scenario;
	const char *scenario_state;
};

/*
 * Resolve a mocked call as ASSERT's ActionMediator does: the library's
 * rule first (case-bound first, then more `when` keys, then file order),
 * else the policy rule's own payload (policy_rule may be NULL for the
 * default), looking recordings up by tool name in policy_cassettes (NULL:
 * the policy has no cassette folder).  A matcher that ASSERT answers with
 * an error (HTTP 400) returns LF_EINVAL_JSON with ASSERT's detail in why;
 * nothing moves then.  Deterministic: replaying the same calls in order
 * from a fresh state rebuilds the same state (used after a restart).
 */
enum lf_err mocks_resolve(const struct mocks *lib, struct mocks_state *st,
			  const char *case_id, const char *tool,
			  const json_t *args, const json_t *policy_rule,
			  const json_t *policy_cassettes,
			  struct mock_result *out, struct lf_why *why);

/*
 * The part of resolution that reads only the call (tool, case, `when`,
 * so every pattern), not the scenario state: it may run without the
 * case's lock.  Rules are tried in order until one fits that waits for no
 * state, or until one's `when` is an error (kept for mocks_resolve_fit,
 * which reports it only if no earlier rule serves).  *out is freed with
 * mocks_fit_free.  LF_PATTERN_LIMIT with why ("pattern_limit:
 * mocks[N].when.KEY.regex: ...") when b ran out.
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
			      const json_t *policy_cassettes,
			      const struct mocks_fit *fit,
			      struct mock_result *out, struct lf_why *why);

/*
 * After a restart: move st as serving mock rule number `rule` to tool did,
 * from the facts its decision row recorded (mock_rule, scenario_state),
 * without matching anything again (ledgerfs(8), RESTART).  A rule of -1
 * (a policy payload) moves nothing.
 */
enum lf_err mocks_state_replay(const struct mocks *lib, struct mocks_state *st,
			       const char *tool, int rule,
			       const char *state_after, struct lf_why *why);

/* Release what mocks_resolve returned in r. */
void mocks_result_clear(struct mock_result *r);

/*
 * ASSERT's _apply_overrides: a deep copy of base with each {path, value}
 * set along its dotted path (a list segment is an integer index, a
 * missing mapping key is added as {}).  New reference, or NULL with why
 * (LF_EINVAL_JSON, Python's own message) when a path cannot be applied.
 */
json_t *mocks_apply_overrides(const json_t *base, const json_t *overrides,
			      struct lf_why *why);

/*
 * ASSERT's rule for a cassette name: trimmed, not empty, no "..", "/",
 * "\" or NUL.  Returns the trimmed name (malloc'd) or NULL with why.
 */
char *mocks_cassette_stem(const char *name, struct lf_why *why);

/*
 * In a document's `cassettes` mapping, CASSETTE_REFUSED NAME holds why
 * NAME.json could not be a recording (a symbolic link, a folder): ASSERT's
 * reason, with which a call or rule that needs it is refused
 * (ledgerfs-policy(5) CASSETTE FILES).  No NAME holds a '/'.
 */
#define CASSETTE_REFUSED "/refused/"

/* That reason for stem, or NULL. */
const char *mocks_cassette_refused(const json_t *cassettes, const char *stem);

/*
 * Names of policy rules in mock mode that carry no payload of their own
 * (cassettes: the policy's recordings, policy_cassettes, or NULL) and
 * that no mock rule covers for every call (for `ledgerctl validate`).
 * New reference: a JSON array of strings.
 */
json_t *mocks_uncovered(const json_t *policy_doc, const struct mocks *lib,
			const json_t *cassettes);

#endif
