/* SPDX-License-Identifier: MIT */
/*
 * ctl_tree.c - a ledger's leaves and the keys that check its
 * checkpoints, for the ledgerctl commands of ledgerctl(1) PUBLIC
 * VERIFICATION.  The chain is checked before any leaf is trusted.
 */
#include "ctl_tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "ctl.h"
#include "ctl_verify.h"
#include "ledger.h"
#include "ledger_hashes.h"

int ctl_tree_open(const char *cmd, const char *path)
{
	struct stat st;
	int dirfd, fd;

	if (stat(path, &st) < 0)
		return -1;
	ctl_note_commit_journal(cmd, path);
	if (!S_ISDIR(st.st_mode))
		return open(path, O_RDONLY | O_CLOEXEC);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -1;
	if (faccessat(dirfd, "status", F_OK, 0) == 0)
		fd = ctl_snapshot_ledger(dirfd);
	else
		fd = openat(dirfd, "ledger.jsonl", O_RDONLY | O_CLOEXEC);
	close(dirfd);
	return fd;
}

/*
 * Row 1's case_id, read after the whole ledger verified: the scan itself
 * then hands no row to a reader, so it can check each row's canonical
 * form on its helper threads.  0, or -1 when it cannot be read.
 */
static int ctl_tree_case_id(int fd, struct ctl_tree *t)
{
	size_t cap = 65536, got = 0;
	char *buf = NULL, *nl = NULL, *nb;
	json_t *row = NULL;
	const char *id;
	ssize_t r;

	while (!nl && cap <= ((size_t)64 << 20) * 2) {
		nb = realloc(buf, cap);
		if (!nb)
			break;
		buf = nb;
		r = pread(fd, buf + got, cap - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		nl = memchr(buf + got, '\n', (size_t)r);
		got += (size_t)r;
		if (got == cap)
			cap *= 2;
	}
	if (nl)
		row = json_loadb(buf, (size_t)(nl - buf), 0, NULL);
	id = json_string_value(json_object_get(row, "case_id"));
	if (id)
		snprintf(t->case_id, sizeof(t->case_id), "%s", id);
	json_decref(row);
	free(buf);
	return id ? 0 : -1;
}

int ctl_tree_load(const char *cmd, int fd, unsigned long long signed_rows,
		  struct ctl_tree *t)
{
	struct ledger_reader rd = {.signed_rows = signed_rows};
	struct ledger_report rep;
	struct lf_why why = {{0}};
	enum lf_err e;
	long ncpu;

	memset(t, 0, sizeof(*t));
	/* One ledger, many rows: as `verify`, on every processor. */
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	ledger_verify_set_threads(ncpu > 1 ? (unsigned)ncpu : 1);
	e = ledger_verify_read(fd, NULL, NULL, NULL, &rd, &rep, &why);
	if (e == LF_IO) {
		fprintf(stderr, "ledgerctl %s: %s\n", cmd, why.msg);
		return 2;
	}
	if (e != LF_OK) {
		printf("bad: %s\n", why.msg);
		return 1;
	}
	if (ctl_tree_load_verified(cmd, fd, rep.head.rows, rep.good_bytes, t))
		return 2;
	t->sealed = rep.sealed;
	return 0;
}

int ctl_tree_load_verified(const char *cmd, int fd, unsigned long long rows,
			   long long good_bytes, struct ctl_tree *t)
{
	struct lf_why why = {{0}};
	enum lf_err e;
	long ncpu;

	memset(t, 0, sizeof(*t));
	t->good_bytes = good_bytes;
	if (rows && ctl_tree_case_id(fd, t) < 0) {
		fprintf(stderr, "ledgerctl %s: cannot read row 1's case_id\n",
			cmd);
		return 2;
	}
	/* A large ledger's leaves are hashed on every processor. */
	ncpu = good_bytes >= (4LL << 20) ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
	e = merkle_leaves_fd(fd, good_bytes,
			     ncpu > 1 ? (unsigned)(ncpu < 16 ? ncpu : 16) : 1,
			     &t->leaves, &t->n, &why);
	if (e != LF_OK) {
		fprintf(stderr, "ledgerctl %s: %s\n", cmd, why.msg);
		return 2;
	}
	return 0;
}

void ctl_tree_free(struct ctl_tree *t)
{
	free(t->leaves);
	t->leaves = NULL;
}

char *ctl_tree_slurp(const char *path, size_t max, size_t *len)
{
	return ctl_tree_slurp_at(AT_FDCWD, path, max, len);
}

char *ctl_tree_slurp_at(int dirfd, const char *path, size_t max, size_t *len)
{
	char *buf = malloc(max + 1);
	size_t got = 0;
	ssize_t r;
	int fd;

	if (!buf)
		return NULL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (got <= max) {
		r = read(fd, buf + got, max + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got > max) {
		free(buf);
		errno = EFBIG;
		return NULL;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

int ctl_tree_vkey(const char *cmd, const char *arg, struct note_key *k)
{
	struct lf_why why = {{0}};
	char *text = NULL;
	size_t len;
	enum lf_err e;

	/* A vkey has two '+'; a file name given here rarely does. */
	if (!strchr(arg, '+') || access(arg, F_OK) == 0) {
		text = ctl_tree_slurp(arg, 1024, &len);
		if (!text) {
			fprintf(stderr, "ledgerctl %s: verifier key %s: %s\n",
				cmd, arg, strerror(errno));
			return 2;
		}
	}
	e = checkpoint_vkey_parse(text ? text : arg, k, &why);
	free(text);
	if (e != LF_OK) {
		fprintf(stderr, "ledgerctl %s: %s\n", cmd, why.msg);
		return 2;
	}
	return 0;
}

int ctl_tree_own_key(const char *cmd, const char *host_key_path,
		     struct note_key *k)
{
	unsigned char host[CHAIN_KEY_BYTES], seed[SIGN_SEED_BYTES];
	unsigned char pub[SIGN_PUB_BYTES];
	char fp[CHAIN_FP_LEN + 1], name[CHECKPOINT_NAME_MAX];
	char *path = sign_key_path(host_key_path);
	int rc = 2, r;

	if (!path)
		return 2;
	r = ctl_read_key(cmd, host_key_path, host);
	if (r == 1)
		fprintf(stderr, "ledgerctl %s: host key %s: %s\n", cmd,
			host_key_path, strerror(errno));
	if (r != 0)
		goto out;
	r = ctl_read_key(cmd, path, seed);
	if (r == 1)
		fprintf(stderr,
			"ledgerctl %s: signing key %s: %s (the daemon makes it at its first start)\n",
			cmd, path, strerror(errno));
	if (r != 0)
		goto out;
	if (sign_public(seed, pub) < 0) {
		fprintf(stderr, "ledgerctl %s: cannot derive the public key\n",
			cmd);
		goto out;
	}
	chain_key_fingerprint(host, CHAIN_KEY_BYTES, fp);
	checkpoint_key_name(fp, name);
	checkpoint_key_make(k, name, pub);
	rc = 0;
out:
	explicit_bzero(host, sizeof(host));
	explicit_bzero(seed, sizeof(seed));
	free(path);
	return rc;
}

static int ctl_tree_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char *ctl_tree_kept_checkpoints(int dir, unsigned long long upto, size_t *len)
{
	char **names = NULL, *out = NULL, *text;
	size_t n = 0, cap = 0, i, total = 0, tl;
	struct dirent *de;
	int fd;
	DIR *d;

	*len = 0;
	fd = openat(dir, "checkpoints", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		/* Named by size: past upto, newer than the caller's rows. */
		if (upto && strtoull(de->d_name, NULL, 10) > upto)
			continue;
		if (n == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 16) *
							  sizeof(*names));

			if (!p)
				goto out;
			names = p;
		}
		if (!(names[n] = strdup(de->d_name)))
			goto out;
		n++;
	}
	/* Names are zero-padded sizes: name order is size order. */
	if (n)
		qsort(names, n, sizeof(*names), ctl_tree_name_cmp);
	out = malloc(n * CHECKPOINT_MAX + 1);
	if (!out)
		goto out;
	for (i = 0; i < n; i++) {
		text = ctl_tree_slurp_at(dirfd(d), names[i], CHECKPOINT_MAX,
					 &tl);
		if (!text)
			continue;
		memcpy(out + total, text, tl);
		total += tl;
		free(text);
	}
	out[total] = '\0';
	*len = total;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	if (out && !total) {
		free(out);
		out = NULL;
	}
	return out;
}
