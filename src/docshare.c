/* SPDX-License-Identifier: MIT */
/*
 * docshare.c - the table of loaded documents (see docshare.h).  Its lock
 * is taken only when a document is set or a case is freed, never on the
 * call path.
 */
#include "docshare.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "doc.h"

#define DOCSHARE_BUCKETS 256

static pthread_mutex_t docshare_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shared_doc *docshare_table[DOCSHARE_BUCKETS];

static unsigned docshare_bucket(const char *digest)
{
	return (unsigned)strtoul((char[3]){digest[0], digest[1], 0}, NULL, 16);
}

static void docshare_free(struct shared_doc *d)
{
	policy_free(d->policy);
	mocks_free(d->mocks);
	free(d->text);
	free(d);
}

/* Parse and load outside the lock: a large document must not stall others. */
static struct shared_doc *docshare_load(enum doc_kind kind, const char *text,
					size_t len, const char *digest,
					enum lf_err *err, struct lf_why *why)
{
	struct shared_doc *d = calloc(1, sizeof(*d));
	json_t *doc;

	if (!d || !(d->text = malloc(len + 1))) {
		free(d);
		*err = lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(d->text, text, len);
	d->text[len] = '\0';
	d->len = len;
	d->kind = kind;
	d->refs = 1;
	memcpy(d->digest, digest, sizeof(d->digest));
	doc = doc_parse(text, len, why);
	if (!doc)
		*err = LF_EINVAL_DOC;
	else if (kind == DOC_POLICY)
		*err = policy_load(doc, &d->policy, why);
	else
		*err = mocks_load(doc, &d->mocks, why);
	json_decref(doc);
	if (*err != LF_OK) {
		docshare_free(d);
		return NULL;
	}
	return d;
}

struct shared_doc *docshare_get(enum doc_kind kind, const char *text,
				size_t len, enum lf_err *err,
				struct lf_why *why)
{
	char digest[CHAIN_HEX_LEN + 1];
	struct shared_doc *d, *fresh;
	unsigned b;

	chain_sha256_hex(text, len, digest);
	b = docshare_bucket(digest);
	pthread_mutex_lock(&docshare_lock);
	for (d = docshare_table[b]; d; d = d->next)
		if (d->kind == kind && strcmp(d->digest, digest) == 0) {
			d->refs++;
			pthread_mutex_unlock(&docshare_lock);
			*err = LF_OK;
			return d;
		}
	pthread_mutex_unlock(&docshare_lock);
	fresh = docshare_load(kind, text, len, digest, err, why);
	if (!fresh)
		return NULL;
	pthread_mutex_lock(&docshare_lock);
	for (d = docshare_table[b]; d; d = d->next)
		if (d->kind == kind && strcmp(d->digest, digest) == 0)
			break;
	if (d) { /* another thread loaded it meanwhile */
		d->refs++;
	} else {
		fresh->next = docshare_table[b];
		docshare_table[b] = d = fresh;
		fresh = NULL;
	}
	pthread_mutex_unlock(&docshare_lock);
	if (fresh)
		docshare_free(fresh);
	return d;
}

void docshare_put(struct shared_doc *d)
{
	struct shared_doc **pp;

	if (!d)
		return;
	pthread_mutex_lock(&docshare_lock);
	if (--d->refs) {
		pthread_mutex_unlock(&docshare_lock);
		return;
	}
	for (pp = &docshare_table[docshare_bucket(d->digest)]; *pp;
	     pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	pthread_mutex_unlock(&docshare_lock);
	docshare_free(d);
}
