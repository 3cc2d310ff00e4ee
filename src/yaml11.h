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

/*
 * An explicitly tagged scalar, as PyYAML's constructors read its text:
 * !!float (construct_yaml_float: '_' dropped, any case, base 60, else
 * Python's float(), so 1e3 is 1000.0), NULL with *problem when it does
 * not fit or JSON cannot hold it; !!bool (yes/no/true/false/on/off in
 * any case), NULL when it does not fit.
 */
json_t *yaml11_construct_float(const char *s, const char **problem);
json_t *yaml11_construct_bool(const char *s);

#endif
