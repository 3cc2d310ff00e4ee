/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the cases of one daemon (see registry.h).
 */
#include "registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "journal.h"
#include "strmap.h"

struct registry {
	pthread_rwlock_t lock;
	int backing_fd;
	unsigned char key[CHAIN_KEY_BYTES];
	struct case_limits lim;
	struct lf_case **cases;
	size_t n, cap;
	struct strmap index;
	struct commit_group *commit;   /* NULL: one fdatasync per append */
	struct journal_report journal; /* what the start found in it */
};

static const char *registry_key(void *ctx, uint32_t i)
{
	return case_name(((struct registry *)ctx)->cases[i]);
}

/* Under the write lock. */
static int registry_add(struct registry *r, struct lf_case *c)
{
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 64;
		struct lf_case **n = realloc(r->cases, ncap * sizeof(*n));

		if (!n)
			return -1;
		r->cases = n;
		r->cap = ncap;
	}
	r->cases[r->n] = c;
	if (strmap_add(&r->index, case_name(c), (uint32_t)r->n, registry_key,
		       r))
		return -1;
	r->n++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Cases load in parallel, one worker per processor: each case's ledger is
 * verified and replayed on its own (ledgerfs(8), RESTART).
 */
struct load_job {
	struct registry *r;
	char **names;
	size_t n;
	size_t next; /* under lock */
	pthread_mutex_t lock;
	struct lf_case **cases;
	char **reasons; /* why a case loaded failed; NULL when it did not */
};

static void *registry_load_worker(void *arg)
{
	struct load_job *j = arg;
	struct lf_why why;
	size_t i;

	for (;;) {
		pthread_mutex_lock(&j->lock);
		i = j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			return NULL;
		why.msg[0] = '\0';
		if (case_load(j->r->backing_fd, j->r->key, j->names[i],
			      &j->r->lim, &j->cases[i], &why) != LF_OK)
			j->reasons[i] = strdup(why.msg[0] ? why.msg : "?");
	}
}

static void registry_load_parallel(struct load_job *j)
{
	pthread_t tids[8];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = ncpu > 0 ? (size_t)ncpu : 1, started = 0, i;

	if (nt > 8)
		nt = 8;
	if (nt > j->n)
		nt = j->n;
	for (i = 1; i < nt; i++)
		if (pthread_create(&tids[started], NULL, registry_load_worker,
				   j) == 0)
			started++;
	registry_load_worker(j);
	for (i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
}

static enum lf_err registry_load_all(struct registry *r,
				     void (*warn)(const char *, const char *),
				     struct lf_why *why)
{
	int fd = openat(r->backing_fd, "cases",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	enum lf_err e = LF_OK;
	struct load_job job = {0};

	if (fd < 0)
		return lf_fail(why, LF_IO, "backing cases/: %s",
			       strerror(errno));
	pthread_mutex_init(&job.lock, NULL);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		pthread_mutex_destroy(&job.lock);
		return lf_fail(why, LF_IO, "backing cases/: %s",
			       strerror(errno));
	}
	while ((de = readdir(d))) {
		/* Every case, ".hid" too: only "." and ".." are not cases. */
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			char **t = realloc(names, (cap = cap ? cap * 2 : 64) *
							  sizeof(*t));
			if (!t) {
				e = lf_fail(why, LF_NOMEM, "out of memory");
				goto out;
			}
			names = t;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			e = lf_fail(why, LF_NOMEM, "out of memory");
			goto out;
		}
		n++;
	}
	/* A stable order for ls; creation order is not kept across restarts. */
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	job.r = r;
	job.names = names;
	job.n = n;
	job.cases = calloc(n ? n : 1, sizeof(*job.cases));
	job.reasons = calloc(n ? n : 1, sizeof(*job.reasons));
	if (!job.cases || !job.reasons) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	registry_load_parallel(&job);
	for (i = 0; i < n; i++) {
		if (job.reasons[i] && warn)
			warn(names[i], job.reasons[i]);
		/* Loaded failed is still listed (ledgerfs(8), FAILURE). */
		if (!job.cases[i] || e != LF_OK)
			continue;
		if (registry_add(r, job.cases[i])) {
			e = lf_fail(why, LF_NOMEM, "out of memory");
			continue;
		}
		job.cases[i] = NULL;
	}
out:
	for (i = 0; i < n; i++) {
		if (job.cases)
			case_free(job.cases[i]);
		if (job.reasons)
			free(job.reasons[i]);
		free(names[i]);
	}
	free(job.cases);
	free(job.reasons);
	pthread_mutex_destroy(&job.lock);
	free(names);
	closedir(d);
	return e;
}

enum lf_err registry_open(const char *backing_dir,
			  const unsigned char key[CHAIN_KEY_BYTES],
			  const struct case_limits *lim,
			  void (*warn)(const char *, const char *),
			  struct registry **out, struct lf_why *why)
{
	struct registry *r = calloc(1, sizeof(*r));
	enum lf_err e;

	if (!r)
		return lf_fail(why, LF_NOMEM, "out of memory");
	pthread_rwlock_init(&r->lock, NULL);
	strmap_init(&r->index);
	memcpy(r->key, key, CHAIN_KEY_BYTES);
	r->lim = *lim;
	r->backing_fd = open(backing_dir,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (r->backing_fd < 0) {
		e = lf_fail(why, LF_IO, "backing folder %s: %s", backing_dir,
			    strerror(errno));
		goto fail;
	}
	/* Two daemons appending to one ledger would break its chain. */
	if (flock(r->backing_fd, LOCK_EX | LOCK_NB) < 0) {
		e = lf_fail(
			why, LF_IO,
			"backing folder %s is in use by another ledgerfs (%s)",
			backing_dir, strerror(errno));
		goto fail;
	}
	if (mkdirat(r->backing_fd, "cases", 0700) < 0 && errno != EEXIST) {
		e = lf_fail(why, LF_IO, "backing folder %s/cases: %s",
			    backing_dir, strerror(errno));
		goto fail;
	}
	/* Rows the last run acknowledged, back in their ledgers first. */
	e = journal_recover(r->backing_fd, &r->journal, why);
	if (e != LF_OK)
		goto fail;
	e = registry_load_all(r, warn, why);
	if (e != LF_OK)
		goto fail;
	*out = r;
	return LF_OK;
fail:
	registry_free(r);
	return e;
}

void registry_free(struct registry *r)
{
	size_t i;

	if (!r)
		return;
	registry_drain(r);
	for (i = 0; i < r->n; i++) {
		case_save_counters(r->cases[i]);
		case_free(r->cases[i]);
	}
	free(r->cases);
	strmap_free(&r->index);
	/* A clean stop leaves the next start no rows to write back. */
	if (r->commit)
		commit_group_checkpoint(r->commit);
	commit_group_free(r->commit);
	if (r->backing_fd >= 0)
		close(r->backing_fd);
	pthread_rwlock_destroy(&r->lock);
	explicit_bzero(r->key, sizeof(r->key));
	free(r);
}

void registry_drain(struct registry *r)
{
	if (r && r->commit)
		commit_group_drain(r->commit);
}

const char *registry_group_commit(struct registry *r)
{
	const char *fs = commit_fs_name(r->backing_fd);
	size_t i;

	if (!fs)
		return NULL;
	pthread_rwlock_wrlock(&r->lock);
	if (!r->commit)
		r->commit = commit_group_new(r->backing_fd);
	for (i = 0; r->commit && i < r->n; i++)
		case_set_commit(r->cases[i], r->commit);
	pthread_rwlock_unlock(&r->lock);
	return r->commit ? fs : NULL;
}

enum lf_err registry_journal(struct registry *r, unsigned long long size,
			     struct lf_why *why)
{
	struct journal *j;
	enum lf_err e;

	if (!size) {
		if (journal_remove(r->backing_fd) < 0)
			return lf_fail(why, LF_IO, "commit journal: %s",
				       strerror(errno));
		return LF_OK;
	}
	if (!r->commit)
		return lf_fail(
			why, LF_IO,
			"--sync=journal needs group commit, which this file system does not have");
	e = journal_open(r->backing_fd, size, r->journal.gen, &j, why);
	if (e == LF_OK)
		commit_group_set_journal(r->commit, j);
	return e;
}

const struct journal_report *registry_journal_report(const struct registry *r)
{
	return &r->journal;
}

void registry_commit_counts(struct registry *r, unsigned long long *flushes,
			    unsigned long long *waits)
{
	*flushes = *waits = 0;
	if (r->commit)
		commit_group_counts(r->commit, flushes, waits);
}

struct lf_case *registry_get(struct registry *r, const char *name)
{
	struct lf_case *c = NULL;
	long i;

	pthread_rwlock_rdlock(&r->lock);
	i = strmap_find(&r->index, name, registry_key, r);
	if (i >= 0)
		c = r->cases[i];
	pthread_rwlock_unlock(&r->lock);
	return c;
}

enum lf_err registry_create(struct registry *r, const char *name,
			    struct lf_case **out, struct lf_why *why)
{
	struct lf_case *c;
	enum lf_err e;

	pthread_rwlock_wrlock(&r->lock);
	if (strmap_find(&r->index, name, registry_key, r) >= 0) {
		e = lf_fail(why, LF_EXISTS, "case %s exists", name);
		goto out;
	}
	e = case_create(r->backing_fd, r->key, name, &r->lim, &c, why);
	if (e != LF_OK)
		goto out;
	if (registry_add(r, c)) {
		case_free(c);
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	if (r->commit)
		case_set_commit(c, r->commit);
	*out = c;
out:
	pthread_rwlock_unlock(&r->lock);
	return e;
}

size_t registry_count(struct registry *r)
{
	size_t n;

	pthread_rwlock_rdlock(&r->lock);
	n = r->n;
	pthread_rwlock_unlock(&r->lock);
	return n;
}

struct lf_case *registry_at(struct registry *r, size_t i)
{
	struct lf_case *c = NULL;

	pthread_rwlock_rdlock(&r->lock);
	if (i < r->n)
		c = r->cases[i];
	pthread_rwlock_unlock(&r->lock);
	return c;
}
