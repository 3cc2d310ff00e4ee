/* SPDX-License-Identifier: MIT */
/*
 * fh.c - what one open file of the view holds (see fh.h).
 *
 * Writes: a line may arrive in several WRITE requests; the write that
 * completes it returns only after the core made its row durable.  When a
 * line after the first of a write is refused, the caller gets a short
 * count and the errno answers its next write; an over-long line is
 * refused as soon as it passes the limit and the rest of it is dropped.
 * Any refusal on a descriptor is reported again by its close (flush),
 * so a writer that only checks close still learns it.
 *
 * Memory (ledgerfs(8) LIMITS): a descriptor holds at most one partial
 * line of max-line bytes, and the partial lines of all target
 * descriptors together at most --max-pending bytes; a line that would
 * pass either is refused and its bytes freed.  A large buffer is freed
 * as soon as its line is taken, not kept for the next.
 */
#include "fh.h"
#include "fh_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tree.h"

/*
 * Every open handle.  A stop (SIGTERM) ends the loop before the kernel's
 * RELEASE of files just closed is read: those are freed at the end.
 */
static pthread_mutex_t fh_open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lfs_fh *fh_open_list;

int fh_append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t ncap = *cap ? *cap : 256;
		char *t;

		while (ncap < *len + n + 1)
			ncap *= 2;
		t = realloc(*buf, ncap);
		if (!t)
			return -ENOMEM;
		*buf = t;
		*cap = ncap;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	(*buf)[*len] = '\0';
	return 0;
}

off_t lfs_fh_size(struct node *n, struct fuse_file_info *fi)
{
	struct lfs_fh *fh = fi && fi->fh ? fh_of(fi) : NULL;
	off_t size = 0;
	char *s;

	if (tree_info(n->kind)->line_input || S_ISDIR(tree_info(n->kind)->mode))
		return 0;
	if (fh) {
		pthread_mutex_lock(&fh->lock);
		size = n->kind == N_LEDGER ? (off_t)fh->ledger_len
					   : (off_t)fh->snap_len;
		pthread_mutex_unlock(&fh->lock);
		return size;
	}
	if (n->kind == N_LEDGER)
		return (off_t)case_ledger_size(n->c);
	/* Looking must not take the key: only an open hands it out. */
	if (n->kind == N_SEAL_KEY)
		return 2 * CHAIN_KEY_BYTES + 1;
	s = lfs_snapshot(n);
	if (s)
		size = (off_t)strlen(s);
	free(s);
	return size;
}

/* The daemon-wide count of budget b: the case's is kept by the core. */
static _Atomic size_t *fh_budget_held(enum case_budget b)
{
	struct lfs_ctx *ctx = lfs_context();

	return b == CASE_OPEN_COPIES ? &ctx->snap_bytes : &ctx->pending_bytes;
}

int fh_charge(struct lfs_fh *fh, enum case_budget b, size_t add)
{
	struct lfs_ctx *ctx = lfs_context();
	_Atomic size_t *all = fh_budget_held(b);

	if (!case_charge(fh->n.c, b, add, FH_CASE_PENDING(ctx)))
		return -ENOBUFS;
	if (atomic_fetch_add(all, add) + add > ctx->max_pending) {
		atomic_fetch_sub(all, add);
		case_uncharge(fh->n.c, b, add);
		return -ENOBUFS;
	}
	return 0;
}

void fh_uncharge(struct lfs_fh *fh, enum case_budget b, size_t n)
{
	atomic_fetch_sub(fh_budget_held(b), n);
	case_uncharge(fh->n.c, b, n);
}

/*
 * The copy a target's open of its tools, reply or replies/ID makes the
 * daemon hold is bounded as its partial lines are, by bounds of the same
 * size kept apart (ledgerfs(8) LIMITS): a target that opens its files by
 * the thousand cannot make the daemon hold their copies, nor keep other
 * cases from reading theirs.  target/error, one short line, always
 * opens.  0, or -ENOBUFS.
 */
static int fh_charge_snapshot(struct lfs_fh *fh)
{
	enum node_kind parent = tree_info(fh->n.kind)->parent;

	if ((parent != N_TARGET && parent != N_REPLIES) ||
	    fh->n.kind == N_ERROR || !fh->snap_len)
		return 0;
	if (fh_charge(fh, CASE_OPEN_COPIES, fh->snap_len) < 0)
		return -ENOBUFS;
	fh->snap_charged = true;
	return 0;
}

static size_t fh_handle_weight(const struct node *n)
{
	return S_ISDIR(tree_info(n->kind)->mode) ? FH_DIR_WEIGHT : 1;
}

int fh_take_handle(const struct node *n, bool *taken)
{
	enum node_kind parent = tree_info(n->kind)->parent;

	*taken = false;
	if (!n->c ||
	    (n->kind != N_TARGET && parent != N_TARGET && parent != N_REPLIES))
		return 0;
	if (!case_charge(n->c, CASE_OPEN_HANDLES, fh_handle_weight(n),
			 FH_CASE_HANDLES))
		return -EMFILE;
	*taken = true;
	return 0;
}

void fh_give_handle(const struct node *n)
{
	case_uncharge(n->c, CASE_OPEN_HANDLES, fh_handle_weight(n));
}

int lfs_fh_open(const char *path, struct fuse_file_info *fi)
{
	struct lfs_fh *fh;
	struct node n;
	mode_t mode;
	int acc = fi->flags & O_ACCMODE, rc;
	bool taken;

	rc = tree_resolve(lfs_context()->reg, path, &n);
	if (rc)
		return rc;
	mode = tree_info(n.kind)->mode;
	if (S_ISDIR(mode))
		return -EISDIR;
	/* Root passes the kernel's mode check; the view still says no. */
	if (acc != O_RDONLY && !(mode & 0222))
		return -EROFS;
	if (acc != O_WRONLY && !(mode & 0444))
		return -EACCES;
	rc = fh_take_handle(&n, &taken);
	if (rc)
		return rc;
	fh = calloc(1, sizeof(*fh));
	if (!fh) {
		if (taken)
			fh_give_handle(&n);
		return -ENOMEM;
	}
	fh->handle_taken = taken;
	pthread_mutex_init(&fh->lock, NULL);
	pthread_mutex_init(&fh->rep_lock, NULL);
	atomic_init(&fh->late_err, 0);
	fh->n = n;
	if (n.kind == N_LEDGER) {
		fh->ledger_len = case_ledger_size(n.c);
	} else if (acc != O_WRONLY && !tree_info(n.kind)->line_input) {
		fh->snap = lfs_snapshot(&n);
		rc = fh->snap ? 0 : -ENOENT;
		if (!rc) {
			fh->snap_len = strlen(fh->snap);
			rc = fh_charge_snapshot(fh);
		}
		if (rc) {
			if (taken)
				fh_give_handle(&n);
			free(fh->snap);
			free(fh);
			return rc;
		}
	}
	fh->keep_replies = n.kind == N_REQUEST && acc == O_RDWR;
	fh->charged = tree_info(n.kind)->line_input && n.kind != N_CTL;
	pthread_mutex_lock(&fh_open_lock);
	fh->next_open = fh_open_list;
	if (fh_open_list)
		fh_open_list->prev_open = fh;
	fh_open_list = fh;
	pthread_mutex_unlock(&fh_open_lock);
	fi->fh = (uintptr_t)fh;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	if (n.kind == N_REQUEST)
		fi->nonseekable = 1;
	return 0;
}

/* How many bytes a read of size at off returns now.  Under fh->lock
 * (fh->rep_lock for `request`). */
static size_t fh_read_len(struct lfs_fh *fh, size_t size, off_t off)
{
	size_t n = 0;

	if (fh->n.kind == N_REQUEST)
		n = fh->rep_len - fh->rep_pos;
	else if (fh->n.kind == N_LEDGER)
		n = off < fh->ledger_len ? (size_t)(fh->ledger_len - off) : 0;
	else if (fh->snap && (size_t)off < fh->snap_len)
		n = fh->snap_len - (size_t)off;
	return n < size ? n : size;
}

/* Copy n bytes (from fh_read_len) into buf.  Under the same lock. */
static int fh_read_copy(struct lfs_fh *fh, char *buf, size_t n, off_t off)
{
	if (!n)
		return 0;
	if (fh->n.kind == N_REQUEST) {
		/* The kernel's offset means nothing here: a cursor per open. */
		memcpy(buf, fh->rep + fh->rep_pos, n);
		fh->rep_pos += n;
	} else if (fh->n.kind == N_LEDGER) {
		long r = case_ledger_read(fh->n.c, buf, n, off);

		return r < 0 ? -EIO : (int)r;
	} else {
		memcpy(buf, fh->snap + off, n);
	}
	return (int)n;
}

/*
 * Reads hand libfuse a buffer of what is there, not of what was asked:
 * the kernel asks for the reader's whole buffer (64 KiB or more) and a
 * reply line is a few hundred bytes.
 */
int lfs_fh_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	struct lfs_fh *fh = fh_of(fi);
	struct fuse_bufvec *bv = malloc(sizeof(*bv));
	pthread_mutex_t *lock;
	size_t n;
	char *mem;
	int r;

	(void)path;
	if (!bv)
		return -ENOMEM;
	/* The reply cursor has its own lock: a write may hold fh->lock. */
	lock = fh->n.kind == N_REQUEST ? &fh->rep_lock : &fh->lock;
	pthread_mutex_lock(lock);
	n = fh_read_len(fh, size, off);
	mem = malloc(n ? n : 1);
	r = mem ? fh_read_copy(fh, mem, n, off) : -ENOMEM;
	pthread_mutex_unlock(lock);
	if (r < 0) {
		free(mem);
		free(bv);
		return r;
	}
	*bv = FUSE_BUFVEC_INIT((size_t)r);
	bv->buf[0].mem = mem;
	*bufp = bv;
	return 0;
}

int lfs_fh_write(const char *path, const char *buf, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct lfs_fh *fh = fh_of(fi);
	int rc;

	(void)path;
	(void)off;
	fh_lock(fh);
	if (fh->n.kind == N_POLICY || fh->n.kind == N_MOCKS ||
	    fh->n.kind == N_TOOLS) {
		/* Taken whole at close; only the bound is checked here. */
		if (fh->len + size > CASE_DOC_MAX)
			rc = -EFBIG;
		else if (fh_append(&fh->buf, &fh->len, &fh->cap, buf, size))
			rc = -ENOMEM;
		else
			rc = (int)size;
		fh->dirty = true;
		if (rc < 0)
			fh->last_err = -rc;
	} else {
		rc = fh_write_lines(fh, buf, size, off);
		fh_drop_if_asked(fh);
	}
	pthread_mutex_unlock(&fh->lock);
	return rc;
}

int lfs_fh_flush(const char *path, struct fuse_file_info *fi)
{
	struct lfs_fh *fh = fh_of(fi);
	struct lf_why why = {{0}};
	int rc = 0;

	(void)path;
	fh_lock(fh);
	if (fh->n.kind == N_TOOLS && fh->dirty && !fh->last_err) {
		enum lf_err e = case_set_tools(fh->n.c, fh->buf ? fh->buf : "",
					       fh->len, &why);

		if (e != LF_OK)
			fprintf(stderr, "ledgerfs: %s tools: %s\n",
				case_name(fh->n.c), why.msg);
		rc = -lfs_errno(e);
		fh->dirty = false;
		fh->len = 0;
	} else if ((fh->n.kind == N_POLICY || fh->n.kind == N_MOCKS) &&
		   fh->dirty && !fh->last_err) {
		enum lf_err e =
			fh->n.kind == N_POLICY
				? case_set_policy(fh->n.c,
						  fh->buf ? fh->buf : "",
						  fh->len, &why)
				: case_set_mocks(fh->n.c,
						 fh->buf ? fh->buf : "",
						 fh->len, &why);

		if (e != LF_OK)
			fprintf(stderr, "ledgerfs: %s %s: %s\n",
				case_name(fh->n.c),
				fh->n.kind == N_POLICY ? "policy" : "mocks",
				why.msg);
		rc = -lfs_errno(e);
		fh->dirty = false;
		fh->len = 0;
	} else if (tree_info(fh->n.kind)->line_input && fh->len &&
		   !fh->discarding) {
		/* A final line without newline is still a line. */
		rc = fh_line(fh, fh->buf, fh->len);
		fh->len = 0;
		if (fh->cap > FH_LINE_KEEP)
			fh_line_free(fh);
	}
	if (!rc && fh->last_err)
		rc = -fh->last_err;
	if (!rc && atomic_load(&fh->late_err))
		rc = -atomic_exchange(&fh->late_err, 0);
	fh->last_err = 0;
	fh->dirty = false;
	fh_drop_if_asked(fh);
	pthread_mutex_unlock(&fh->lock);
	return rc;
}

static void fh_free(struct lfs_fh *fh)
{
	pthread_mutex_destroy(&fh->lock);
	pthread_mutex_destroy(&fh->rep_lock);
	if (fh->n.kind == N_SEAL_KEY && fh->snap)
		explicit_bzero(fh->snap, fh->snap_len);
	if (fh->snap_charged)
		fh_uncharge(fh, CASE_OPEN_COPIES, fh->snap_len);
	if (fh->handle_taken)
		fh_give_handle(&fh->n);
	free(fh->snap);
	if (tree_info(fh->n.kind)->line_input)
		fh_line_free(fh);
	else
		free(fh->buf);
	fh_replies_free(fh);
	free(fh);
}

int lfs_fh_release(const char *path, struct fuse_file_info *fi)
{
	struct lfs_fh *fh = fh_of(fi);

	(void)path;
	pthread_mutex_lock(&fh_open_lock);
	if (fh->prev_open)
		fh->prev_open->next_open = fh->next_open;
	else
		fh_open_list = fh->next_open;
	if (fh->next_open)
		fh->next_open->prev_open = fh->prev_open;
	pthread_mutex_unlock(&fh_open_lock);
	fh_free(fh);
	return 0;
}

/* Under fh->lock: the rest of a begun line is dropped with EPIPE. */
static void fh_drop_line(struct lfs_fh *fh)
{
	if (fh->len) {
		fh->discarding = true;
		fh->discard_err = EPIPE;
	}
	fh_line_free(fh);
}

void fh_drop_if_asked(struct lfs_fh *fh)
{
	if (atomic_exchange(&fh->drop_asked, false))
		fh_drop_line(fh);
}

void fh_lock(struct lfs_fh *fh)
{
	pthread_mutex_lock(&fh->lock);
	/* A close that found the handle busy before this: honour it first. */
	fh_drop_if_asked(fh);
}

void fh_drop_lines_of(struct lf_case *c)
{
	struct lfs_fh *fh;

	/*
	 * Writers take fh->lock alone; open and release take only this.  A
	 * writer may hold its lock for as long as a host executor runs
	 * (ledgerfs(8) HOST EXECUTORS): waiting for it here would hold this
	 * close, and every open and release of the mount, as long.  A busy
	 * handle is asked to drop its line when its holder is done.
	 */
	pthread_mutex_lock(&fh_open_lock);
	for (fh = fh_open_list; fh; fh = fh->next_open) {
		if (fh->n.c != c || !fh->charged || fh->n.kind == N_CTL)
			continue;
		if (pthread_mutex_trylock(&fh->lock) != 0) {
			atomic_store(&fh->drop_asked, true);
			continue;
		}
		atomic_store(&fh->drop_asked, false);
		fh_drop_line(fh);
		pthread_mutex_unlock(&fh->lock);
	}
	pthread_mutex_unlock(&fh_open_lock);
}

void lfs_fh_free_all(void)
{
	struct lfs_fh *fh;

	pthread_mutex_lock(&fh_open_lock);
	while ((fh = fh_open_list)) {
		fh_open_list = fh->next_open;
		/* No request runs: no budget to give back, no context to ask. */
		fh->charged = false;
		fh_free(fh);
	}
	pthread_mutex_unlock(&fh_open_lock);
}
