/* SPDX-License-Identifier: MIT */
/*
 * cassette.h - host-side recordings for policy and mocks documents (used
 * by ledgerctl before a document is sent to the daemon, which never opens
 * files named by a document).  A cassette folder is read whole, as
 * ASSERT's replay reads it: every regular NAME.json at its top.
 */
#ifndef LF_CASSETTE_H
#define LF_CASSETTE_H

#include <jansson.h>

#include "err.h"

/*
 * A new deep copy of doc (borrowed) ready for the daemon: the top-level
 * `cassette_dir` is removed and, when there is a cassette folder, every
 * recording in it is added as `cassettes: {NAME: value}`.  The folder is
 * dir when not NULL (as given), else the document's own `cassette_dir`
 * (relative to the folder of doc_path), else none.  A policy rule's
 * `cassette_file: NAME` is replaced by `cassette: <its recording>` (NAME,
 * or NAME without a final ".json").  Symbolic links are never followed
 * and names that are not safe stems are skipped, as ASSERT skips them.
 * New reference, or NULL with why naming the rule or file.
 */
json_t *cassette_inline(const json_t *doc, const char *doc_path,
			const char *dir, struct lf_why *why);

/*
 * The folder a document's `cassette_dir` names, resolved against the
 * document's folder (malloc'd), or NULL when it names none.
 */
char *cassette_dir_of(const json_t *doc, const char *doc_path);

/*
 * The cassette folder for a policy, as ASSERT's setup picks it: given
 * (ledgerctl's --cassettes), else the mocks file's cassette_dir.
 * malloc'd, or NULL: the policy's own cassette_dir, if any, applies.
 */
char *cassette_policy_dir(const char *given, const char *mocks_path);

/*
 * "FILE:LINE" for a loader's reason about file (whose path, such as
 * mocks[2].when.amount, names the key), or "FILE" when no line is found.
 */
void cassette_where(const char *file, const char *reason, char *out, size_t n);

/*
 * Read a policy or mocks file (YAML or JSON) and cassette_inline it with
 * dir.  New reference, or NULL with why.
 */
json_t *cassette_load_file(const char *path, const char *dir,
			   struct lf_why *why);

#endif
