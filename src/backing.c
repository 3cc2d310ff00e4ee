/* SPDX-License-Identifier: MIT */
/*
 * backing.c - the safety rules for the backing folder (see backing.h).
 * Containment is judged by device and inode, walking `..` upwards, so
 * links and bind mounts in the path names cannot hide it.
 */
#include "backing.h"

#include "seal.h"

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

/* The daemon's user: this process's, or --user's before the drop. */
static uid_t daemon_uid = (uid_t)-1;

void backing_set_user(uid_t uid)
{
	daemon_uid = uid;
}

static uid_t this_user(void)
{
	return daemon_uid == (uid_t)-1 ? geteuid() : daemon_uid;
}

static bool owner_ok(const struct stat *st)
{
	return st->st_uid == 0 || st->st_uid == this_user();
}

/*
 * The next component of real below folder f (both absolute), e.g.
 * f = "/tmp", real = "/tmp/x/backing" gives "/tmp/x".  0, or -1.
 */
static int backing_next_below(const char *f, const char *real, char *out,
			      size_t size)
{
	size_t n = strlen(f);
	const char *rest, *end;

	if (strcmp(f, "/") == 0)
		n = 0;
	else if (strncmp(real, f, n) != 0 || real[n] != '/')
		return -1;
	rest = real + n + 1;
	end = strchr(rest, '/');
	n = end ? (size_t)(end - real) : strlen(real);
	if (n >= size)
		return -1;
	memcpy(out, real, n);
	out[n] = '\0';
	return 0;
}

/*
 * The folders above the backing folder, by sealpath's rules (owner, group
 * and other write, ACLs, and every link on the way), with two allowances:
 * folders may belong to the daemon's user as well as root, and a sticky
 * folder such as /tmp may be writable by others when the next folder down
 * belongs to root or the daemon's user, since then no one else can
 * replace it.
 */
static enum lf_err backing_check_ancestors(const char *real, struct lf_why *why)
{
	struct seal_report rep;
	char parent[PATH_MAX], text[PATH_MAX + 64], next[PATH_MAX];
	enum lf_err e = LF_OK;
	struct stat st, child;
	char *slash;
	size_t i;

	snprintf(parent, sizeof(parent), "%s", real);
	slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (seal_audit_path(parent, "/", 0, &rep) == SEAL_ERROR) {
		e = lf_fail(why, LF_IO, "checking the folders above %s: %s",
			    real, rep.error);
		goto out;
	}
	for (i = 0; i < rep.n_findings; i++) {
		const struct seal_finding *f = &rep.findings[i];
		bool writable = f->problem == SEAL_GROUP_WRITE ||
				f->problem == SEAL_OTHER_WRITE;

		if (f->problem == SEAL_OWNER && f->id == this_user())
			continue;
		if (writable && lstat(f->path, &st) == 0 &&
		    (st.st_mode & S_ISVTX) &&
		    backing_next_below(f->path, real, next, sizeof(next)) ==
			    0 &&
		    lstat(next, &child) == 0 && owner_ok(&child))
			continue;
		seal_finding_line(f, text, sizeof(text));
		e = lf_fail(why, LF_VERIFY, "above the backing folder: %s",
			    text);
		goto out;
	}
out:
	seal_report_free(&rep);
	return e;
}

static enum lf_err backing_check_made(const char *dir, const char *mountpoint,
				      const char *keyfile, struct lf_why *why);

enum lf_err backing_check(const char *dir, const char *mountpoint,
			  const char *keyfile, struct lf_why *why)
{
	bool made;
	enum lf_err e;

	made = mkdir(dir, 0700) == 0;
	if (!made && errno != EEXIST)
		return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
			       strerror(errno));
	e = backing_check_made(dir, mountpoint, keyfile, why);
	/* Refused: a folder made for the check is taken away again. */
	if (e != LF_OK && made)
		rmdir(dir);
	return e;
}

static enum lf_err backing_check_made(const char *dir, const char *mountpoint,
				      const char *keyfile, struct lf_why *why)
{
	char real[PATH_MAX];
	struct stat st, mst;
	bool inside;
	enum lf_err e;

	if (lstat(dir, &st) < 0)
		return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
			       strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return lf_fail(
			why, LF_VERIFY,
			"backing folder %s is not a folder (or is a symbolic link)",
			dir);
	if (st.st_uid != this_user())
		return lf_fail(
			why, LF_VERIFY,
			"backing folder %s is owned by uid %u, not by this user",
			dir, (unsigned)st.st_uid);
	if ((st.st_mode & 07777) != 0700)
		return lf_fail(
			why, LF_VERIFY,
			"backing folder %s has mode %04o; it must be 0700", dir,
			(unsigned)(st.st_mode & 07777));
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
			return lf_fail(why, LF_IO, "backing folder %s: %s", dir,
				       strerror(errno));
		if (inside)
			return lf_fail(
				why, LF_VERIFY,
				"backing folder %s lies inside the mount point %s",
				dir, mountpoint);
		if (backing_contains(st.st_dev, st.st_ino, mountpoint,
				     &inside) < 0)
			return lf_fail(why, LF_IO, "mount point %s: %s",
				       mountpoint, strerror(errno));
		if (inside)
			return lf_fail(
				why, LF_VERIFY,
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
		/*
		 * The key's folder may not exist yet (the daemon creates it):
		 * judge its nearest existing ancestor instead.
		 */
		while (backing_contains(st.st_dev, st.st_ino, kdir, &inside) <
			       0 &&
		       errno == ENOENT && strcmp(kdir, "/") &&
		       strcmp(kdir, ".")) {
			slash = strrchr(kdir, '/');
			if (slash && slash != kdir)
				*slash = '\0';
			else
				snprintf(kdir, sizeof(kdir), "%s",
					 slash ? "/" : ".");
		}
		if (inside)
			return lf_fail(
				why, LF_VERIFY,
				"key file %s lies inside the backing folder %s: a copy of the ledgers would carry the key",
				keyfile, dir);
	}
	return LF_OK;
}

/*
 * The key's nearest existing folder: its own folder, or the closest
 * folder above it that exists when the daemon is about to create it.
 */
static int backing_key_folder(const char *keyfile, char *out, size_t size)
{
	char *slash;
	struct stat st;

	if ((size_t)snprintf(out, size, "%s", keyfile) >= size)
		return -1;
	do {
		slash = strrchr(out, '/');
		if (!slash)
			snprintf(out, size, ".");
		else if (slash == out)
			out[1] = '\0';
		else
			*slash = '\0';
	} while (lstat(out, &st) < 0 && errno == ENOENT && strcmp(out, "/") &&
		 strcmp(out, "."));
	return 0;
}

enum lf_err backing_check_key(const char *keyfile, struct lf_why *why)
{
	char folder[PATH_MAX], real[PATH_MAX];
	struct stat st;
	enum lf_err e;

	if (lstat(keyfile, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return lf_fail(
				why, LF_VERIFY,
				"key file %s is not a regular file (or is a symbolic link)",
				keyfile);
		if (!owner_ok(&st))
			return lf_fail(
				why, LF_VERIFY,
				"key file %s is owned by uid %u, not by root or this user",
				keyfile, (unsigned)st.st_uid);
		/* As the key is loaded (chain_load_host_key), said sooner. */
		if (st.st_mode & (S_IRWXG | S_IRWXO))
			return lf_fail(
				why, LF_VERIFY,
				"key file %s has mode %04o: group or others may read or write it (want 0600)",
				keyfile, (unsigned)(st.st_mode & 07777));
	} else if (errno != ENOENT) {
		return lf_fail(why, LF_IO, "key file %s: %s", keyfile,
			       strerror(errno));
	}
	if (backing_key_folder(keyfile, folder, sizeof(folder)) < 0)
		return lf_fail(why, LF_IO, "key file %s: path too long",
			       keyfile);
	if (!realpath(folder, real))
		return lf_fail(why, LF_IO, "key folder %s: %s", folder,
			       strerror(errno));
	if (lstat(real, &st) < 0)
		return lf_fail(why, LF_IO, "key folder %s: %s", real,
			       strerror(errno));
	if (!owner_ok(&st))
		return lf_fail(
			why, LF_VERIFY,
			"key folder %s is owned by uid %u, not by root or this user",
			real, (unsigned)st.st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return lf_fail(
			why, LF_VERIFY,
			"key folder %s has mode %04o: group or others may write it",
			real, (unsigned)(st.st_mode & 07777));
	/*
	 * A sticky key folder (a key straight in /tmp) is safe only as far
	 * as the file: it is judged above; the folders above the key folder
	 * by the backing folder's rules, as if the key folder were it.
	 */
	e = backing_check_ancestors(real, why);
	if (e != LF_OK) {
		/* Say it of the key, not of the backing folder. */
		char msg[sizeof(why->msg)];

		snprintf(msg, sizeof(msg), "%s", why->msg);
		if (strncmp(msg, "above the backing folder: ", 26) == 0)
			lf_fail(why, e, "above the key folder %s: %s", real,
				msg + 26);
	}
	return e;
}

enum lf_err backing_check_trusted_file(const char *path, const char *what,
				       struct lf_why *why)
{
	char real[PATH_MAX], msg[sizeof(why->msg)];
	struct stat st;
	enum lf_err e;

	if (!realpath(path, real) || stat(real, &st) < 0)
		return lf_fail(why, errno == ENOENT ? LF_NOT_FOUND : LF_IO,
			       "%s %s: %s", what, path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return lf_fail(why, LF_BAD_NAME, "%s %s is not a regular file",
			       what, path);
	if (!owner_ok(&st))
		return lf_fail(why, LF_VERIFY,
			       "%s %s is owned by uid %u, not by root or this "
			       "user",
			       what, path, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return lf_fail(why, LF_VERIFY,
			       "%s %s has mode %04o: group or others may write "
			       "it",
			       what, path, (unsigned)(st.st_mode & 07777));
	e = backing_check_ancestors(real, why);
	if (e != LF_OK) {
		snprintf(msg, sizeof(msg), "%s", why->msg);
		if (strncmp(msg, "above the backing folder: ", 26) == 0)
			lf_fail(why, e, "above the %s %s: %s", what, path,
				msg + 26);
	}
	return e;
}

/* Absent now (lstat finds nothing)? */
static bool backing_absent(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 && errno == ENOENT;
}

void backing_made_notice(const char *dir, const char *keyfile,
			 struct backing_made *m)
{
	char sign[PATH_MAX];
	const char *slash = strrchr(keyfile, '/');

	memset(m, 0, sizeof(*m));
	m->backing = backing_absent(dir);
	m->key = backing_absent(keyfile);
	snprintf(sign, sizeof(sign), "%s.sign", keyfile);
	m->sign = backing_absent(sign);
	/* The folder chain_load_host_key makes for a new key. */
	if (slash && slash != keyfile &&
	    (size_t)(slash - keyfile) < sizeof(m->key_dir)) {
		memcpy(m->key_dir, keyfile, (size_t)(slash - keyfile));
		m->key_dir[slash - keyfile] = '\0';
		m->key_folder = backing_absent(m->key_dir);
	}
}

void backing_made_undo(const char *dir, const char *keyfile,
		       const struct backing_made *m)
{
	char sign[PATH_MAX];

	snprintf(sign, sizeof(sign), "%s.sign", keyfile);
	if (m->sign)
		unlink(sign);
	if (m->key)
		unlink(keyfile);
	if (m->key_folder)
		rmdir(m->key_dir);
	if (m->backing)
		rmdir(dir);
}
