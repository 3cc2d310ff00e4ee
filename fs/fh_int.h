/* SPDX-License-Identifier: MIT */
/*
 * fh_int.h - what one open file of the view holds, shared by fh.c (open,
 * read, documents, close) and fh_line.c (line files).
 */
#ifndef LFS_FH_INT_H
#define LFS_FH_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fh.h"

/*
 * Unread replies kept per open; all of them together are kept within
 * --max-pending, past which each descriptor keeps only its newest.
 */
#define FH_REPLY_KEEP (4u * 1024 * 1024)
#define FH_LINE_KEEP  (64u * 1024) /* a line buffer kept for the next line */
/* One case's share of --max-pending: a quarter, but one whole line. */
#define FH_CASE_PENDING(ctx)                                                   \
	((ctx)->max_pending / 4 > (ctx)->max_line + 1 ? (ctx)->max_pending / 4 \
						      : (ctx)->max_line + 1)

/* The node comes first: fstat and ftruncate find it there (ops.c). */
struct lfs_fh {
	struct node n;
	pthread_mutex_t lock;
	char *snap; /* read snapshot, taken at open */
	size_t snap_len;
	long long ledger_len;
	char *buf; /* partial line, or a whole document */
	size_t len, cap;
	bool charged;	 /* cap counts against --max-pending */
	bool discarding; /* inside a refused line, up to its newline */
	int discard_err; /* what answers the writes of its rest */
	bool dirty;	 /* a document was written */
	int pending_err; /* answers the next write after a short count */
	/*
	 * A line refused in a later piece of one write(2) began in an
	 * earlier piece, which was accepted: the caller saw a short count
	 * and resends from the refused piece.  That resend (same offset,
	 * same bytes up to the line's newline) is answered with the errno,
	 * not read as a new line.
	 */
	int owed_err;
	off_t owed_off;
	size_t owed_len;
	char owed_head[32];
	int last_err; /* answers flush */
	/* A deferred write's flush failed (write.c): flush answers EIO. */
	atomic_int late_err;
	/* Its case closed while another thread held lock: drop the line. */
	atomic_bool drop_asked;
	bool keep_replies;
	bool snap_charged; /* snap_len is charged to --max-pending */
	bool handle_taken; /* counted among its case's target handles */
	/*
	 * The reply cursor of `request`, under its own lock, which is taken
	 * with no other held: a deferred write's replies are added by the
	 * thread that led their flush (write.c), which may hold a case lock.
	 */
	pthread_mutex_t rep_lock;
	char *rep;
	size_t rep_len, rep_pos;
	struct lfs_fh *prev_open, *next_open; /* fh_open_list */
};

static inline struct lfs_fh *fh_of(struct fuse_file_info *fi)
{
	return (struct lfs_fh *)(uintptr_t)fi->fh;
}

/* Append n bytes of data to a growing NUL-ended buffer.  0 or -ENOMEM. */
int fh_append(char **buf, size_t *len, size_t *cap, const char *data, size_t n);

/* Free a line file's buffer and give its bytes back to the budget. */
void fh_line_free(struct lfs_fh *fh);

/*
 * Case c closed or failed: the partial lines its targets' descriptors
 * hold are freed and their budget given back (ledgerfs(8) LIFECYCLE:
 * a line begun before the close holds nothing); the rest of each such
 * line is dropped with EPIPE.
 */
void fh_drop_lines_of(struct lf_case *c);

/*
 * Under fh->lock: drop fh's partial line if a close found fh busy and
 * asked for it (fh_drop_lines_of waits for no writer).
 */
void fh_drop_if_asked(struct lfs_fh *fh);

/*
 * Take fh->lock to write or close through fh: a drop asked while another
 * thread held it is done first, so no line begun before its case closed
 * is completed after.
 */
void fh_lock(struct lfs_fh *fh);

/*
 * Charge add bytes to fh's case and to the daemon, each within its bound
 * for budget b (ledgerfs(8) LIMITS): 0, or -ENOBUFS with nothing charged.
 * fh_uncharge gives n bytes back to both.
 */
int fh_charge(struct lfs_fh *fh, enum case_budget b, size_t add);
void fh_uncharge(struct lfs_fh *fh, enum case_budget b, size_t n);

/* One complete line to the core.  0 or -errno. */
int fh_line(struct lfs_fh *fh, const char *line, size_t len);

/* Add a reply line to the cursor of `request` (takes rep_lock). */
void fh_keep_reply(struct lfs_fh *fh, const char *reply);
/* Free the replies fh holds, giving their bytes back to the bound. */
void fh_replies_free(struct lfs_fh *fh);

/*
 * The reply of a call whose write is deferred (write.c): kept once its
 * rows are durable.  0, or -1 when no deferred write runs on the thread.
 */
int lfs_write_stash(const char *reply);

/*
 * A line of the deferred write on this thread is a call a host executor
 * runs (case.h, case_exec_catch): the write's lines from before (where
 * that line begins in the buffer taken) to next (where the line after it
 * begins) wait for it; what follows is taken once its result is durable.
 */
void lfs_write_exec_pending(size_t before, size_t next);

/*
 * A WRITE of size bytes at off to a line file, under fh->lock: the bytes
 * taken (a short count when a later line was refused), or -errno.
 */
int fh_write_lines(struct lfs_fh *fh, const char *buf, size_t size, off_t off);

#endif
