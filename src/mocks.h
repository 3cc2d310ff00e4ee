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

struct mocks;
struct mocks_state;

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
 * Names of policy rules in mock mode that carry no payload of their own
 * and that no mock rule covers for every call (for `ledgerctl validate`).
 * New reference: a JSON array of strings.
 */
json_t *mocks_uncovered(const json_t *policy_doc, const struct mocks *lib);

#endif
