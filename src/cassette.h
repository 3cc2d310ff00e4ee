/*
 * cassette.h - host-side resolution of `cassette_file` references in
 * policy and mocks documents (used by ledgerctl before a document is sent
 * to the daemon, which never opens files named by a document).
 */
#ifndef LF_CASSETTE_H
#define LF_CASSETTE_H

#include <jansson.h>

#include "err.h"

/*
 * A new deep copy of doc (borrowed) where each `cassette_file: NAME` in a
 * policy interaction or default, a mocks rule or a `responses` step is
 * replaced by `cassette: <NAME parsed as YAML or JSON>`, and the top-level
 * `cassette_dir` is removed.  NAME is a plain file name in cassette_dir
 * (relative to the folder of doc_path; default that folder); names that
 * are empty or hold '/', "..", NUL, or that are symbolic links, are
 * refused.  New reference, or NULL with why naming the rule.
 */
json_t *cassette_inline(const json_t *doc, const char *doc_path,
			struct lf_why *why);

/* Read a policy or mocks file (YAML or JSON) and inline its cassette
 * files.  New reference, or NULL with why. */
json_t *cassette_load_file(const char *path, struct lf_why *why);

#endif
