/* SPDX-License-Identifier: MIT */
/*
 * test_commit.c - group commit (src/commit.c) on a real filesystem, one
 * test per rule: which flush a batch gets, that a failure reaches the
 * rows of that flush and no others, and that concurrent appenders share
 * flushes without any of them returning before its flush.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commit.h"

/* On the disk, not tmpfs: flushes must really go to a device. */
static char dir[64];
static int dir_fd = -1;

static void make_dir(void)
{
	strcpy(dir, "/var/tmp/test_commit.XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert_geq(dir_fd, 0);
}

static void remove_dir(void)
{
	char cmd[128];

	close(dir_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(commit, .init = make_dir, .fini = remove_dir, .timeout = 60);

static int open_ledger(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	return fd;
}

Test(commit, filesystems_known_to_flush_on_syncfs_are_named_others_not)
{
	static const struct {
		const char *path;
		const char *name; /* NULL: not trusted with a group */
	} table[] = {
		{"/dev/shm", "tmpfs"},
		{"/proc", NULL},
		{"/sys", NULL},
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int fd = open(table[i].path, O_RDONLY | O_DIRECTORY);
		const char *got;

		cr_assert_geq(fd, 0);
		got = commit_fs_name(fd);
		if (table[i].name)
			cr_expect_str_eq(got ? got : "(null)", table[i].name,
					 "%s", table[i].path);
		else
			cr_expect_null(got, "%s: %s", table[i].path, got);
		close(fd);
	}
}

/* fdatasync of a pipe fails with EINVAL, syncfs of the folder does not:
 * so a pipe as the "ledger" shows which flush a batch got. */
Test(commit, a_lone_append_is_flushed_by_fdatasync_of_its_own_ledger)
{
	struct commit_group *g = commit_group_new(dir_fd);
	int p[2];

	cr_assert_not_null(g);
	cr_assert_eq(pipe(p), 0);
	cr_expect_eq(commit_group_sync(g, p[1]), EINVAL);
	close(p[0]);
	close(p[1]);
	commit_group_free(g);
}

Test(commit, a_failed_flush_fails_its_rows_and_not_later_ones)
{
	struct commit_group *g = commit_group_new(dir_fd);
	int fd = open_ledger("good"), p[2];
	unsigned long long flushes, waits;

	cr_assert_not_null(g);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(fd, "row\n", 4), 4);
	cr_expect_eq(commit_group_sync(g, p[1]), EINVAL);
	cr_expect_eq(commit_group_sync(g, fd), 0);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, 2);
	cr_expect_eq(waits, 2);
	close(p[0]);
	close(p[1]);
	close(fd);
	commit_group_free(g);
}

struct joiner {
	struct commit_group *g;
	int fd;
	int rc;
	atomic_bool back; /* set once its sync returned */
};

static void *join_group(void *arg)
{
	struct joiner *j = arg;

	j->rc = commit_group_sync(j->g, j->fd);
	atomic_store(&j->back, true);
	return NULL;
}

/*
 * A slow first flush (64 MiB of dirty data in one ledger) is running
 * while two pipes join: they form the next batch, over two "ledgers",
 * and get one syncfs of the folder (which succeeds), then each its own
 * write-error check (which a pipe fails with ESPIPE).  fdatasync of a
 * pipe would have given EINVAL; no own check would have given 0.
 */
Test(commit, a_batch_over_several_ledgers_gets_one_syncfs_and_its_own_check)
{
	static char chunk[1 << 20];
	int attempt;

	memset(chunk, 'x', sizeof(chunk));
	for (attempt = 0; attempt < 3; attempt++) {
		struct commit_group *g = commit_group_new(dir_fd);
		struct joiner slow = {g, open_ledger("slow"), -1, false};
		struct joiner a = {g, -1, -1, false}, b = {g, -1, -1, false};
		unsigned long long flushes = 0, waits = 0;
		pthread_t ts, ta, tb;
		int pa[2], pb[2], i;
		bool together;

		cr_assert_not_null(g);
		for (i = 0; i < 64; i++)
			cr_assert_eq(write(slow.fd, chunk, sizeof(chunk)),
				     (ssize_t)sizeof(chunk));
		cr_assert_eq(pipe(pa), 0);
		cr_assert_eq(pipe(pb), 0);
		a.fd = pa[1];
		b.fd = pb[1];
		cr_assert_eq(pthread_create(&ts, NULL, join_group, &slow), 0);
		while (flushes == 0) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		cr_assert_eq(pthread_create(&ta, NULL, join_group, &a), 0);
		cr_assert_eq(pthread_create(&tb, NULL, join_group, &b), 0);
		while (waits < 3) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		/* Both joined while the first flush still ran. */
		together = flushes == 1;
		pthread_join(ts, NULL);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		commit_group_counts(g, &flushes, &waits);
		cr_expect_eq(slow.rc, 0);
		if (together) {
			cr_expect_eq(flushes, 2, "one flush for both pipes");
			cr_expect_eq(a.rc, ESPIPE, "%s", strerror(a.rc));
			cr_expect_eq(b.rc, ESPIPE, "%s", strerror(b.rc));
		}
		close(pa[0]);
		close(pa[1]);
		close(pb[0]);
		close(pb[1]);
		close(slow.fd);
		commit_group_free(g);
		if (together)
			return;
	}
	cr_assert_fail("the pipes never joined during the slow flush");
}

static void *join_group_data(void *arg)
{
	struct joiner *j = arg;

	j->rc = commit_group_sync_data(j->g, j->fd);
	return NULL;
}

/*
 * Overwrites only (rows in padding): a batch over several ledgers gets
 * each ledger's writeback and then one fdatasync, of the last to join,
 * and no syncfs.  With a pipe joining last, that fdatasync fails with
 * EINVAL and the file's row shares the failure; a syncfs would have
 * given the file 0.  The pipe's own writeback check gives it ESPIPE.
 */
Test(commit, a_batch_of_overwrites_gets_each_writeback_then_one_fdatasync)
{
	static char chunk[1 << 20];
	int attempt;

	memset(chunk, 'x', sizeof(chunk));
	for (attempt = 0; attempt < 3; attempt++) {
		struct commit_group *g = commit_group_new(dir_fd);
		struct joiner slow = {g, open_ledger("slow2"), -1, false};
		struct joiner f = {g, open_ledger("file2"), -1, false},
			      p = {g, -1, -1, false};
		unsigned long long flushes = 0, waits = 0;
		pthread_t ts, tf, tp;
		int pp[2], i;
		bool together;

		cr_assert_not_null(g);
		for (i = 0; i < 64; i++)
			cr_assert_eq(write(slow.fd, chunk, sizeof(chunk)),
				     (ssize_t)sizeof(chunk));
		cr_assert_eq(write(f.fd, "row\n", 4), 4);
		cr_assert_eq(pipe(pp), 0);
		p.fd = pp[1];
		cr_assert_eq(pthread_create(&ts, NULL, join_group, &slow), 0);
		while (flushes == 0) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		cr_assert_eq(pthread_create(&tf, NULL, join_group_data, &f), 0);
		while (waits < 2) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		cr_assert_eq(pthread_create(&tp, NULL, join_group_data, &p), 0);
		while (waits < 3) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		together = flushes == 1;
		pthread_join(ts, NULL);
		pthread_join(tf, NULL);
		pthread_join(tp, NULL);
		cr_expect_eq(slow.rc, 0);
		if (together) {
			cr_expect_eq(p.rc, ESPIPE, "%s", strerror(p.rc));
			cr_expect_eq(f.rc, EINVAL, "%s", strerror(f.rc));
		}
		close(pp[0]);
		close(pp[1]);
		close(slow.fd);
		close(f.fd);
		commit_group_free(g);
		if (together)
			return;
	}
	cr_assert_fail("the two never joined during the slow flush");
}

struct writer {
	struct commit_group *g;
	int fd;
	int appends;
	int failures;
};

static void *write_rows(void *arg)
{
	struct writer *w = arg;
	int i;

	for (i = 0; i < w->appends; i++) {
		if (write(w->fd, "row\n", 4) != 4 ||
		    commit_group_sync(w->g, w->fd) != 0)
			w->failures++;
	}
	return NULL;
}

/*
 * n threads, each appending `appends` rows to its own ledger in folder
 * (flushed through g), at once; every append must succeed and land.
 * Returns the rows that went through the group.
 */
static unsigned long long run_writers(struct commit_group *g,
				      const char *folder, int n, int appends)
{
	struct writer *w = calloc((size_t)n, sizeof(*w));
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	unsigned long long flushes, waits;
	char path[96];
	int i;

	cr_assert(w && t);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/l%d", folder, i);
		w[i] = (struct writer){g, open(path, O_WRONLY | O_CREAT, 0600),
				       appends, 0};
		cr_assert_geq(w[i].fd, 0);
		cr_assert_eq(pthread_create(&t[i], NULL, write_rows, &w[i]), 0);
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		cr_expect_eq(w[i].failures, 0);
		cr_expect_eq(lseek(w[i].fd, 0, SEEK_END), 4 * appends);
		close(w[i].fd);
	}
	free(w);
	free(t);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(waits,
		     (unsigned long long)n * (unsigned long long)appends);
	return flushes;
}

Test(commit, concurrent_appends_share_flushes_and_all_land)
{
	struct commit_group *g = commit_group_new(dir_fd);
	unsigned long long flushes;

	cr_assert_not_null(g);
	flushes = run_writers(g, dir, 16, 100);
	cr_expect_lt(flushes, 1600, "%llu flushes for 1600 rows", flushes);
	commit_group_free(g);
}

/*
 * On tmpfs a flush costs next to nothing, so leadership changes hands
 * as fast as threads can run: a waiter asked to lead after another flush
 * already took it must wait for that flush, never lead one of its own
 * (it would return while that flush still holds it).
 */
Test(commit, waiters_taken_by_a_flush_never_lead_another)
{
	char shm[] = "/dev/shm/test_commit.XXXXXX", cmd[80];
	struct commit_group *g;
	int shm_fd;

	cr_assert_not_null(mkdtemp(shm));
	shm_fd = open(shm, O_RDONLY | O_DIRECTORY);
	g = commit_group_new(shm_fd);
	cr_assert_not_null(g);
	run_writers(g, shm, 32, 3000);
	commit_group_free(g);
	close(shm_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shm);
	cr_assert_eq(system(cmd), 0);
}

/* A row nobody waits for: how many times, and with what, it was told. */
struct told {
	atomic_int times;
	atomic_int rc;
};

static void on_told(void *arg, int rc)
{
	struct told *t = arg;

	atomic_store(&t->rc, rc);
	atomic_fetch_add(&t->times, 1);
}

Test(commit, a_row_nobody_waits_for_is_told_once_after_the_flush_covering_it)
{
	struct commit_group *g = commit_group_new(dir_fd);
	int fd = open_ledger("async");
	atomic_int failed = 0;
	struct told t = {0};
	unsigned long long flushes, waits;

	cr_assert_not_null(g);
	cr_assert_eq(write(fd, "row\n", 4), 4);
	cr_assert_eq(
		commit_group_enqueue(g, fd, false, NULL, &failed, on_told, &t),
		0);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, 0, "enqueue alone flushed");
	cr_expect_eq(atomic_load(&t.times), 0, "told before any flush");
	commit_group_kick(g);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, 1);
	cr_expect_eq(atomic_load(&t.times), 1);
	cr_expect_eq(atomic_load(&t.rc), 0);
	/* Nothing pending: a kick and a barrier flush nothing more. */
	commit_group_kick(g);
	cr_expect_eq(commit_group_barrier(g), 0);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, 1);
	cr_expect_eq(atomic_load(&t.times), 1);
	close(fd);
	commit_group_free(g);
}

/*
 * A pipe cannot be fdatasync'ed (EINVAL): its row fails and marks its
 * ledger's flag; a later row of that ledger, in a later batch whose
 * flush succeeds, is told the error all the same, and a row of another
 * ledger in that batch is not.
 */
Test(commit, a_failed_row_fails_every_later_row_of_its_ledger)
{
	struct commit_group *g = commit_group_new(dir_fd);
	int fd = open_ledger("other"), p[2];
	atomic_int failed = 0, other_failed = 0;
	struct told bad = {0}, later = {0}, other = {0};

	cr_assert_not_null(g);
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(commit_group_enqueue(g, p[1], false, NULL, &failed,
					  on_told, &bad),
		     0);
	commit_group_kick(g);
	cr_expect_eq(atomic_load(&bad.rc), EINVAL);
	cr_expect_eq(atomic_load(&failed), EINVAL);
	cr_assert_eq(write(fd, "row\n", 4), 4);
	cr_assert_eq(commit_group_enqueue(g, fd, false, NULL, &failed, on_told,
					  &later),
		     0);
	cr_assert_eq(commit_group_enqueue(g, fd, false, NULL, &other_failed,
					  on_told, &other),
		     0);
	cr_expect_eq(commit_group_barrier(g), 0);
	cr_expect_eq(atomic_load(&later.times), 1);
	cr_expect_eq(atomic_load(&later.rc), EINVAL);
	cr_expect_eq(atomic_load(&other.times), 1);
	cr_expect_eq(atomic_load(&other.rc), 0);
	cr_expect_eq(atomic_load(&other_failed), 0);
	close(p[0]);
	close(p[1]);
	close(fd);
	commit_group_free(g);
}

struct async_writer {
	struct commit_group *g;
	int fd;
	int rows;
	bool sync_too; /* every tenth row waits, as a host's write does */
	atomic_int *told;
	atomic_int *failed;
};

static void count_told(void *arg, int rc)
{
	atomic_int *told = arg;

	cr_expect_eq(rc, 0);
	atomic_fetch_add(told, 1);
}

static void *write_async(void *arg)
{
	struct async_writer *w = arg;
	int i;

	for (i = 0; i < w->rows; i++) {
		if (write(w->fd, "a row of the ledger\n", 20) != 20)
			return NULL;
		if (w->sync_too && i % 10 == 0) {
			cr_expect_eq(commit_group_sync(w->g, w->fd), 0);
			atomic_fetch_add(w->told, 1);
			continue;
		}
		cr_expect_eq(commit_group_enqueue(w->g, w->fd, false, NULL,
						  w->failed, count_told,
						  w->told),
			     0);
		commit_group_kick(w->g);
	}
	return NULL;
}

/*
 * Threads that enqueue and kick, some also waiting now and then: every
 * row is told exactly once, by a flush that began after it was written,
 * and on a disk the rows share flushes.  On tmpfs, where a flush is
 * nearly free, leadership changes hands as fast as it can (and a row may
 * well get a flush of its own).
 */
static void rows_nobody_waits_for_are_all_told(const char *where, int wfd,
					       bool shared)
{
	enum { THREADS = 16, ROWS = 200 };
	struct commit_group *g = commit_group_new(wfd);
	struct async_writer w[THREADS];
	pthread_t tid[THREADS];
	atomic_int told = 0, failed[THREADS];
	unsigned long long flushes, waits;
	char path[128];
	int i;

	cr_assert_not_null(g);
	for (i = 0; i < THREADS; i++) {
		snprintf(path, sizeof(path), "%s/w%d", where, i);
		atomic_init(&failed[i], 0);
		w[i] = (struct async_writer){
			.g = g,
			.fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600),
			.rows = ROWS,
			.sync_too = i % 2,
			.told = &told,
			.failed = &failed[i]};
		cr_assert_geq(w[i].fd, 0);
		cr_assert_eq(pthread_create(&tid[i], NULL, write_async, &w[i]),
			     0);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(tid[i], NULL);
	commit_group_drain(g);
	cr_expect_eq(atomic_load(&told), THREADS * ROWS);
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(waits, THREADS * ROWS);
	if (shared)
		cr_expect_lt(flushes, THREADS * ROWS);
	for (i = 0; i < THREADS; i++)
		close(w[i].fd);
	commit_group_free(g);
}

Test(commit, rows_nobody_waits_for_are_each_told_once_and_share_flushes)
{
	char shm[] = "/dev/shm/test_commit.XXXXXX", cmd[80];
	int shm_fd;

	rows_nobody_waits_for_are_all_told(dir, dir_fd, true);
	cr_assert_not_null(mkdtemp(shm));
	shm_fd = open(shm, O_RDONLY | O_DIRECTORY);
	rows_nobody_waits_for_are_all_told(shm, shm_fd, false);
	close(shm_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", shm);
	cr_assert_eq(system(cmd), 0);
}

struct flood {
	struct commit_group *g;
	int fd;
	atomic_int *stop;
	atomic_int sent, told;
	atomic_int failed;
};

static void flood_told(void *arg, int rc)
{
	struct flood *f = arg;

	cr_expect_eq(rc, 0);
	atomic_fetch_add(&f->told, 1);
}

/* A target: one call at a time, the next as soon as the last is told. */
static void *flood_rows(void *arg)
{
	struct flood *f = arg;

	while (!atomic_load(f->stop)) {
		if (write(f->fd, "a row of the ledger\n", 20) != 20)
			break;
		if (commit_group_enqueue(f->g, f->fd, false, NULL, &f->failed,
					 flood_told, f))
			break;
		atomic_fetch_add(&f->sent, 1);
		commit_group_kick(f->g);
		while (atomic_load(&f->told) < atomic_load(&f->sent))
			sched_yield();
	}
	return NULL;
}

/*
 * Targets that call again as soon as they are told, and a host's writes
 * waiting among them: every row is told, and every wait returns.
 */
Test(commit, rows_of_busy_targets_and_a_waiting_host_are_all_told)
{
	enum { FLOODERS = 8, WAITS = 20 };
	struct commit_group *g = commit_group_new(dir_fd);
	struct flood f[FLOODERS];
	pthread_t tid[FLOODERS];
	atomic_int stop = 0;
	int fd = open_ledger("host"), i;
	char path[128];

	cr_assert_not_null(g);
	for (i = 0; i < FLOODERS; i++) {
		snprintf(path, sizeof(path), "flood%d", i);
		f[i] = (struct flood){
			.g = g, .fd = open_ledger(path), .stop = &stop};
		cr_assert_eq(pthread_create(&tid[i], NULL, flood_rows, &f[i]),
			     0);
	}
	for (i = 0; i < WAITS; i++) {
		cr_assert_eq(write(fd, "host\n", 5), 5);
		cr_expect_eq(commit_group_sync(g, fd), 0);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < FLOODERS; i++)
		pthread_join(tid[i], NULL);
	commit_group_drain(g);
	for (i = 0; i < FLOODERS; i++)
		cr_expect_eq(atomic_load(&f[i].told), atomic_load(&f[i].sent));
	for (i = 0; i < FLOODERS; i++)
		close(f[i].fd);
	close(fd);
	commit_group_free(g);
}

/* A callback that notes which thread told its row. */
struct told_by {
	atomic_int times;
	pthread_t by;
};

static void on_told_by(void *arg, int rc)
{
	struct told_by *t = arg;

	(void)rc;
	t->by = pthread_self();
	atomic_fetch_add(&t->times, 1);
}

/*
 * A waiter that leads flushes its own batch and returns: a row that
 * nobody waits for, enqueued during that flush, is flushed and told by
 * another thread (the group's helper, or a kick), never by the waiter,
 * which would otherwise lead on for as long as targets keep calling.
 * The first flush is slow (64 MiB of dirty data), so the row joins while
 * it runs; the test asserts which thread told the row, not when.
 */
Test(commit, a_waiter_that_leads_leaves_later_rows_to_the_helper)
{
	static char chunk[1 << 20];
	int attempt, i;

	memset(chunk, 'x', sizeof(chunk));
	for (attempt = 0; attempt < 5; attempt++) {
		struct commit_group *g = commit_group_new(dir_fd);
		struct joiner host = {g, open_ledger("slow1"), -1, false};
		int fd2 = open_ledger("slow2");
		unsigned long long flushes = 0, waits = 0;
		atomic_int failed = 0;
		struct told_by t = {0};
		pthread_t th;
		bool during;

		cr_assert_not_null(g);
		for (i = 0; i < 64; i++)
			cr_assert_eq(write(host.fd, chunk, sizeof(chunk)),
				     (ssize_t)sizeof(chunk));
		cr_assert_eq(write(fd2, "row\n", 4), 4);
		cr_assert_eq(pthread_create(&th, NULL, join_group, &host), 0);
		while (flushes == 0) {
			commit_group_counts(g, &flushes, &waits);
			usleep(100);
		}
		cr_assert_eq(commit_group_enqueue(g, fd2, false, NULL, &failed,
						  on_told_by, &t),
			     0);
		/* Joined while the host's flush (the first) still ran. */
		commit_group_counts(g, &flushes, &waits);
		during = flushes == 1 && !atomic_load(&host.back);
		pthread_join(th, NULL);
		cr_expect_eq(host.rc, 0);
		commit_group_kick(g);
		commit_group_drain(g);
		cr_expect_eq(atomic_load(&t.times), 1);
		cr_expect(!pthread_equal(t.by, th),
			  "the waiter led the next flush too");
		close(host.fd);
		close(fd2);
		commit_group_free(g);
		if (during)
			return;
	}
	cr_assert_fail("the row never joined during the host's flush");
}
