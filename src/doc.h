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

/*
 * Parse text[0..len) as JSON when it parses as JSON (its first non-blank
 * byte is '{' or '['), else as a single YAML document (block or flow
 * style: ASSERT files often write `{match: x}`).  YAML plain scalars
 * resolve by the YAML 1.2 core schema (null, true/false, integers,
 * floats; everything else a string); quoted scalars are strings.  Anchors
 * and aliases, tags other than the core ones, several documents, and
 * anything over the DOC_MAX_* bounds are refused.
 * Returns a new reference, or NULL with why set to "line L column C: ...".
 */
json_t *doc_parse(const char *text, size_t len, struct lf_why *why);

/*
 * Read a whole regular file from fd (bounded by DOC_MAX_BYTES; a file
 * that grows while read is refused) and doc_parse it.  New reference.
 */
json_t *doc_load_fd(int fd, struct lf_why *why);

/* Open path and doc_load_fd it.  New reference, or NULL with why. */
json_t *doc_load_file(const char *path, struct lf_why *why);

#endif
