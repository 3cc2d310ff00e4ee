/* SPDX-License-Identifier: MIT */
/*
 * defer.h - a write of the view acknowledged once its rows are durable,
 * without a thread waiting for their flush.  While a deferral is open on
 * a thread, the rows the core appends there with group commit join the
 * pending batch and return at once; the deferral's callback runs when
 * the flush covering the last of them is over, on the thread that led
 * it (ledgerfs(8) --sync=group).  Knows nothing of FUSE.
 */
#ifndef LF_DEFER_H
#define LF_DEFER_H

#include <stdbool.h>

struct lf_defer;

/* err: 0 when every row is durable, else the first flush error. */
typedef void (*defer_done_fn)(void *arg, int err);

/*
 * Open a deferral on this thread (one at a time); NULL when out of
 * memory, and then the rows wait for their flush as before.  done must
 * not block, nor take a lock that a thread appending may hold.
 */
struct lf_defer *defer_open(defer_done_fn done, void *arg);

/*
 * Close the deferral of this thread: done(arg, err) runs exactly once,
 * now when no row of it is pending (none joined it, or a flush another
 * thread led has told them all already), else once the last one is told.
 * Returns whether any row joined it: the caller then kicks their group
 * (defer_kick) once it holds no lock of the core.
 */
bool defer_close(struct lf_defer *d);

/* Lead the flush of what is pending on the groups rows went to. */
void defer_kick(void);

/*
 * Make d the deferral of this thread (NULL: appends wait for their
 * flush), returning the one before: a write whose earlier lines must be
 * durable before its last is read sets NULL around them.
 */
struct lf_defer *defer_swap(struct lf_defer *d);

/* For ledger.c: the deferral open on this thread, or NULL. */
struct lf_defer *defer_current(void);

/* For ledger.c: one more row of d pending; its flush is over (err). */
void defer_hold(struct lf_defer *d);
void defer_release(struct lf_defer *d, int err);

/* For ledger.c: the group the row went to, for defer_kick. */
struct commit_group;
void defer_note_group(struct commit_group *g);

#endif
