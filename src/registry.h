/* SPDX-License-Identifier: MIT */
/*
 * registry.h - every case of one daemon, by name.  Read-mostly: lookups
 * take a read lock, only creating a case takes the write lock, and no
 * lock here is held while a case does its work.
 */
#ifndef LF_REGISTRY_H
#define LF_REGISTRY_H

#include <stddef.h>

#include "case.h"
#include "chain.h"
#include "err.h"
#include "journal.h"

struct registry;

/*
 * Open the backing folder (cases/ is created when missing) and load every
 * case in it, verifying each ledger.  A case whose ledger does not verify
 * is not served; its name and reason are reported through warn().
 */
enum lf_err registry_open(const char *backing_dir,
			  const unsigned char key[CHAIN_KEY_BYTES],
			  const struct case_limits *lim,
			  void (*warn)(const char *name, const char *reason),
			  struct registry **out, struct lf_why *why);
void registry_free(struct registry *r);

/*
 * After serving, before the view's open files are freed: every row still
 * pending is flushed and its write told (ledger.h, deferred rows).
 */
void registry_drain(struct registry *r);

/*
 * Make every case's appends durable by group commit (commit.h): one
 * flush for the rows that cases append at the same time.  Returns the
 * backing filesystem's name, or NULL when syncfs is not known to be
 * durable there (each append then keeps its own fdatasync) or out of
 * memory.
 */
const char *registry_group_commit(struct registry *r);

/*
 * --sync=journal (size > 0): the group writes every batch of rows to the
 * commit journal (journal.h) of size bytes.  size 0: remove a journal an
 * earlier start left, now that its rows are in their ledgers.
 */
enum lf_err registry_journal(struct registry *r, unsigned long long size,
			     struct lf_why *why);

/* What registry_open found in the commit journal (journal_recover). */
const struct journal_report *registry_journal_report(const struct registry *r);
/* Rows flushed and flushes done by the group (0/0 without one). */
void registry_commit_counts(struct registry *r, unsigned long long *flushes,
			    unsigned long long *waits);

/* Borrowed: cases live as long as the registry. NULL when unknown. */
struct lf_case *registry_get(struct registry *r, const char *name);
enum lf_err registry_create(struct registry *r, const char *name,
			    struct lf_case **out, struct lf_why *why);
size_t registry_count(struct registry *r);
/* The i-th case in creation/load order, or NULL. */
struct lf_case *registry_at(struct registry *r, size_t i);

#endif
