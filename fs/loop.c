/* SPDX-License-Identifier: MIT */
/*
 * loop.c - the multithreaded FUSE loop.  It works as libfuse's own
 * (fuse_loop_mt.c): each worker reads a request and serves it, a new
 * worker starts when none is left to read, up to max_threads, and idle
 * workers past max_idle end.  Two requests take another way:
 *
 *  - a WRITE to a target's `request` or `result` goes to write.c, which
 *    answers it once its rows are durable, from the thread that led their
 *    flush, so no worker sleeps through a flush;
 *  - an INTERRUPT is dropped.  No operation of the view can be
 *    interrupted (each one ends on its own), and libfuse would keep an
 *    interrupt of a write it never saw until a later request, then answer
 *    it EAGAIN so the kernel sends it again: a loop for nothing.  The
 *    kernel waits for the write's answer as it would anyway.
 */
#include "loop.h"

#include <errno.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "write.h"

struct lfs_worker {
	pthread_t tid;
	struct fuse_buf buf;
	struct lfs_loop *lp;
	struct lfs_worker *prev, *next;
};

struct lfs_loop {
	struct fuse_session *se;
	pthread_mutex_t lock;
	struct lfs_worker head; /* the list of workers */
	int numworker, numavail;
	int max_threads, max_idle;
	int error; /* a read failed: -errno */
	bool exit;
	sem_t finish;
};

static void lfs_loop_dispatch(struct fuse_session *se, struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;

	if (!(buf->flags & FUSE_BUF_IS_FD) && buf->size >= sizeof(*in) &&
	    in->opcode == FUSE_INTERRUPT)
		return;
	if (lfs_write_deferred(se, buf))
		return;
	fuse_session_process_buf(se, buf);
}

static void lfs_loop_unlink(struct lfs_worker *w)
{
	w->prev->next = w->next;
	w->next->prev = w->prev;
}

static int lfs_loop_start(struct lfs_loop *lp);

static void *lfs_loop_worker(void *arg)
{
	struct lfs_worker *w = arg;
	struct lfs_loop *lp = w->lp;
	int res;

	while (!fuse_session_exited(lp->se)) {
		/* Only a worker waiting for a request may be cancelled. */
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(lp->se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0) {
			if (res < 0) {
				fuse_session_exit(lp->se);
				lp->error = res;
			}
			break;
		}
		pthread_mutex_lock(&lp->lock);
		if (lp->exit) {
			pthread_mutex_unlock(&lp->lock);
			return NULL;
		}
		/* The last reader is busy now: start another if allowed. */
		if (--lp->numavail == 0 && lp->numworker < lp->max_threads)
			lfs_loop_start(lp);
		pthread_mutex_unlock(&lp->lock);
		lfs_loop_dispatch(lp->se, &w->buf);
		pthread_mutex_lock(&lp->lock);
		if (++lp->numavail > lp->max_idle && !lp->exit) {
			/* One idle worker too many: this one ends. */
			lfs_loop_unlink(w);
			lp->numworker--;
			lp->numavail--;
			pthread_mutex_unlock(&lp->lock);
			pthread_detach(w->tid);
			free(w->buf.mem);
			free(w);
			return NULL;
		}
		pthread_mutex_unlock(&lp->lock);
	}
	sem_post(&lp->finish);
	return NULL;
}

/* A new worker, under lp->lock.  0 or -1. */
static int lfs_loop_start(struct lfs_loop *lp)
{
	struct lfs_worker *w = calloc(1, sizeof(*w));
	sigset_t all, old;
	int rc;

	if (!w)
		return -1;
	w->lp = lp;
	/* Signals go to the main thread, which stops the loop. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->tid, NULL, lfs_loop_worker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		fprintf(stderr, "ledgerfs: cannot start a worker: %s\n",
			strerror(rc));
		free(w);
		return -1;
	}
	w->next = lp->head.next;
	w->prev = &lp->head;
	lp->head.next->prev = w;
	lp->head.next = w;
	lp->numworker++;
	lp->numavail++;
	return 0;
}

int lfs_loop_mt(struct fuse_session *se, int max_threads, int max_idle,
		void (*on_exit)(void *), void *arg)
{
	struct lfs_loop lp = {
		.se = se, .max_threads = max_threads, .max_idle = max_idle};
	struct lfs_worker *w;
	int rc;

	lp.head.next = lp.head.prev = &lp.head;
	pthread_mutex_init(&lp.lock, NULL);
	sem_init(&lp.finish, 0, 0);
	pthread_mutex_lock(&lp.lock);
	rc = lfs_loop_start(&lp);
	pthread_mutex_unlock(&lp.lock);
	if (rc == 0)
		while (!fuse_session_exited(se))
			sem_wait(&lp.finish);
	/* Workers busy in a request end on their own: let them. */
	if (on_exit)
		on_exit(arg);
	pthread_mutex_lock(&lp.lock);
	for (w = lp.head.next; w != &lp.head; w = w->next)
		pthread_cancel(w->tid);
	lp.exit = true;
	pthread_mutex_unlock(&lp.lock);
	while (lp.head.next != &lp.head) {
		w = lp.head.next;
		pthread_join(w->tid, NULL);
		pthread_mutex_lock(&lp.lock);
		lfs_loop_unlink(w);
		pthread_mutex_unlock(&lp.lock);
		free(w->buf.mem);
		free(w);
	}
	sem_destroy(&lp.finish);
	pthread_mutex_destroy(&lp.lock);
	fuse_session_reset(se);
	return rc ? -1 : lp.error;
}
