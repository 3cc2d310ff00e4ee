/* SPDX-License-Identifier: MIT */
/*
 * relay_py.h - the few Python behaviours ASSERT's host mediator leans on
 * when it reads a request (truthiness, str(), strip(), repr() of a
 * string), so the relay reads a request as ASSERT reads it.
 */
#ifndef LF_RELAY_PY_H
#define LF_RELAY_PY_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* bool(v) for a decoded JSON value; an absent value (NULL) is false. */
bool py_truthy(const json_t *v);

/*
 * str(v or "") or None: *out NULL for a false value, else a new string:
 * a string as it is, an integer in decimal, true as "True".  Returns -1
 * (with *out NULL) for a true value of another type (a real, a list, an
 * object), which the relay refuses where ASSERT would print its repr.
 */
int py_str(const json_t *v, char **out);

/* str.strip() in place: Python's white space (str.isspace) at both ends. */
void py_strip(char *s);

/*
 * prefix followed by repr(s), as Python writes a str: single quotes
 * unless s holds a single quote and no double quote; backslash, the
 * quote, \t \n \r and other control bytes escaped.  Cut to size.
 */
void py_repr(const char *s, char *buf, size_t size, const char *prefix);

#endif
