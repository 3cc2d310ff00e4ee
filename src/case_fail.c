/* SPDX-License-Identifier: MIT */
/*
 * case_fail.c - a case's failure kept where a full or broken disk still
 * lets it be kept (ledgerfs(8), FAILURE), and a half-made case folder
 * taken back so its name is free again.
 *
 * The marker needs no free space at fail time: creation writes
 * failed.ready, CASE_FAIL_NOTE_MAX bytes of zeros, and flushes it; failing
 * overwrites its first bytes with the reason and renames it to `failed`.
 */
#include "case_fail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAIL_READY "failed.ready"
#define FAIL_DONE  "failed"

int case_fail_prepare(int dirfd)
{
	static const char zeros[CASE_FAIL_NOTE_MAX];
	size_t done = 0;
	int fd, rc = -1;

	fd = openat(dirfd, FAIL_READY,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	/* Real zeros, not a hole: overwriting them allocates nothing. */
	while (done < sizeof(zeros)) {
		ssize_t n = write(fd, zeros + done, sizeof(zeros) - done);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				errno = ENOSPC;
			goto out;
		}
		done += (size_t)n;
	}
	if (fdatasync(fd) == 0)
		rc = 0;
out:
	close(fd);
	return rc;
}

int case_fail_mark(int dirfd, const char *reason)
{
	size_t len = strlen(reason);
	int fd, rc;

	if (len > CASE_FAIL_NOTE_MAX - 1)
		len = CASE_FAIL_NOTE_MAX - 1;
	fd = openat(dirfd, FAIL_READY, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		/* The reason is a courtesy; the rename is the marker. */
		if (pwrite(fd, reason, len, 0) == (ssize_t)len)
			(void)fdatasync(fd);
		close(fd);
		rc = renameat(dirfd, FAIL_READY, dirfd, FAIL_DONE);
	} else {
		/* A case made before markers: an empty file needs no block. */
		fd = openat(dirfd, FAIL_DONE,
			    O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		rc = fd < 0 ? -1 : 0;
		if (fd >= 0) {
			if (write(fd, reason, len) == (ssize_t)len)
				(void)fdatasync(fd);
			close(fd);
		}
	}
	if (rc == 0)
		rc = fsync(dirfd);
	return rc;
}

int case_fail_read(int dirfd, char **reason)
{
	char buf[CASE_FAIL_NOTE_MAX];
	ssize_t n;
	int fd;

	*reason = NULL;
	fd = openat(dirfd, FAIL_DONE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	*reason = strdup(buf[0] ? buf : "failed (the reason was not recorded)");
	return *reason ? 1 : -1;
}

int case_fail_unmake(int cases_fd, const char *name)
{
	int dfd, rc;
	DIR *d;
	struct dirent *de;

	dfd = openat(cases_fd, name,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -1;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -1;
	}
	/* The folder was made by this creation (mkdir is exclusive). */
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rc = unlinkat(cases_fd, name, AT_REMOVEDIR);
	if (rc == 0)
		rc = fsync(cases_fd);
	return rc;
}
