/* SPDX-License-Identifier: MIT */
/*
 * doc.h - a policy or mocks document, YAML or JSON text, as a jansson value.
 * The one place libyaml lives.
 */
#ifndef LF_DOC_H
#define LF_DOC_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

#define DOC_MAX_BYTES (16 * 1024 * 1024)
#define DOC_MAX_DEPTH 64
#define DOC_MAX_NODES 1000000
/* What aliases may add, all together (ledgerfs-policy(5) DOCUMENT SYNTAX). */
#define DOC_MAX_ALIAS_NODES 100000
#define DOC_MAX_ALIAS_BYTES (4 * 1024 * 1024)

/*
 * Parse text[0..len) as JSON when it parses as JSON (its first non-blank
 * byte is '{' or '['), else as a single YAML document (block or flow
 * style: ASSERT files often write `{match: x}`).  YAML reads as PyYAML's
 * safe_load reads it: YAML 1.1 plain scalars (yes/no/on/off, 0777,
 * 12:30, 1e3 a string), anchors, aliases (copied; at most
 * DOC_MAX_ALIAS_NODES nodes and DOC_MAX_ALIAS_BYTES bytes added) and
 * merge keys; quoted scalars are strings.  Tags other than the core ones,
 * several documents, keys that are not strings, duplicate keys and
 * anything over the DOC_MAX_* bounds are refused.
 * Returns a new reference, or NULL with why set to "line L column C: ...".
 */
json_t *doc_parse(const char *text, size_t len, struct lf_why *why);

/*
 * Read a whole regular file from fd (bounded by DOC_MAX_BYTES; a file
 * that grows while read is refused) and doc_parse it.  New reference.
 */
json_t *doc_load_fd(int fd, struct lf_why *why);

/*
 * The line (from 1) where the node at path ("mocks[2].when.amount", a
 * key's own line for a key) starts in YAML or JSON text, or 0 when there
 * is none: the loaders' reasons name a path, the reader wants a line.
 */
size_t doc_locate(const char *text, size_t len, const char *path);

/* Open path and doc_load_fd it.  New reference, or NULL with why. */
json_t *doc_load_file(const char *path, struct lf_why *why);

#endif
