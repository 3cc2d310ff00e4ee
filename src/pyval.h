/* SPDX-License-Identifier: MIT */
/*
 * pyval.h - JSON values seen the way ASSERT's Python sees them: equality
 * (True == 1, 2 == 2.0), truthiness, str() and repr() text, type names.
 * ASSERT's reasons and error details embed these texts, so a reply can
 * only say what ASSERT says if they are rebuilt byte for byte
 * (ledgerfs-policy(5) DIFFERENCES FROM ASSERT lists where they cannot be).
 */
#ifndef LF_PYVAL_H
#define LF_PYVAL_H

#include <jansson.h>
#include <stdbool.h>

/* Python's a == b for values decoded from JSON (both borrowed). */
bool pyval_equal(const json_t *a, const json_t *b);

/* Python's bool(v): false for null, false, 0, 0.0, "", [] and {}. */
bool pyval_truthy(const json_t *v);

/* type(v).__name__: str, int, float, bool, NoneType, list, dict. */
const char *pyval_type_name(const json_t *v);

/* repr(v), malloc'd (NULL when out of memory). */
char *pyval_repr(const json_t *v);

/* str(v): a string's own text, repr() of anything else; malloc'd. */
char *pyval_str(const json_t *v);

/* repr() of the UTF-8 text s, malloc'd. */
char *pyval_repr_text(const char *s);

#endif
