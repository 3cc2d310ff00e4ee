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

/*
 * What a value is as a number, when it is one: its double, and its
 * integer when is_int.  Values that are numbers compare by value; others
 * by type and contents.
 */
typedef bool (*json_as_number)(const json_t *v, double *d, json_int_t *i,
			       bool *is_int);

/* Equality with num's idea of a number (Python's counts booleans). */
bool json_equal_with(const json_t *a, const json_t *b, json_as_number num);

/* Set on dst each of keys[0..n) that src has (values shared, not copied). */
void json_copy_keys(json_t *dst, const json_t *src, const char *const *keys,
		    size_t n);

#endif
