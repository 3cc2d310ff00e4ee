/* SPDX-License-Identifier: MIT */
/*
 * ops.c - the FUSE operations: resolve the node, call the core, map the
 * core's codes to errno.  Every changing file is served direct_io from a
 * snapshot taken at open, so a read never mixes two states; `request`
 * is nonseekable and keeps a per-open cursor over its own replies.
 */
#include "ops.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fh.h"
#include "tree.h"

static const int errno_of[LF_ERR_COUNT] = {
	[LF_OK] = 0,
	[LF_EINVAL_JSON] = EINVAL,
	[LF_TOO_BIG] = EFBIG,
	[LF_UNREGISTERED] = EACCES,
	[LF_BAD_TOKEN] = EACCES,
	[LF_DUPLICATE] = EEXIST,
	[LF_CLOSED] = EPIPE,
	[LF_UNKNOWN_CALL] = ENOENT,
	[LF_NOT_PASS] = EINVAL,
	[LF_CONFLICT] = EEXIST,
	[LF_FROZEN] = EBUSY,
	[LF_EINVAL_DOC] = EINVAL,
	[LF_BAD_NAME] = EINVAL,
	[LF_EXISTS] = EEXIST,
	[LF_NOT_FOUND] = ENOENT,
	[LF_NOT_READY] = EACCES,
	[LF_BAD_COMMAND] = EINVAL,
	[LF_VERIFY] = EIO,
	[LF_IO] = EIO,
	[LF_NOMEM] = ENOMEM,
	[LF_PATTERN_LIMIT] = EIO, /* answered as a blocked call, not here */
	[LF_LEDGER_FULL] = EFBIG,
	[LF_PENDING_FULL] = ENOBUFS,
	[LF_MATCH_HEAP_FULL] = ENOBUFS,
	[LF_EXEC_PENDING] = EINPROGRESS, /* never answered: write.c */
};

int lfs_errno(enum lf_err e)
{
	return (unsigned)e < LF_ERR_COUNT ? errno_of[e] : EIO;
}

const char *lfs_errno_name(int err)
{
	switch (err) {
	case EINVAL:
		return "EINVAL";
	case EFBIG:
		return "EFBIG";
	case EACCES:
		return "EACCES";
	case EEXIST:
		return "EEXIST";
	case EPIPE:
		return "EPIPE";
	case ENOENT:
		return "ENOENT";
	case EBUSY:
		return "EBUSY";
	case ENOMEM:
		return "ENOMEM";
	case ENOBUFS:
		return "ENOBUFS";
	default:
		return "EIO";
	}
}

#define ctx lfs_context

struct lfs_ctx *lfs_the_ctx;

static void *lfs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* The view changes under the kernel: no data cache, short attrs. */
	cfg->kernel_cache = 0;
	cfg->direct_io = 1;
	cfg->entry_timeout = 1.0;
	cfg->attr_timeout = 1.0;
	cfg->negative_timeout = 0;
	cfg->hard_remove = 1;
	/*
	 * Reads and writes go by file handle; without a path libfuse skips
	 * building one under its global tree lock on every call.
	 */
	cfg->nullpath_ok = 1;
	/* `> request` opens with O_TRUNC; take it in open, not as setattr. */
	conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	/* Writes arrive in memory, where write.c reads them (no pipes). */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	lfs_the_ctx = fuse_get_context()->private_data;
	lfs_the_ctx->proto_minor = conn->proto_minor;
	return lfs_the_ctx;
}

/*
 * The node of path, or (with nullpath_ok, for calls on an open handle)
 * of the handle: file and folder handles both begin with their node.
 */
static int lfs_node_of(const char *path, struct fuse_file_info *fi,
		       struct node *n)
{
	if (path)
		return tree_resolve(ctx()->reg, path, n);
	if (!fi || !fi->fh)
		return -ENOENT;
	*n = *(const struct node *)(uintptr_t)fi->fh;
	return 0;
}

/* Does the variable part of a node (a call folder, a reply) exist? */
static int node_exists(struct node *n)
{
	char *s = NULL;

	if (n->kind == N_CALLDIR || n->kind == N_CALLFILE)
		s = case_call_file(n->c, n->arg,
				   n->kind == N_CALLDIR ? "request" : n->file);
	else if (n->kind == N_REPLYFILE)
		s = case_reply_for(n->c, n->arg);
	else
		return 0;
	free(s);
	return s ? 0 : -ENOENT;
}

static int lfs_getattr(const char *path, struct stat *st,
		       struct fuse_file_info *fi)
{
	struct node n;
	int rc;

	rc = lfs_node_of(path, fi, &n);
	if (rc == 0)
		rc = node_exists(&n);
	if (rc)
		return rc;
	memset(st, 0, sizeof(*st));
	st->st_mode = tree_info(n.kind)->mode;
	st->st_nlink = S_ISDIR(st->st_mode) ? 2 : 1;
	st->st_uid = getuid();
	st->st_gid = getgid();
	/*
	 * The real size, so stat, tar, cp -r and rsync copy the bytes; a
	 * read still serves the snapshot taken at open (direct_io).
	 */
	st->st_size = lfs_fh_size(&n, path ? NULL : fi);
	st->st_atime = st->st_mtime = st->st_ctime = ctx()->started;
	return 0;
}

/*
 * A listing is handed out a buffer at a time from the reader's offset
 * (entry N at offset N), never whole: libfuse then keeps one buffer per
 * open folder, not a copy of a listing of up to --max-calls long names
 * for every handle a target holds open (ledgerfs(8) LIMITS).
 */
struct fill {
	void *buf;
	fuse_fill_dir_t filler;
	off_t off; /* entries up to this one were handed out before */
	off_t pos; /* this entry's offset */
	bool full; /* the reader's buffer is full: stop */
};

/* The next entry: false once the buffer is full. */
static bool fill_next(struct fill *f, const char *name)
{
	if (f->full)
		return false;
	f->pos++;
	if (f->pos > f->off && f->filler(f->buf, name, NULL, f->pos, 0))
		f->full = true;
	return !f->full;
}

static void fill_one(void *p, const char *name)
{
	fill_next(p, name);
}

/*
 * A folder's node is resolved once at opendir and kept in the handle:
 * with nullpath_ok, readdir gets no path.  A target's folders count among
 * its case's handles (fh_take_handle).
 */
struct lfs_dir {
	struct node n; /* first: readdir reads the handle as a node */
	bool taken;
};

static int lfs_opendir(const char *path, struct fuse_file_info *fi)
{
	struct lfs_dir *d = malloc(sizeof(*d));
	int rc;

	if (!d)
		return -ENOMEM;
	rc = tree_resolve(ctx()->reg, path, &d->n);
	if (rc == 0)
		rc = node_exists(&d->n);
	if (rc == 0 && !S_ISDIR(tree_info(d->n.kind)->mode))
		rc = -ENOTDIR;
	if (rc == 0)
		rc = fh_take_handle(&d->n, &d->taken);
	if (rc) {
		free(d);
		return rc;
	}
	fi->fh = (uintptr_t)d;
	return 0;
}

static int lfs_releasedir(const char *path, struct fuse_file_info *fi)
{
	struct lfs_dir *d = (struct lfs_dir *)(uintptr_t)fi->fh;

	(void)path;
	if (d->taken)
		fh_give_handle(&d->n);
	free(d);
	return 0;
}

static int lfs_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		       off_t off, struct fuse_file_info *fi,
		       enum fuse_readdir_flags flags)
{
	struct fill f = {buf, filler, off, 0, false};
	struct node n = *(struct node *)(uintptr_t)fi->fh;
	char name[REQUEST_NAME_MAX + 1];
	size_t i, count;

	(void)path;
	(void)flags;
	if (!fill_next(&f, ".") || !fill_next(&f, ".."))
		return 0;
	switch (n.kind) {
	case N_CASES:
		/* Cases and calls are only ever added: offsets stay put. */
		count = registry_count(ctx()->reg);
		for (i = (size_t)(off > 2 ? off - 2 : 0), f.pos = 2 + (off_t)i;
		     i < count; i++)
			if (!fill_next(&f,
				       case_name(registry_at(ctx()->reg, i))))
				break;
		break;
	case N_CALLS:
	case N_REPLIES:
		count = case_call_count(n.c);
		for (i = (size_t)(off > 2 ? off - 2 : 0), f.pos = 2 + (off_t)i;
		     i < count; i++) {
			if ((n.kind == N_CALLS
				     ? case_call_dirname(n.c, i, name,
							 sizeof(name))
				     : case_reply_name(n.c, i, name,
						       sizeof(name))) != 0) {
				f.pos++; /* keep entry i at offset 3 + i */
				continue;
			}
			if (!fill_next(&f, name))
				break;
		}
		break;
	default:
		tree_fixed_children(n.kind, fill_one, &f);
	}
	return 0;
}

static int lfs_mkdir(const char *path, mode_t mode)
{
	struct node n;
	const char *name = strrchr(path, '/');
	struct lf_case *c;
	struct lf_why why;
	char parent[16];
	enum lf_err e;

	(void)mode;
	if (!name || (size_t)(name - path) >= sizeof(parent))
		return -EPERM;
	memcpy(parent, path, (size_t)(name - path));
	parent[name - path] = '\0';
	if (tree_resolve(ctx()->reg, parent, &n) || n.kind != N_CASES)
		return -EPERM;
	e = registry_create(ctx()->reg, name + 1, &c, &why);
	if (e != LF_OK)
		fprintf(stderr, "ledgerfs: mkdir %s: %s\n", path, why.msg);
	return -lfs_errno(e);
}

/* Everything the brief does not list is refused. */
static int lfs_refuse_path(const char *path)
{
	(void)path;
	return -EPERM;
}

static int lfs_refuse2(const char *a, const char *b)
{
	(void)a;
	(void)b;
	return -EPERM;
}

static int lfs_rename(const char *a, const char *b, unsigned int flags)
{
	(void)flags;
	return lfs_refuse2(a, b);
}

static int lfs_mknod(const char *path, mode_t mode, dev_t dev)
{
	(void)mode;
	(void)dev;
	return lfs_refuse_path(path);
}

static int lfs_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)mode;
	(void)fi;
	return lfs_refuse_path(path);
}

static int lfs_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)mode;
	(void)fi;
	return lfs_refuse_path(path);
}

static int lfs_chown(const char *path, uid_t uid, gid_t gid,
		     struct fuse_file_info *fi)
{
	(void)uid;
	(void)gid;
	(void)fi;
	return lfs_refuse_path(path);
}

static int lfs_utimens(const char *path, const struct timespec tv[2],
		       struct fuse_file_info *fi)
{
	(void)tv;
	(void)fi;
	return lfs_refuse_path(path);
}

static int lfs_setxattr(const char *path, const char *name, const char *value,
			size_t size, int flags)
{
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	return lfs_refuse_path(path);
}

static int lfs_removexattr(const char *path, const char *name)
{
	(void)name;
	return lfs_refuse_path(path);
}

/*
 * Truncation to zero of a writable file is what `>` does on kernels that
 * do not pass O_TRUNC to open; it changes nothing here, so allow it.
 */
static int lfs_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct node n;

	if (lfs_node_of(path, fi, &n))
		return -ENOENT;
	if (size == 0 && (tree_info(n.kind)->mode & 0222))
		return 0;
	return -EPERM;
}

const struct fuse_operations lfs_ops = {
	.init = lfs_init,
	.getattr = lfs_getattr,
	.opendir = lfs_opendir,
	.readdir = lfs_readdir,
	.releasedir = lfs_releasedir,
	.mkdir = lfs_mkdir,
	.open = lfs_fh_open,
	.read_buf = lfs_fh_read_buf,
	.write = lfs_fh_write,
	.flush = lfs_fh_flush,
	.release = lfs_fh_release,
	.mknod = lfs_mknod,
	.create = lfs_create,
	.unlink = lfs_refuse_path,
	.rmdir = lfs_refuse_path,
	.symlink = lfs_refuse2,
	.link = lfs_refuse2,
	.rename = lfs_rename,
	.chmod = lfs_chmod,
	.chown = lfs_chown,
	.truncate = lfs_truncate,
	.utimens = lfs_utimens,
	.setxattr = lfs_setxattr,
	.removexattr = lfs_removexattr,
};
