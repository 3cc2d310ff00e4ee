/* SPDX-License-Identifier: MIT */
/*
 * case_fail.h - the durable failed marker of a case folder, and undoing a
 * creation that failed half way (ledgerfs(8), FAILURE).
 */
#ifndef LF_CASE_FAIL_H
#define LF_CASE_FAIL_H

/* Bytes kept for the reason; the marker's whole size. */
#define CASE_FAIL_NOTE_MAX 4096

/* At creation: the pre-made, flushed failed.ready in dirfd.  0 or -1. */
int case_fail_prepare(int dirfd);

/*
 * The case failed: reason into failed.ready, renamed to `failed`, the
 * folder flushed.  Needs no free space.  0, or -1 with errno.
 */
int case_fail_mark(int dirfd, const char *reason);

/*
 * At load: 1 with *reason (malloc'd) when the case was marked failed, 0
 * when not, -1 when the marker cannot be read (errno).
 */
int case_fail_read(int dirfd, char **reason);

/*
 * Remove the folder cases_fd/name made by a creation that then failed,
 * with what it holds, and flush cases/, so the name is free again.
 */
int case_fail_unmake(int cases_fd, const char *name);

#endif
