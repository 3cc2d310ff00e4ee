/* SPDX-License-Identifier: MIT */
/*
 * yaml11.h - PyYAML's resolution of plain YAML scalars (YAML 1.1).
 */
#ifndef LF_YAML11_H
#define LF_YAML11_H

#include <jansson.h>

/*
 * A plain scalar as PyYAML's safe_load resolves it: null, booleans,
 * integers, floats, else a string.  Returns a new reference, or NULL with
 * *problem set (a value JSON cannot hold, or no memory).
 */
json_t *yaml11_resolve_plain(const char *s, const char **problem);

#endif
