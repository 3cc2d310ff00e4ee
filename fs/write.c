/* SPDX-License-Identifier: MIT */
/*
 * write.c - a target's write to `request` or `result`, answered once its
 * rows are durable by the thread that led their flush, not by a worker
 * asleep until then (ledgerfs(8) --sync=group).
 *
 * libfuse's high-level layer answers a request when its operation
 * returns, so a worker would sleep through the flush and be woken to
 * reply: two context switches a row, which 64 cases calling at once pay
 * in processor time.  The loop (loop.c) hands WRITE requests on those two
 * files here instead.  The file handle is the one our open gave the
 * kernel (the high-level layer passes it through unchanged), the line
 * goes through the same fh_write_lines under the same lock, and the
 * answer is written to /dev/fuse as the kernel's protocol defines it:
 * one fuse_out_header, then a fuse_write_out with the bytes taken.  The
 * high-level layer keeps no state for a WRITE on a handle (the view runs
 * with nullpath_ok), so nothing there misses it.
 *
 * A call that a host executor runs (ledgerfs(8) HOST EXECUTORS) holds no
 * thread either: its decision row is told like any row, the flush's
 * thread then starts the executor (case_exec_start), and the executor
 * client's thread records the completion row under a second deferral,
 * whose telling answers the write; lines of the write after that call
 * wait with it and are taken there once its completion row is durable.
 */
#include "write.h"

#include <errno.h>
#include <linux/fuse.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "defer.h"
#include "fh_int.h"

/* A write waiting for its rows: how to answer it, and what it showed. */
struct lfs_write {
	struct fuse_session *se;
	uint64_t unique;
	struct lfs_fh *fh;
	int result;  /* the bytes taken, or -errno */
	char *reply; /* for the cursor of `request`: its last line's */
	/*
	 * A line's call runs on a host executor once its decision row is
	 * durable; the lines after it are taken once its completion row is
	 * (a case takes one line after another), and the write is answered
	 * after its last line's rows.  Offsets count from the write's start.
	 */
	struct case_exec *exec;
	size_t size;   /* the write's bytes */
	off_t off;     /* the write's file offset */
	size_t base;   /* where the lines being taken now begin */
	size_t before; /* where the executor's line begins */
	size_t next;   /* where the line after it begins */
	char *rest;    /* the write's bytes from next on, while they wait */
};

/* Writes answered with no thread waiting for their flush. */
static atomic_ullong write_deferred;

/* The write served on this thread now (between open and close). */
static _Thread_local struct lfs_write *write_now;

/* Answer WRITE request unique: rc bytes taken, or -errno. */
static void lfs_write_answer(struct fuse_session *se, uint64_t unique, int rc)
{
	struct fuse_out_header oh = {.unique = unique};
	struct fuse_write_out wo = {0};
	struct iovec iov[2] = {{&oh, sizeof(oh)}, {&wo, sizeof(wo)}};
	int n = 2;

	if (rc < 0) {
		oh.error = rc;
		n = 1;
	} else {
		wo.size = (uint32_t)rc;
	}
	oh.len = (uint32_t)(sizeof(oh) + (n == 2 ? sizeof(wo) : 0));
	/*
	 * ENOENT: the request was aborted meanwhile (the connection goes
	 * away); nothing is owed to anyone then.
	 */
	(void)!writev(fuse_session_fd(se), iov, n);
}

void lfs_write_exec_pending(size_t before, size_t next)
{
	if (write_now) {
		write_now->before = write_now->base + before;
		write_now->next = write_now->base + next;
	}
}

int lfs_write_stash(const char *reply)
{
	struct lfs_write *w = write_now;

	/* Only the write's last line is deferred (fh_write_lines). */
	if (!w || !defer_current() || w->reply)
		return -1;
	w->reply = strdup(reply);
	return w->reply ? 0 : -1;
}

static void lfs_write_exec_ready(void *arg, struct case_exec *x);

/*
 * The write's rows are durable (err 0) or may be lost: show its replies
 * and answer it, or answer EIO, which its close reports again.  Runs on
 * the thread that led the flush: takes only the cursor's lock.  A call
 * for a host executor is started instead, its decision row durable (an
 * executor never runs for a call the ledger may lose).
 */
static void lfs_write_told(void *arg, int err)
{
	struct lfs_write *w = arg;
	struct case_exec *x = w->exec;
	int rc = w->result;

	w->exec = NULL;
	if (x && !err) {
		case_exec_start(x, lfs_write_exec_ready, w);
		return;
	}
	case_exec_drop(x);
	if (err || rc == -EINPROGRESS) {
		atomic_store(&w->fh->late_err, EIO);
		rc = -EIO;
	} else if (w->reply) {
		fh_keep_reply(w->fh, w->reply);
	}
	lfs_write_answer(w->se, w->unique, rc);
	free(w->reply);
	free(w->rest);
	free(w);
}

/*
 * Take the write's lines from w->base on (buf, its bytes from there)
 * under deferral d, and set w->result: the bytes taken in all, or
 * -errno, or -EINPROGRESS while a line's executor runs (w->rest then
 * keeps what follows that line).  d is closed here; w may be gone after.
 */
static void lfs_write_take(struct lfs_write *w, struct lf_defer *d,
			   const char *buf)
{
	struct lfs_fh *fh = w->fh;
	size_t n = w->size - w->base;
	int rc;

	write_now = w;
	case_exec_catch(&w->exec);
	fh_lock(fh);
	rc = fh_write_lines(fh, buf, n, w->off + (off_t)w->base);
	if (rc >= 0) {
		rc += (int)w->base;
	} else if (rc == -EINPROGRESS) {
		if (w->next < w->size) {
			w->rest = malloc(w->size - w->next);
			if (w->rest)
				memcpy(w->rest, buf + (w->next - w->base),
				       w->size - w->next);
			/* No room to keep it: the writer sends it again. */
			else
				w->size = w->next;
		}
	} else if (w->base) {
		/* Refused ahead of lines already taken: as a short count. */
		fh->pending_err = -rc;
		rc = (int)w->base;
	}
	fh_drop_if_asked(fh);
	pthread_mutex_unlock(&fh->lock);
	case_exec_catch(NULL);
	write_now = NULL;
	w->result = rc;
	/* From here w may be gone: told now, or by a flush. */
	if (defer_close(d))
		atomic_fetch_add(&write_deferred, 1);
	defer_kick();
}

/*
 * The executor has answered the call of one of w's lines: record it.
 * Its last line: the completion row joins a flush, whose telling answers
 * w.  Lines follow it: the row is made durable now, then they are taken.
 * On the executor client's thread, which may take the case's lock.
 */
static void lfs_write_exec_ready(void *arg, struct case_exec *x)
{
	struct lfs_write *w = arg;
	struct lfs_fh *fh = w->fh;
	struct lf_why why = {{0}};
	struct lf_defer *d = NULL;
	char *reply = NULL, *rest = w->rest;
	enum lf_err e;

	w->rest = NULL;
	if (!rest)
		d = defer_open(lfs_write_told, w);
	e = case_exec_finish(x, &reply, &why);
	if (e == LF_OK && rest) {
		if (fh->keep_replies)
			fh_keep_reply(fh, reply);
		free(reply);
		w->base = w->next;
		d = defer_open(lfs_write_told, w);
		if (d) {
			lfs_write_take(w, d, rest);
			free(rest);
			return;
		}
		/* No memory to go on: what follows is sent again. */
		w->result = (int)w->next;
	} else if (e == LF_OK) {
		w->result = (int)w->size;
		if (fh->keep_replies)
			w->reply = reply;
		else
			free(reply);
	} else {
		/* As fh_write_lines refuses a line of a write. */
		pthread_mutex_lock(&fh->lock);
		fh->last_err = lfs_errno(e);
		if (w->before)
			fh->pending_err = fh->last_err;
		pthread_mutex_unlock(&fh->lock);
		w->result = w->before ? (int)w->before : -lfs_errno(e);
	}
	free(rest);
	/* No deferral: the row was durable before the return. */
	if (!d)
		lfs_write_told(w, 0);
	else if (defer_close(d))
		defer_kick();
}

bool lfs_write_deferred(struct fuse_session *se, const struct fuse_buf *buf)
{
	const struct fuse_in_header *in = buf->mem;
	const struct fuse_write_in *wi;
	struct lfs_write *w;
	struct lf_defer *d;
	struct lfs_fh *fh;

	if ((buf->flags & FUSE_BUF_IS_FD) || !in ||
	    buf->size < sizeof(*in) + sizeof(*wi) || in->opcode != FUSE_WRITE ||
	    !lfs_the_ctx || lfs_the_ctx->proto_minor < 9)
		return false;
	wi = (const struct fuse_write_in *)(in + 1);
	if (wi->size > buf->size - sizeof(*in) - sizeof(*wi) || !wi->fh)
		return false;
	fh = (struct lfs_fh *)(uintptr_t)wi->fh;
	if (fh->n.kind != N_REQUEST && fh->n.kind != N_RESULT)
		return false;
	w = calloc(1, sizeof(*w));
	if (!w)
		return false;
	w->se = se;
	w->unique = in->unique;
	w->fh = fh;
	w->size = wi->size;
	w->off = (off_t)wi->offset;
	d = defer_open(lfs_write_told, w);
	if (!d) {
		free(w);
		return false;
	}
	lfs_write_take(w, d, (const char *)(wi + 1));
	return true;
}

unsigned long long lfs_write_count(void)
{
	return atomic_load(&write_deferred);
}
