/* SPDX-License-Identifier: MIT */
/*
 * commit.h - group commit: the appends of many ledgers made durable by
 * one flush.  A call is acknowledged only after its row is durable; when
 * several cases append at once, one flush covers all of them instead of
 * each paying for its own (ledgerfs(8) OPTIONS, --sync=group).
 */
#ifndef LF_COMMIT_H
#define LF_COMMIT_H

#include <stdatomic.h>
#include <stdbool.h>

struct commit_group;
struct journal;
struct journal_row;

/*
 * The name of the filesystem holding fs_fd when syncfs(2) is known to
 * write and flush its files as fdatasync does (ext4, xfs, btrfs, tmpfs),
 * else NULL: there a group would not be durable, so each append keeps
 * its own fdatasync.
 */
const char *commit_fs_name(int fs_fd);

/*
 * A group for the filesystem that holds fs_fd (borrowed; the backing
 * folder).  A batch of rows that all went to one ledger is flushed with
 * fdatasync of that ledger; a batch over several ledgers with one syncfs
 * of the filesystem.  NULL when out of memory.
 */
struct commit_group *commit_group_new(int fs_fd);
void commit_group_free(struct commit_group *g);

/*
 * Make everything written to fd (a ledger) before this call durable,
 * together with whatever other threads are waiting for at the same
 * time.  Returns 0, or an errno value: the flush that covered this
 * write failed, so the data may be lost (never retry).
 */
int commit_group_sync(struct commit_group *g, int fd);

/*
 * The same, for a write that only overwrote bytes already on disk (a row
 * in a ledger's padding, ledgerfs-ledger(5) PADDING): when every write
 * of a batch is one, on ext4 or xfs, the batch is flushed without a
 * journal commit: each ledger's pages written and waited for, then one
 * fdatasync, which flushes the disk's cache for them all.
 */
int commit_group_sync_data(struct commit_group *g, int fd);

/*
 * The same for one ledger row, which a group with a journal writes there
 * instead of flushing the ledger (ledgerfs(8) --sync=journal).
 */
int commit_group_sync_row(struct commit_group *g, int fd, bool data_only,
			  const struct journal_row *row);

/*
 * What runs once the flush that covers a row nobody waits for is over:
 * rc 0 (durable) or an errno value (it may be lost).
 */
typedef void (*commit_done_fn)(void *arg, int rc);

/*
 * The same as commit_group_sync_row without waiting: the row joins the
 * pending batch and done(arg, rc) runs, on the thread that led the flush
 * covering it, once that flush is over (ledgerfs(8) --sync=group).
 * failed is its ledger's flag: the first flush error of any of its rows
 * is stored there before the next batch can be told, and a row of a
 * ledger already failed is told that error, flushed or not.  done must
 * not block or take a lock that a thread appending may hold.  0, or
 * ENOMEM (nothing joined).  The row is not flushed until a thread calls
 * commit_group_kick or waits on the group.
 */
int commit_group_enqueue(struct commit_group *g, int fd, bool data_only,
			 const struct journal_row *row, atomic_int *failed,
			 commit_done_fn done, void *arg);

/*
 * Lead a flush of what is pending, and of what is written meanwhile,
 * unless a flush runs already (it goes on to them): returns at once then.
 */
void commit_group_kick(struct commit_group *g);

/*
 * Wait until every row pending now has been flushed (leading the flush
 * when none runs): 0, or that flush's error.  The done of a row in a
 * flush that ran when this was called may still be running on its
 * leader; ledger_settle waits for those of one ledger.
 */
int commit_group_barrier(struct commit_group *g);

/*
 * Wait until *count is zero, where count goes down (futex_count_down)
 * as rows nobody waits for are told: leads their flush when none runs.
 */
void commit_group_wait_told(struct commit_group *g, atomic_int *count);

/*
 * Once no row is enqueued any more (a stop): wait until every row
 * nobody waits for is flushed and its done has run.
 */
void commit_group_drain(struct commit_group *g);

/*
 * Give the group a journal (journal.h; owned from here on): every batch
 * of rows is made durable by one write and fdatasync of it, and the
 * ledgers by one syncfs each time it is full.
 */
void commit_group_set_journal(struct commit_group *g, struct journal *j);

/*
 * With a journal, once no append runs any more (a clean stop): every
 * ledger flushed, and the journal started again, empty.
 */
void commit_group_checkpoint(struct commit_group *g);

/* How many flushes and how many waits the group has done (for status). */
void commit_group_counts(struct commit_group *g, unsigned long long *flushes,
			 unsigned long long *waits);

#endif
