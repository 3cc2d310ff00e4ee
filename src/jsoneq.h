/* SPDX-License-Identifier: MIT */
/*
 * jsoneq.h - JSON value equality as the contract defines it: numbers by
 * value (2 equals 2.0), true never equals 1, key order never matters;
 * and copying chosen keys between rows, replies and events.
 */
#ifndef LF_JSONEQ_H
#define LF_JSONEQ_H

#include <jansson.h>
#include <stdbool.h>

/* Both borrowed.  Depth is bounded by the documents' own parse limits. */
bool json_value_equal(const json_t *a, const json_t *b);

/* Set on dst each of keys[0..n) that src has (values shared, not copied). */
void json_copy_keys(json_t *dst, const json_t *src, const char *const *keys,
		    size_t n);

#endif
