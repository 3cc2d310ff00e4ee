/* SPDX-License-Identifier: MIT */
/*
 * policy.h - the mediation policy: whether a call passes, is mocked or is
 * blocked (ledgerfs-policy(5) POLICY).  Loaded once, then immutable and
 * shared read-only.
 */
#ifndef LF_POLICY_H
#define LF_POLICY_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

enum lf_mode { LF_MODE_PASS, LF_MODE_MOCK, LF_MODE_BLOCK };

struct policy;

/*
 * Tool-name matching shared by policy `match` and mocks `tool`:
 * exact name, "*", "prefix*" or "*suffix"; nothing else is a wildcard.
 */
bool policy_match_tool(const char *pattern, const char *tool);

/* "pass", "mock", "block". */
const char *policy_mode_name(enum lf_mode mode);

/*
 * Parse a mode spelling (case-insensitive, trimmed).  Returns 0 and sets
 * *mode, or -1 for an unknown spelling.
 */
int policy_parse_mode(const char *spelling, enum lf_mode *mode);

/*
 * Validate doc (borrowed; the policy keeps its own reference) and build a
 * policy.  Errors: LF_EINVAL_DOC with why naming the rule index and key,
 * e.g. "interactions[2].mode: unknown mode 'maybe'".
 */
enum lf_err policy_load(json_t *doc, struct policy **out, struct lf_why *why);
void policy_free(struct policy *p);

/* The loaded document (borrowed). */
const json_t *policy_doc(const struct policy *p);

/*
 * The outcome of policy_decide.  All pointers borrow from the policy and
 * live as long as it does.  rule is the matching interaction object, or
 * the default object (NULL when the policy has no default).
 */
struct policy_decision {
	enum lf_mode mode;
	int rule_index;	     /* index in interactions, -1 for the default */
	const char *matched; /* the rule's match, or "<default>" */
	const char *note;    /* str() of the rule's note, "" when none */
	const json_t *rule;  /* the interaction, NULL for the default */
	/* pass rules only: how the host runs the tool, or NULL (exec_spec.h) */
	const struct exec_spec *exec;
	char reason[1200]; /* "allowed by mediation policy rule 'X'" ... */
};

/* First rule whose match fits wins; no rule: the default (block if absent). */
void policy_decide(const struct policy *p, const char *tool,
		   struct policy_decision *out);

/*
 * The recordings of the policy's cassette folder, by stem (borrowed), or
 * NULL when it has none (ledgerctl adds them as `cassettes`).
 */
const json_t *policy_cassettes(const struct policy *p);

/*
 * The block payload {"status":"blocked","message":"Tool T was blocked by
 * sandbox mediation policy."}.  New reference.
 */
json_t *policy_block_payload(const char *tool);

#endif
