/* SPDX-License-Identifier: MIT */
/*
 * write.h - the target's writes to `request` and `result`, acknowledged
 * by the thread that led their rows' flush (write.c).
 */
#ifndef LFS_WRITE_H
#define LFS_WRITE_H

#include <stdbool.h>

#include "ops.h"
#include <fuse_lowlevel.h>

/*
 * Serve buf if it is a WRITE to `request` or `result`: true when it was
 * taken (answered now or once its rows are durable), false when libfuse
 * is to process it as any other request.
 */
bool lfs_write_deferred(struct fuse_session *se, const struct fuse_buf *buf);

/*
 * How many writes had their rows flushed with no thread waiting: each
 * answered once that flush was over, by the thread that led it, or by
 * its own when the flush ended before it was done with the write.
 */
unsigned long long lfs_write_count(void);

#endif
