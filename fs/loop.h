/* SPDX-License-Identifier: MIT */
/*
 * loop.h - the multithreaded FUSE loop of the view (loop.c).
 */
#ifndef LFS_LOOP_H
#define LFS_LOOP_H

#include "ops.h"
#include <fuse_lowlevel.h>

/*
 * Serve se until it exits (a signal, an unmount): 0, or -errno when
 * reading from the kernel failed, or -1 when no worker could start.
 * on_exit(arg), when not NULL, runs once the session has exited, before
 * the workers still busy are waited for.
 */
int lfs_loop_mt(struct fuse_session *se, int max_threads, int max_idle,
		void (*on_exit)(void *), void *arg);

#endif
