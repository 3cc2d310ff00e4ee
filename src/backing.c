/*
 * backing.c - the safety rules for the backing folder (see backing.h).
 * Containment is judged by device and inode, walking `..` upwards, so
 * links and bind mounts in the path names cannot hide it.
 */
#include "backing.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Is the folder (dev, ino) `outer` the same as, or above, path? */
static int backing_contains(dev_t odev, ino_t oino, const char *path,
			    bool *inside)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), up;
	struct stat st, pst;

	*inside = false;
	if (fd < 0)
		return -1;
	for (;;) {
		if (fstat(fd, &st) < 0)
			break;
		if (st.st_dev == odev && st.st_ino == oino) {
			*inside = true;
			break;
		}
		up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up < 0 || fstat(up, &pst) < 0) {
			if (up >= 0)
				close(up);
			break;
		}
		close(fd);
		fd = up;
		if (pst.st_dev == st.st_dev && pst.st_ino == st.st_ino)
			break; /* reached / */
	}
	close(fd);
	return 0;
}

static bool owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == geteuid();
}

/* The ancestors of real (an absolute, resolved path), from / down. */
static enum lf_err backing_check_ancestors(const char *real, struct lf_why *why)
{
	char path[PATH_MAX], *slash;
	struct stat st, child;
	size_t end = 1;

	for (;;) {
		slash = strchr(real + end, '/');
		if (!slash)
			return LF_OK;
		end = (size_t)(slash - real);
		memcpy(path, real, end ? end : 1);
		path[end ? end : 1] = '\0';
		if (lstat(path, &st) < 0)
			return lf_fail(why, LF_IO, "%s: %s", path,
				       strerror(errno));
		if (!owner_ok(&st))
			return lf_fail(why, LF_VERIFY,
				       "%s (above the backing folder) is owned by uid %u",
				       path, (unsigned)st.st_uid);
		if (st.st_mode & 022) {
			char next[PATH_MAX];
			const char *nend = strchr(real + end + 1, '/');
			size_t nlen = nend ? (size_t)(nend - real) : strlen(real);

			memcpy(next, real, nlen);
			next[nlen] = '\0';
			/* /tmp-like: others may add, but not replace ours. */
			if (!(st.st_mode & S_ISVTX) || lstat(next, &child) < 0 ||
			    !owner_ok(&child))
				return lf_fail(why, LF_VERIFY,
					       "%s (above the backing folder) is writable by %s",
					       path,
					       st.st_mode & 002 ? "others" : "group");
		}
		end++;
	}
}

enum lf_err backing_check(const char *dir, const char *mountpoint,
			  const char *keyfile, struct lf_why *why)
{
	char real[PATH_MAX];
	struct stat st, mst;
	bool inside;
	enum lf_err e;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
			       strerror(errno));
	if (lstat(dir, &st) < 0)
		return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
			       strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return lf_fail(why, LF_VERIFY,
			       "backing folder %s is not a folder (or is a symbolic link)",
			       dir);
	if (st.st_uid != geteuid())
		return lf_fail(why, LF_VERIFY,
			       "backing folder %s is owned by uid %u, not by this user",
			       dir, (unsigned)st.st_uid);
	if ((st.st_mode & 07777) != 0700)
		return lf_fail(why, LF_VERIFY,
			       "backing folder %s has mode %04o; it must be 0700",
			       dir, (unsigned)(st.st_mode & 07777));
	if (!realpath(dir, real))
		return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
			       strerror(errno));
	e = backing_check_ancestors(real, why);
	if (e != LF_OK)
		return e;
	if (mountpoint) {
		if (stat(mountpoint, &mst) < 0)
			return lf_fail(why, LF_IO, "mount point %s: %s",
				       mountpoint, strerror(errno));
		if (backing_contains(mst.st_dev, mst.st_ino, dir, &inside) < 0)
			return lf_fail(why, LF_IO, "backing folder %s: %s",
				       dir, strerror(errno));
		if (inside)
			return lf_fail(why, LF_VERIFY,
				       "backing folder %s lies inside the mount point %s",
				       dir, mountpoint);
		if (backing_contains(st.st_dev, st.st_ino, mountpoint,
				     &inside) < 0)
			return lf_fail(why, LF_IO, "mount point %s: %s",
				       mountpoint, strerror(errno));
		if (inside)
			return lf_fail(why, LF_VERIFY,
				       "mount point %s lies inside the backing folder %s",
				       mountpoint, dir);
	}
	if (keyfile) {
		char kdir[PATH_MAX], *slash;

		snprintf(kdir, sizeof(kdir), "%s", keyfile);
		slash = strrchr(kdir, '/');
		if (slash && slash != kdir)
			*slash = '\0';
		else
			snprintf(kdir, sizeof(kdir), "%s", slash ? "/" : ".");
		if (backing_contains(st.st_dev, st.st_ino, kdir, &inside) == 0 &&
		    inside)
			return lf_fail(why, LF_VERIFY,
				       "key file %s lies inside the backing folder %s: a copy of the ledgers would carry the key",
				       keyfile, dir);
	}
	return LF_OK;
}
