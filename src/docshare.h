/* SPDX-License-Identifier: MIT */
/*
 * docshare.h - one loaded policy or mock library per distinct text.
 * A harness opens thousands of cases with the same documents; each case
 * holds a counted reference instead of its own parsed copy, so an idle
 * case stays small.  Loaded documents are immutable, so sharing is safe.
 */
#ifndef LF_DOCSHARE_H
#define LF_DOCSHARE_H

#include <stddef.h>

#include "err.h"
#include "mocks.h"
#include "policy.h"

enum doc_kind { DOC_POLICY, DOC_MOCKS };

struct shared_doc {
	enum doc_kind kind;
	unsigned long refs;
	char *text; /* as written, NUL-terminated */
	size_t len;
	struct policy *policy; /* DOC_POLICY */
	struct mocks *mocks;   /* DOC_MOCKS */
	char digest[65];
	struct shared_doc *next;
};

/*
 * A reference to the loaded document for text (parsed and validated when
 * first seen).  NULL with why (LF_EINVAL_DOC or LF_NOMEM in *err).
 */
struct shared_doc *docshare_get(enum doc_kind kind, const char *text,
				size_t len, enum lf_err *err,
				struct lf_why *why);
/* Drop a reference (NULL is fine). */
void docshare_put(struct shared_doc *d);

#endif
