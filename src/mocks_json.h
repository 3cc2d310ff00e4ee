/*
 * mocks_json.h - JSON helpers shared by the policy and mocks modules:
 * tool-pattern checks, value equality, JSON Pointers and dotted paths.
 */
#ifndef LF_MOCKS_JSON_H
#define LF_MOCKS_JSON_H

#include <jansson.h>
#include <stdbool.h>

/*
 * NULL when pattern is a valid tool pattern (exact, "*", "prefix*",
 * "*suffix"), else a static reason.
 */
const char *mocks_pattern_problem(const char *pattern);

/*
 * JSON equality as a user means it: numbers compare by value (2 == 2.0),
 * true is not 1, object key order never matters.
 */
bool mocks_json_equal(const json_t *a, const json_t *b);

/* NULL when ptr is a well-formed RFC 6901 pointer, else a static reason. */
const char *mocks_pointer_problem(const char *ptr);

/* Resolve an RFC 6901 pointer in root. Borrowed, or NULL when absent. */
const json_t *mocks_pointer_get(const json_t *root, const char *ptr);

#endif
