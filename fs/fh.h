/* SPDX-License-Identifier: MIT */
/*
 * fh.h - open files of the view: snapshots for reading, line assembly
 * for writing, and the per-open reply cursor of `request`.
 */
#ifndef LFS_FH_H
#define LFS_FH_H

#include "ops.h"
#include "tree.h"

int lfs_fh_open(const char *path, struct fuse_file_info *fi);
int lfs_fh_read_buf(const char *path, struct fuse_bufvec **bufp, size_t size,
		    off_t off, struct fuse_file_info *fi);
int lfs_fh_write(const char *path, const char *buf, size_t size, off_t off,
		 struct fuse_file_info *fi);
int lfs_fh_flush(const char *path, struct fuse_file_info *fi);
int lfs_fh_release(const char *path, struct fuse_file_info *fi);
/* After the loop: free the files still open (their RELEASE never came). */
void lfs_fh_free_all(void);

/*
 * A target's open file or folder under its target/ folder, counted per
 * case (ledgerfs(8) LIMITS): at most FH_CASE_HANDLES at once, a folder
 * counting as FH_DIR_WEIGHT (its listing buffer costs that many files),
 * past which an open gets EMFILE.  Returns 0 with *taken set when n is
 * one to count and was counted, 0 with *taken false when it is not one
 * to count, or -EMFILE.  fh_give_handle gives a taken one back.
 */
#define FH_CASE_HANDLES 16384
#define FH_DIR_WEIGHT	16
int fh_take_handle(const struct node *n, bool *taken);
void fh_give_handle(const struct node *n);

/*
 * The size a read-only file reports to stat (ledgerfs(8) THE VIEW), so
 * tar, cp and rsync copy its bytes: the snapshot of an open file (fi),
 * else what a snapshot taken now would hold.  0 for line-input files.
 */
off_t lfs_fh_size(struct node *n, struct fuse_file_info *fi);

/*
 * The text of read-only node n now (snapshot.c); NULL when it has none
 * (a seal_key already handed out: ENOENT) or on no memory.  Opening
 * seal_key hands K0 out: only an open may call this for it.
 */
char *lfs_snapshot(struct node *n);

#endif
