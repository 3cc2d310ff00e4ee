/* SPDX-License-Identifier: MIT */
/*
 * canon.h - a JSON value in the ledger's canonical form (ledgerfs-ledger(5)
 * ROWS): byte for byte what jansson's json_dumps gives with JSON_COMPACT |
 * JSON_SORT_KEYS, written straight into one buffer.
 */
#ifndef LEDGERFS_CANON_H
#define LEDGERFS_CANON_H

#include <jansson.h>
#include <stddef.h>

/* A new NUL-terminated string (free() it) and its length in *len (may be
 * NULL); NULL wherever json_dumps would give NULL (a string that is not
 * UTF-8, a value that contains itself) or out of memory. */
char *canon_dump(const json_t *v, size_t *len);

/* The length canon_dump would give, without keeping the text: what
 * json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_SORT_KEYS) returns (0 where
 * it fails). */
size_t canon_size(const json_t *v);

/* obj's own members in the order they stand, every value within them in
 * canonical form: what json_dumps(JSON_COMPACT | JSON_PRESERVE_ORDER)
 * gives once every object inside obj is a copy with its keys sorted.
 * NULL out of memory, or where jansson would have to decide (canon_dump
 * says what it would). */
char *canon_dump_in_order(const json_t *obj, size_t *len);

/* canon_dump_slot's answer where it has no place to give. */
#define CANON_NO_SLOT ((size_t)-1)

/*
 * canon_dump of the object obj, and in *slot where a member named key,
 * which obj does not hold, goes in that text: so that canon_fill_slot
 * makes obj's canonical form with that member added without writing the
 * rest again (a row's line is its MAC's text with `mac` added).
 * *slot is CANON_NO_SLOT where obj holds key or jansson wrote the text.
 */
char *canon_dump_slot(const json_t *obj, const char *key, size_t *len,
		      size_t *slot);
/* text (len bytes, from canon_dump_slot) with "key":"value" at slot: a
 * new string, and its length in *out_len; NULL without a slot, where the
 * value is not UTF-8, or out of memory (then canon_dump the object). */
char *canon_fill_slot(const char *text, size_t len, size_t slot,
		      const char *key, const char *value, size_t *out_len);

#endif
