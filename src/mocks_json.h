/* SPDX-License-Identifier: MIT */
/*
 * mocks_json.h - JSON helpers shared by the policy and mocks modules:
 * tool-pattern checks and key checks.
 */
#ifndef LF_MOCKS_JSON_H
#define LF_MOCKS_JSON_H

#include <jansson.h>

#include "err.h"
#include <stdbool.h>

/*
 * NULL when pattern is a valid tool pattern (exact, "*", "prefix*",
 * "*suffix"), else a static reason.
 */
const char *mocks_pattern_problem(const char *pattern);

/* Is key one of the NULL-terminated list? */
bool mocks_key_in(const char *key, const char *const *list);

/*
 * obj must be a mapping whose keys are all in the NULL-terminated keys;
 * `at` names it in the reason (e.g. "interactions[2]").
 */
enum lf_err mocks_check_keys(const json_t *obj, const char *const *keys,
			     const char *at, struct lf_why *why);

#endif
