/*
 * mocks_impl.h - the mock library's internal shape, shared by mocks.c
 * (load) and mocks_resolve.c (resolve, state, coverage).
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

/* One `when` entry.  key and operand borrow from the document. */
struct mcond {
	const char *key;
	bool pointer;
	enum mocks_op op;
	const json_t *operand;
	struct pattern *re; /* OP_REGEX */
};

enum pay_kind { PAY_RESPONSE, PAY_ERROR, PAY_CASSETTE };

/* A payload: value borrows; resolved (cassette + overrides) is owned. */
struct mpay {
	enum pay_kind kind;
	const json_t *value;
	json_t *resolved;
	bool overridden;
};

struct mstep {
	struct mpay pay;
	const char *sets_state;
};

struct mrule {
	int index;
	const char *tool, *case_id, *scenario, *when_state, *sets_state;
	struct mcond *conds;
	size_t nconds;
	struct mpay pay; /* unused when steps */
	struct mstep *steps;
	size_t nsteps;
};

struct mocks {
	json_t *doc;
	struct mrule *rules;
	size_t n;
	const struct mrule **order; /* the order rules are tried in */
};

/* Scenario states (scenario -> string) and cursors (key -> integer). */
struct mocks_state {
	json_t *states;
	json_t *cursors;
};

#endif
