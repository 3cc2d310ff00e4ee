/*
 * jsoneq.h - JSON value equality as the contract defines it: numbers by
 * value (2 equals 2.0), true never equals 1, key order never matters.
 */
#ifndef LF_JSONEQ_H
#define LF_JSONEQ_H

#include <jansson.h>
#include <stdbool.h>

/* Both borrowed.  Depth is bounded by the documents' own parse limits. */
bool json_value_equal(const json_t *a, const json_t *b);

#endif
