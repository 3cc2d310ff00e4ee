/* SPDX-License-Identifier: MIT */
/*
 * serve.h - the daemon's serving half (serve.c): the executor helper and
 * the FUSE loop.
 */
#ifndef LFS_SERVE_H
#define LFS_SERVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "ops.h"
#include <fuse_lowlevel.h>

/*
 * The executor helper (ledgerfs(8) HOST EXECUTORS), forked before the
 * daemon has threads or drops privileges: the daemon's end of its
 * socket, or -1 (errno set).
 */
int lfs_start_helper(const char *mnt, const char *user, pid_t *pid);

/*
 * Serve the mounted fuse until a stop: 0 for a clean stop (a signal), 1
 * otherwise.  Takes hsock; unmounts at the end (through the helper after
 * --user, when dropped).
 */
int lfs_serve(struct fuse *fuse, struct fuse_cmdline_opts *opts,
	      const char *mnt, struct lfs_ctx *ctx, int hsock, bool dropped);

#endif
