/* SPDX-License-Identifier: MIT */
/*
 * doc_yaml.h - the YAML reader behind doc_parse (doc_yaml.c).
 */
#ifndef LF_DOC_YAML_H
#define LF_DOC_YAML_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/*
 * text[0..len) as one YAML document, by doc_parse's rules (doc.h).  A new
 * reference (null for an empty stream), or NULL with why set.
 */
json_t *doc_parse_yaml(const char *text, size_t len, struct lf_why *why);

#endif
