/* SPDX-License-Identifier: MIT */
/*
 * strmap.h - an open-addressing map from short strings to indices.
 * Used for the case registry and each case's call index; it stores
 * only a hash and a caller-side index per slot, so a call costs a few
 * bytes here (the key lives once, in the caller's record).
 */
#ifndef LF_STRMAP_H
#define LF_STRMAP_H

#include <stddef.h>
#include <stdint.h>

struct strmap {
	uint32_t *slots; /* index + 1; 0 means empty */
	uint32_t *hashes;
	size_t cap; /* power of two, or 0 */
	size_t used;
};

/* Returns the key of the record with index i (caller-owned storage). */
typedef const char *(*strmap_key_fn)(void *ctx, uint32_t i);

void strmap_init(struct strmap *m);
void strmap_free(struct strmap *m);
/* Index of key, or -1. */
long strmap_find(const struct strmap *m, const char *key, strmap_key_fn fn,
		 void *ctx);
/* Add index i under key (which must not be present). 0, or -1 (no memory). */
int strmap_add(struct strmap *m, const char *key, uint32_t i, strmap_key_fn fn,
	       void *ctx);

#endif
