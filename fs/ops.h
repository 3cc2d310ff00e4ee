/* SPDX-License-Identifier: MIT */
/*
 * ops.h - the FUSE operations of the view.
 */
#ifndef LFS_OPS_H
#define LFS_OPS_H

#define FUSE_USE_VERSION 312
#include <fuse.h>

#include "err.h"
#include "registry.h"

struct lfs_ctx {
	struct registry *reg;
	size_t max_line;
	time_t started;
	size_t max_pending; /* bytes of partial target lines, daemon-wide */
	_Atomic size_t pending_bytes; /* partial lines held now (fh_charge) */
	_Atomic size_t snap_bytes; /* copies of target files held (fh_charge) */
	unsigned proto_minor;	   /* the kernel's, from INIT */
};

/* The daemon's context, set at INIT (before any other request). */
extern struct lfs_ctx *lfs_the_ctx;

extern const struct fuse_operations lfs_ops;

/*
 * The one table from core codes to errno (ledgerfs(8) PROTOCOL, Errors of
 * the target folder). Positive errno.
 */
int lfs_errno(enum lf_err e);
const char *lfs_errno_name(int err);

/*
 * Not fuse_get_context(): a write served without libfuse's high-level
 * layer (write.c) has no context of its own.
 */
static inline struct lfs_ctx *lfs_context(void)
{
	return lfs_the_ctx;
}
#endif
