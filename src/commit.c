/* SPDX-License-Identifier: MIT */
/*
 * commit.c - group commit (see commit.h).
 *
 * Every appender joins the pending batch and sleeps; whoever finds no
 * flush running takes the whole batch, flushes it and wakes its members.
 * Rows written while a flush runs form the next batch, so under load one
 * flush covers many calls, and a lone appender pays one fdatasync as
 * before.  Each waiter learns the outcome of the very flush that covered
 * it: a failure reaches exactly the rows that may be lost.  One flush runs
 * at a time: two or three in flight were measured and were no faster,
 * since the filesystem commits its journal one transaction at a time.
 */
#include "commit.h"
#include "futex.h"
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

/* A waiter's state; it sleeps on its own word, so a flush wakes exactly
 * the waiters it covered, not every thread waiting on the group. */
enum { W_WAIT, W_DONE, W_LEAD };

struct commit_waiter {
	int fd;
	bool data_only; /* its write overwrote bytes already on disk */
	bool barrier;	/* writes nothing: waits for what is pending */
	const struct journal_row *row; /* the row, for the journal */
	int rc;			       /* written before state becomes W_DONE */
	bool taken; /* in a flush's batch (under the group lock) */
	atomic_int state;
	/* A row that nobody waits for (commit_group_enqueue): heap-held. */
	commit_done_fn done;
	void *arg;
	atomic_int *failed; /* its ledger's: the first flush error */
	atomic_int *untold; /* its group's count */
	struct journal_row own_row;
	struct commit_waiter *next;
};

struct commit_group {
	pthread_mutex_t lock;
	int fs_fd;
	bool data_flush; /* ext4 or xfs: see commit_group_sync_data */
	bool flushing;
	struct commit_waiter *pending;
	unsigned long long flushes, waits;
	struct journal *journal;  /* --sync=journal, else NULL */
	struct journal_row *rows; /* a batch's rows, oldest first */
	size_t rows_cap;
	bool broken; /* a checkpoint failed: nothing is acknowledged again */
	/*
	 * Rows nobody waits for, left pending when a waiter's lead ends: a
	 * thread of the group's own leads their flush (commit_lead).
	 */
	pthread_t helper;
	pthread_cond_t helper_cond;
	bool helper_started, helper_due, helper_stop;
	atomic_int untold; /* rows nobody waits for, not yet told */
};

/* Filesystems whose syncfs writes every dirty file and flushes the disk. */
static const struct {
	unsigned long magic;
	const char *name;
} commit_fs_known[] = {
	{EXT4_SUPER_MAGIC, "ext4"},
	{XFS_SUPER_MAGIC, "xfs"},
	{BTRFS_SUPER_MAGIC, "btrfs"},
	{TMPFS_MAGIC, "tmpfs"},
};

const char *commit_fs_name(int fs_fd)
{
	struct statfs st;
	size_t i;

	if (fstatfs(fs_fd, &st) < 0)
		return NULL;
	for (i = 0; i < sizeof(commit_fs_known) / sizeof(commit_fs_known[0]);
	     i++)
		if ((unsigned long)st.f_type == commit_fs_known[i].magic)
			return commit_fs_known[i].name;
	return NULL;
}

struct commit_group *commit_group_new(int fs_fd)
{
	struct commit_group *g = calloc(1, sizeof(*g));
	const char *name;

	if (!g)
		return NULL;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->helper_cond, NULL);
	g->fs_fd = fs_fd;
	name = commit_fs_name(fs_fd);
	/* Their fdatasync flushes the disk's cache even with nothing to write. */
	g->data_flush = name && (!strcmp(name, "ext4") || !strcmp(name, "xfs"));
	return g;
}

void commit_group_free(struct commit_group *g)
{
	if (!g)
		return;
	if (g->helper_started) {
		pthread_mutex_lock(&g->lock);
		g->helper_stop = true;
		pthread_cond_signal(&g->helper_cond);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->helper, NULL);
	}
	pthread_cond_destroy(&g->helper_cond);
	journal_close(g->journal);
	free(g->rows);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

/*
 * Flush one batch, without the lock, and set each waiter's outcome: one
 * ledger alone by fdatasync, several by one syncfs.  syncfs reports a
 * write error once per descriptor of the file system, so an error of one
 * ledger could be taken by an earlier batch; each ledger's own error is
 * then read from its descriptor.  SYNC_FILE_RANGE_WRITE too: on an ext4
 * that was shut down (a dead disk, EXT4_IOC_SHUTDOWN) writeback stops
 * before it records any error, so a later syncfs returns 0 and only an
 * attempt to write the ledger's still-dirty pages says EIO (found by
 * scripts/soak.sh).  After a good syncfs the pages are clean and the
 * write costs nothing.
 */
/* Write and wait for w's pages: 0 or an errno value. */
static int commit_write_wait(const struct commit_waiter *w)
{
	return sync_file_range(w->fd, 0, 0,
			       SYNC_FILE_RANGE_WAIT_BEFORE |
				       SYNC_FILE_RANGE_WRITE |
				       SYNC_FILE_RANGE_WAIT_AFTER) < 0
		       ? errno
		       : 0;
}

/*
 * A batch of overwrites only (commit_group_sync_data): start every
 * ledger's writeback, wait for each (its own error), then one fdatasync,
 * whose flush of the disk's cache covers every write completed before it.
 * No journal commit: nothing but data changed that a datasync needs.
 */
static void commit_flush_data(struct commit_waiter *batch, int fd)
{
	struct commit_waiter *w;
	int rc;

	for (w = batch; w; w = w->next)
		if (!w->barrier)
			sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	for (w = batch; w; w = w->next)
		w->rc = w->barrier ? 0 : commit_write_wait(w);
	rc = fdatasync(fd) < 0 ? errno : 0;
	for (w = batch; w; w = w->next)
		if (!w->rc)
			w->rc = rc;
}

/* One syncfs for the whole file system, each ledger's own error after. */
static void commit_syncfs(int fs_fd, struct commit_waiter *batch)
{
	struct commit_waiter *w;
	int rc = syncfs(fs_fd) < 0 ? errno : 0;

	for (w = batch; w; w = w->next)
		w->rc = rc ? rc : w->barrier ? 0 : commit_write_wait(w);
}

static void commit_flush_files(int fs_fd, bool data_flush,
			       struct commit_waiter *batch)
{
	struct commit_waiter *w;
	int rc, fd = -1;

	/* Barriers write nothing: the ledgers are the others' descriptors. */
	for (w = batch; w; w = w->next)
		if (!w->barrier && (fd < 0 || w->fd == fd))
			fd = w->fd;
		else if (!w->barrier)
			break;
	if (!w) {
		rc = fd >= 0 && fdatasync(fd) < 0 ? errno : 0;
		for (w = batch; w; w = w->next)
			w->rc = rc;
		return;
	}
	for (w = batch; data_flush && w; w = w->next)
		if (!w->barrier && !w->data_only)
			data_flush = false;
	if (data_flush) {
		commit_flush_data(batch, fd);
		return;
	}
	commit_syncfs(fs_fd, batch);
}

/* Every waiter of the batch gets rc. */
static void commit_set_rc(struct commit_waiter *batch, int rc)
{
	struct commit_waiter *w;

	for (w = batch; w; w = w->next)
		w->rc = rc;
}

/*
 * --sync=journal: the batch's rows, oldest first, to the journal with one
 * fdatasync.  When they do not fit, a checkpoint: one syncfs makes every
 * ledger durable (this batch's rows too), then the journal starts again.
 * A checkpoint that fails leaves the journal as it is, for the next
 * start to write back, and the group acknowledges nothing any more: a
 * later syncfs would not report that error again.
 */
static void commit_flush_journal(struct commit_group *g,
				 struct commit_waiter *batch)
{
	struct commit_waiter *w;
	size_t n = 0, i;
	int rc;

	for (w = batch; w; w = w->next)
		n += !w->barrier;
	if (n > g->rows_cap) {
		struct journal_row *nr = realloc(g->rows, n * sizeof(*nr));

		if (!nr) {
			commit_set_rc(batch, ENOMEM);
			return;
		}
		g->rows = nr;
		g->rows_cap = n;
	}
	/* The batch lists its newest waiter first. */
	for (w = batch, i = n; w; w = w->next) {
		if (w->barrier)
			continue;
		if (!w->row) {
			/* A write the journal cannot hold: flush the files. */
			commit_flush_files(g->fs_fd, false, batch);
			return;
		}
		g->rows[--i] = *w->row;
	}
	if (n == 0) {
		commit_set_rc(batch, 0);
		return;
	}
	rc = journal_write(g->journal, g->rows, n);
	if (rc != JOURNAL_FULL) {
		commit_set_rc(batch, rc);
		return;
	}
	/* Every ledger written since the last checkpoint, not only these. */
	commit_syncfs(g->fs_fd, batch);
	for (w = batch; w; w = w->next)
		if (w->rc) {
			g->broken = true;
			return;
		}
	rc = journal_restart(g->journal);
	if (rc) {
		g->broken = true;
		commit_set_rc(batch, rc);
	}
}

static void commit_flush(struct commit_group *g, struct commit_waiter *batch)
{
	if (g->broken)
		commit_set_rc(batch, EIO);
	else if (g->journal)
		commit_flush_journal(g, batch);
	else
		commit_flush_files(g->fs_fd, g->data_flush, batch);
}

/* Sleep while the waiter's state is W_WAIT; returns the new state. */
static int commit_sleep(struct commit_waiter *w)
{
	int st;

	while ((st = atomic_load_explicit(&w->state, memory_order_acquire)) ==
	       W_WAIT)
		futex_wait(&w->state, W_WAIT);
	return st;
}

/*
 * Wake w.  Once its state is W_DONE, w may return and its frame be gone;
 * the wake only names the address, and a stray wake is one that every
 * futex waiter already tolerates.
 */
static void commit_wake(struct commit_waiter *w)
{
	futex_wake(&w->state, 1);
}

/* Has the pending batch a waiter asleep on it (not me)?  Under the lock. */
static struct commit_waiter *commit_sleeper(struct commit_group *g,
					    const struct commit_waiter *me)
{
	struct commit_waiter *w;

	for (w = g->pending; w; w = w->next)
		if (!w->done && w != me)
			return w;
	return NULL;
}

/*
 * Before the lead passes on: a row nobody waits for that failed marks its
 * ledger failed, and one whose ledger failed earlier fails too, so no row
 * of a later batch of that ledger is acknowledged after a lost one,
 * whichever thread tells its batch first.
 */
static void commit_mark_failed(struct commit_waiter *batch)
{
	struct commit_waiter *w;
	int f;

	for (w = batch; w; w = w->next) {
		if (!w->done)
			continue;
		if (w->rc)
			atomic_store(w->failed, w->rc);
		else if ((f = atomic_load(w->failed)))
			w->rc = f;
	}
}

/*
 * Tell a flushed batch: rows nobody waits for through their callback,
 * oldest first, then the waiters, so a barrier's caller finds every
 * callback of its batch run.
 */
static void commit_tell(struct commit_waiter *batch,
			const struct commit_waiter *me)
{
	struct commit_waiter *w, *next, *rev = NULL, *sleepers = NULL;

	for (w = batch; w; w = next) {
		next = w->next; /* a sleeper may return once it is done */
		if (w->done) {
			w->next = rev;
			rev = w;
		} else if (w != me) {
			w->next = sleepers;
			sleepers = w;
		}
	}
	for (w = rev; w; w = next) {
		next = w->next;
		w->done(w->arg, w->rc);
		futex_count_down(w->untold);
		free(w);
	}
	for (w = sleepers; w; w = next) {
		next = w->next;
		atomic_store_explicit(&w->state, W_DONE, memory_order_release);
		commit_wake(w);
	}
}

static int commit_lead(struct commit_group *g, struct commit_waiter *me);

/* The group's own thread: leads when a waiter's lead ends (below). */
static void *commit_helper(void *arg)
{
	struct commit_group *g = arg;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (!g->helper_due && !g->helper_stop)
			pthread_cond_wait(&g->helper_cond, &g->lock);
		if (g->helper_stop)
			break;
		g->helper_due = false;
		if (!g->flushing && g->pending) {
			commit_lead(g, NULL);
			pthread_mutex_lock(&g->lock);
		}
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

/*
 * Under the lock: rows nobody waits for are pending and the thread that
 * led cannot go on (its caller waits for it).  Hand them to the helper,
 * started the first time; if it cannot start, go on after all (true).
 */
static bool commit_handoff(struct commit_group *g)
{
	if (!g->helper_started) {
		if (pthread_create(&g->helper, NULL, commit_helper, g))
			return true;
		g->helper_started = true;
	}
	g->helper_due = true;
	pthread_cond_signal(&g->helper_cond);
	return false;
}

/*
 * Lead flushes, under the lock on entry, unlocked on return: the pending
 * batch, then, for a kick, the next while only rows nobody waits for are
 * pending (they have no thread to hand the lead to); a batch with a
 * waiter asleep on it goes to that waiter.  A waiter that led (me, in the
 * first batch) returns after one flush, whatever the load: the rows left
 * go to the group's helper thread.
 */
static int commit_lead(struct commit_group *g, struct commit_waiter *me)
{
	struct commit_waiter *batch, *w, *heir;
	bool go_on;

	for (;;) {
		/*
		 * Every member of the batch wrote before joining it, and the
		 * flush starts after this point, so it covers them all.
		 */
		batch = g->pending;
		g->pending = NULL;
		for (w = batch; w; w = w->next)
			w->taken = true;
		g->flushing = true;
		g->flushes++;
		pthread_mutex_unlock(&g->lock);
		commit_flush(g, batch);
		commit_mark_failed(batch);
		pthread_mutex_lock(&g->lock);
		/* Rows written during this flush: hand the next one on. */
		heir = g->pending ? commit_sleeper(g, NULL) : NULL;
		go_on = g->pending && !heir && (!me || commit_handoff(g));
		if (heir)
			atomic_store_explicit(&heir->state, W_LEAD,
					      memory_order_release);
		/* Going on, the lead stays here while the batch is told. */
		g->flushing = go_on;
		pthread_mutex_unlock(&g->lock);
		if (heir)
			commit_wake(heir);
		commit_tell(batch, me);
		if (!go_on)
			return me ? me->rc : 0;
		pthread_mutex_lock(&g->lock);
	}
}

static int commit_group_wait(struct commit_group *g, int fd, bool data_only,
			     bool barrier, const struct journal_row *row)
{
	struct commit_waiter me = {.fd = fd,
				   .data_only = data_only,
				   .barrier = barrier,
				   .row = row};
	int lead = W_LEAD;

	atomic_init(&me.state, W_WAIT);
	pthread_mutex_lock(&g->lock);
	if (barrier && !g->pending && !g->flushing) {
		pthread_mutex_unlock(&g->lock);
		return 0;
	}
	me.next = g->pending;
	g->pending = &me;
	g->waits += !barrier;
	/* Lead only while still pending: once taken, a flush owns us. */
	while (me.taken || g->flushing) {
		pthread_mutex_unlock(&g->lock);
		if (commit_sleep(&me) == W_DONE)
			return me.rc;
		/* Asked to lead: unless a flush finished with us meanwhile. */
		pthread_mutex_lock(&g->lock);
		if (!atomic_compare_exchange_strong(&me.state, &lead, W_WAIT)) {
			pthread_mutex_unlock(&g->lock);
			return me.rc;
		}
		lead = W_LEAD;
	}
	return commit_lead(g, &me);
}

int commit_group_sync(struct commit_group *g, int fd)
{
	return commit_group_wait(g, fd, false, false, NULL);
}

int commit_group_sync_data(struct commit_group *g, int fd)
{
	return commit_group_wait(g, fd, true, false, NULL);
}

int commit_group_sync_row(struct commit_group *g, int fd, bool data_only,
			  const struct journal_row *row)
{
	return commit_group_wait(g, fd, data_only, false, row);
}

int commit_group_barrier(struct commit_group *g)
{
	return commit_group_wait(g, -1, false, true, NULL);
}

int commit_group_enqueue(struct commit_group *g, int fd, bool data_only,
			 const struct journal_row *row, atomic_int *failed,
			 commit_done_fn done, void *arg)
{
	size_t id = row && g->journal ? strlen(row->case_id) + 1 : 0;
	size_t n = row && g->journal ? row->n : 0;
	struct commit_waiter *w = calloc(1, sizeof(*w) + id + n);

	if (!w)
		return ENOMEM;
	w->fd = fd;
	w->data_only = data_only;
	w->done = done;
	w->arg = arg;
	w->failed = failed;
	w->untold = &g->untold;
	/* The journal writes the row's bytes after the caller has gone. */
	if (id) {
		char *p = (char *)(w + 1);

		memcpy(p, row->case_id, id);
		memcpy(p + id, row->line, n);
		w->own_row = (struct journal_row){.case_id = p,
						  .offset = row->offset,
						  .line = p + id,
						  .n = n};
		w->row = &w->own_row;
	}
	atomic_init(&w->state, W_WAIT);
	atomic_fetch_add(&g->untold, 1);
	pthread_mutex_lock(&g->lock);
	w->next = g->pending;
	g->pending = w;
	g->waits++;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

void commit_group_wait_told(struct commit_group *g, atomic_int *count)
{
	int u;

	while ((u = atomic_load(count)) != 0) {
		/* Lead their flush if none runs; then wait for the telling. */
		commit_group_barrier(g);
		u = atomic_load(count);
		if (u)
			futex_wait(count, u);
	}
}

void commit_group_drain(struct commit_group *g)
{
	commit_group_wait_told(g, &g->untold);
}

void commit_group_kick(struct commit_group *g)
{
	pthread_mutex_lock(&g->lock);
	if (g->flushing || !g->pending) {
		pthread_mutex_unlock(&g->lock);
		return;
	}
	commit_lead(g, NULL);
}

void commit_group_checkpoint(struct commit_group *g)
{
	if (!g->journal || g->broken || syncfs(g->fs_fd) < 0)
		return;
	if (journal_restart(g->journal) == 0)
		journal_write(g->journal, NULL, 0);
}

void commit_group_set_journal(struct commit_group *g, struct journal *j)
{
	journal_close(g->journal);
	g->journal = j;
}

void commit_group_counts(struct commit_group *g, unsigned long long *flushes,
			 unsigned long long *waits)
{
	pthread_mutex_lock(&g->lock);
	*flushes = g->flushes;
	*waits = g->waits;
	pthread_mutex_unlock(&g->lock);
}
