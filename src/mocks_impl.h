/* SPDX-License-Identifier: MIT */
/*
 * mocks_impl.h - the mock library's internal shape, shared by mocks.c
 * (load) and mocks_resolve.c (resolve, state, coverage).  The shape
 * follows ASSERT's MockLibrary: one backend per rule (inline, scenario,
 * replay), chosen by `backend:` or by the rule's keys.
 */
#ifndef LF_MOCKS_IMPL_H
#define LF_MOCKS_IMPL_H

#include <jansson.h>
#include <stdbool.h>

#include "pattern.h"

enum mocks_op {
	OP_EQ,
	OP_NE,
	OP_GT,
	OP_GTE,
	OP_LT,
	OP_LTE,
	OP_CONTAINS,
	OP_REGEX,
	OP_IN,
	OP_ANY,
	OP_ABSENT,
};

/*
 * One `when` entry, tried in the document's order.  key and operand
 * borrow from the document; opname is the operator as ASSERT normalises
 * it (trimmed, lower case), NULL for a plain value.
 */
struct mcond {
	const char *key;
	enum mocks_op op;
	char *opname;
	const json_t *operand;
	struct pattern *re; /* OP_REGEX */
};

enum mbackend { BK_INLINE, BK_SCENARIO, BK_REPLAY };

struct mrule {
	int index;
	char *tool, *case_id, *note; /* trimmed; note "" when none */
	enum mbackend backend;
	const json_t *raw; /* the rule's mapping, borrowed */
	struct mcond *conds;
	size_t nconds;
	/* scenario: the steps (own array of borrowed step mappings) */
	char *scenario;	  /* str(scenario) */
	char *when_state; /* str(when_state), NULL when absent or null */
	json_t *steps;
	/* replay */
	const json_t *cassette; /* inline cassette, or NULL */
	char *cassette_name;	/* str(cassette_file), or NULL: the tool */
	const json_t *overrides;
	size_t noverrides;
};

struct mocks {
	json_t *doc;
	const json_t *cassettes; /* stem -> recording, or NULL: no folder */
	struct mrule *rules;
	size_t n;
	const struct mrule **order; /* the order rules are tried in */
};

/* Scenario states (scenario -> string) and cursors (key -> integer). */
struct mocks_state {
	json_t *states;
	json_t *cursors;
};

/* A scenario rule that serves only in one state. */
static inline bool waits_for_state(const struct mrule *r)
{
	return r->backend == BK_SCENARIO && r->when_state;
}

/*
 * Per rule in trying order: 1 fits the call, 0 does not or not tried, 2
 * the rule's `when` is an error (ASSERT's HTTP 400), with its text.
 */
struct mocks_fit {
	size_t n;
	char error[sizeof(((struct lf_why *)0)->msg)];
	unsigned char fits[];
};

#endif
