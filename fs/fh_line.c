/* SPDX-License-Identifier: MIT */
/*
 * fh_line.c - lines written to the view's line files (request, result,
 * register, ctl): assembled from WRITE requests, bounded, handed to the
 * core one whole line at a time, refused with the errno of ledgerfs(8)
 * PROTOCOL.  The rules are in fh.c's head comment.
 */
#include "fh_int.h"

#include "defer.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Make room for a partial line of need bytes (need <= limit), charging
 * the growth of a target descriptor's buffer to the daemon-wide budget.
 * 0, -ENOBUFS past the budget, or -ENOMEM.
 */
static int fh_line_room(struct lfs_fh *fh, size_t need, size_t limit)
{
	size_t ncap = fh->cap ? fh->cap : 256, add;
	char *t;

	if (need + 1 <= fh->cap)
		return 0;
	while (ncap < need + 1)
		ncap *= 2;
	if (ncap > limit + 1)
		ncap = limit + 1;
	add = ncap - fh->cap;
	if (fh->charged && fh_charge(fh, CASE_PENDING_LINES, add) < 0)
		return -ENOBUFS;
	t = realloc(fh->buf, ncap);
	if (!t) {
		if (fh->charged)
			fh_uncharge(fh, CASE_PENDING_LINES, add);
		return -ENOMEM;
	}
	fh->buf = t;
	fh->cap = ncap;
	return 0;
}

/* Free the line buffer and give its bytes back to the budget. */
void fh_line_free(struct lfs_fh *fh)
{
	if (fh->charged)
		fh_uncharge(fh, CASE_PENDING_LINES, fh->cap);
	free(fh->buf);
	fh->buf = NULL;
	fh->len = fh->cap = 0;
}

/* Unread replies held by every read-write request descriptor. */
static atomic_size_t fh_replies_held;

void fh_keep_reply(struct lfs_fh *fh, const char *reply)
{
	size_t cap, before, others, add = strlen(reply);

	pthread_mutex_lock(&fh->rep_lock);
	before = fh->rep_len;
	others = atomic_load(&fh_replies_held) - before;
	/* Drop what was read, then the oldest unread, to stay bounded. */
	if (fh->rep_pos) {
		memmove(fh->rep, fh->rep + fh->rep_pos,
			fh->rep_len - fh->rep_pos);
		fh->rep_len -= fh->rep_pos;
		fh->rep_pos = 0;
	}
	/*
	 * Within this descriptor's bound, and within the daemon's for all
	 * of them: past it a descriptor keeps only its newest reply.
	 */
	while (fh->rep_len &&
	       (fh->rep_len + add > FH_REPLY_KEEP ||
		others + fh->rep_len + add > lfs_context()->max_pending)) {
		char *nl = memchr(fh->rep, '\n', fh->rep_len);
		size_t cut = nl ? (size_t)(nl - fh->rep) + 1 : fh->rep_len;

		memmove(fh->rep, fh->rep + cut, fh->rep_len - cut);
		fh->rep_len -= cut;
	}
	cap = fh->rep_len + 1;
	fh_append(&fh->rep, &fh->rep_len, &cap, reply, add);
	/* Shrink to what is held, so that dropped replies free memory. */
	if (fh->rep && fh->rep_len + 1 < cap / 2) {
		char *t = realloc(fh->rep, fh->rep_len + 1);

		if (t)
			fh->rep = t;
	}
	atomic_fetch_add(&fh_replies_held, fh->rep_len);
	atomic_fetch_sub(&fh_replies_held, before);
	pthread_mutex_unlock(&fh->rep_lock);
}

void fh_replies_free(struct lfs_fh *fh)
{
	atomic_fetch_sub(&fh_replies_held, fh->rep_len);
	free(fh->rep);
	fh->rep = NULL;
	fh->rep_len = fh->rep_pos = 0;
}

/* One complete line to the core.  0 or -errno. */
int fh_line(struct lfs_fh *fh, const char *line, size_t len)
{
	struct lf_case *c = fh->n.c;
	struct lf_why why = {{0}};
	char *reply = NULL;
	enum lf_err e;

	switch (fh->n.kind) {
	case N_REQUEST:
		e = case_call(c, line, len, &reply, &why);
		/* Shown once durable: a deferred write keeps it when told. */
		if (e == LF_OK && fh->keep_replies && lfs_write_stash(reply))
			fh_keep_reply(fh, reply);
		free(reply);
		break;
	case N_RESULT:
		e = case_result(c, line, len, &why);
		break;
	case N_REGISTER:
		e = case_register(c, line, len, &why);
		break;
	case N_CTL:
		e = case_command(c, line, len, &why);
		if (e != LF_OK)
			fprintf(stderr, "ledgerfs: %s ctl: %s\n", case_name(c),
				why.msg);
		/* Closed or failed: its targets' partial lines hold nothing. */
		else if (case_get_state(c) == CASE_CLOSED ||
			 case_get_state(c) == CASE_FAILED)
			fh_drop_lines_of(c);
		break;
	default:
		return -EROFS;
	}
	return -lfs_errno(e);
}

static enum case_input fh_input(const struct lfs_fh *fh)
{
	return fh->n.kind == N_RESULT	  ? CASE_IN_RESULT
	       : fh->n.kind == N_REGISTER ? CASE_IN_REGISTER
					  : CASE_IN_REQUEST;
}

/*
 * The line cannot be held (past max-line, past --max-pending, or no
 * memory): refuse it now, free what it held, drop the rest up to its
 * newline.  A closed case answers EPIPE, recording nothing.
 */
static int fh_refuse_line(struct lfs_fh *fh, enum lf_err code,
			  const char *reason)
{
	int err = lfs_errno(code);

	if (fh->n.kind != N_CTL)
		err = lfs_errno(case_refuse(fh->n.c, fh_input(fh), code, reason,
					    fh->buf ? fh->buf : "", fh->len));
	fh_line_free(fh);
	fh->discarding = true;
	fh->discard_err = err;
	fh->last_err = err;
	return -err;
}

static int fh_too_long(struct lfs_fh *fh)
{
	char reason[128];

	snprintf(reason, sizeof(reason),
		 "line longer than the limit of %zu bytes",
		 lfs_context()->max_line);
	return fh_refuse_line(fh, LF_TOO_BIG, reason);
}

/* Room for the partial line failed (rc from fh_line_room). */
static int fh_no_room(struct lfs_fh *fh, int rc)
{
	char reason[160];

	if (rc == -ENOMEM)
		return fh_refuse_line(fh, LF_NOMEM,
				      "out of memory for a partial line");
	snprintf(reason, sizeof(reason),
		 "partial lines past the limit of %zu bytes for the daemon "
		 "(--max-pending), %zu for one case",
		 lfs_context()->max_pending, FH_CASE_PENDING(lfs_context()));
	return fh_refuse_line(fh, LF_PENDING_FULL, reason);
}

/* Is buf the resend of the piece whose line was refused (see owed_err)? */
static bool fh_is_resend(const struct lfs_fh *fh, const char *buf, size_t size,
			 off_t off)
{
	size_t head = fh->owed_len < sizeof(fh->owed_head)
			      ? fh->owed_len
			      : sizeof(fh->owed_head);

	return off == fh->owed_off && size >= fh->owed_len &&
	       buf[fh->owed_len - 1] == '\n' &&
	       !memcmp(buf, fh->owed_head, head);
}

int fh_write_lines(struct lfs_fh *fh, const char *buf, size_t size, off_t off)
{
	size_t i = 0, max = lfs_context()->max_line, carried = fh->len;

	if (fh->n.kind == N_CTL)
		max = 4096;
	else if (case_target_gate(fh->n.c, fh_input(fh), NULL) != LF_OK) {
		/* Closed means closed: not even a partial line is held. */
		fh_line_free(fh);
		fh->last_err = EPIPE;
		return -EPIPE;
	}
	if (fh->pending_err) {
		int e = fh->pending_err;

		fh->pending_err = 0;
		return -e;
	}
	if (fh->owed_err) {
		int e = fh->owed_err;

		fh->owed_err = 0;
		if (fh_is_resend(fh, buf, size, off))
			return -e;
	}
	if (fh->discarding) {
		if (memchr(buf, '\n', size))
			fh->discarding = false;
		return -fh->discard_err;
	}
	while (i < size) {
		const char *nl = memchr(buf + i, '\n', size - i);
		size_t n = nl ? (size_t)(nl - (buf + i)) : size - i;
		const char *line = buf + i;
		int rc;

		if (fh->len + n > max) {
			rc = fh_too_long(fh);
			if (nl)
				fh->discarding = false;
			goto refused;
		}
		if (!nl || fh->len) {
			rc = fh_line_room(fh, fh->len + n, max);
			if (rc) {
				rc = fh_no_room(fh, rc);
				if (nl)
					fh->discarding = false;
				goto refused;
			}
			memcpy(fh->buf + fh->len, line, n);
			fh->len += n;
			fh->buf[fh->len] = '\0';
			if (!nl)
				return (int)size;
			line = fh->buf;
			n = fh->len;
		}
		/*
		 * Only the write's last line is acknowledged late (write.c):
		 * the lines before it are durable before the next is read,
		 * as a case takes one line after another.
		 */
		if (memchr(nl + 1, '\n', size - (size_t)(nl + 1 - buf))) {
			struct lf_defer *d = defer_swap(NULL);

			rc = fh_line(fh, line, n);
			defer_swap(d);
		} else {
			rc = fh_line(fh, line, n);
		}
		fh->len = 0;
		if (fh->cap > FH_LINE_KEEP)
			fh_line_free(fh);
		if (rc == -EINPROGRESS) {
			/* Its host executor goes on with the write (write.c). */
			lfs_write_exec_pending(i, (size_t)(nl - buf) + 1);
			return rc;
		}
		if (rc) {
			fh->last_err = -rc;
			goto refused;
		}
		i += (size_t)(nl - (buf + i)) + 1;
		continue;
	refused:
		if (i == 0) {
			if (carried && nl && !fh->discarding) {
				fh->owed_err = -rc;
				fh->owed_off = off;
				fh->owed_len = (size_t)(nl - buf) + 1;
				memcpy(fh->owed_head, buf,
				       fh->owed_len < sizeof(fh->owed_head)
					       ? fh->owed_len
					       : sizeof(fh->owed_head));
			}
			return rc;
		}
		fh->pending_err = -rc;
		return (int)i;
	}
	return (int)size;
}
