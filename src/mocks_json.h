/*
 * mocks_json.h - JSON helpers shared by the policy and mocks modules:
 * tool-pattern checks, value equality, JSON Pointers and dotted paths.
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

/* NULL when ptr is a well-formed RFC 6901 pointer, else a static reason. */
const char *mocks_pointer_problem(const char *ptr);

/* Resolve an RFC 6901 pointer in root. Borrowed, or NULL when absent. */
const json_t *mocks_pointer_get(const json_t *root, const char *ptr);

/* Is key one of the NULL-terminated list? */
bool mocks_key_in(const char *key, const char *const *list);

/*
 * obj must be a mapping whose keys are all in the NULL-terminated keys;
 * `at` names it in the reason (e.g. "interactions[2]").  A cassette_file
 * key is refused: ledgerctl resolves those before a document is loaded.
 */
enum lf_err mocks_check_keys(const json_t *obj, const char *const *keys,
			     const char *at, struct lf_why *why);

#endif
