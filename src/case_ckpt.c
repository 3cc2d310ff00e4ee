/* SPDX-License-Identifier: MIT */
/*
 * case_ckpt.c - signed checkpoints of a case (ledgerfs-ledger(5) SIGNED
 * CHECKPOINTS): the latest in the backing folder as `checkpoint`, each one
 * made at a turn or at case_closed also kept as checkpoints/<size>, so a
 * later truncation or a fork of the ledger shows against them.
 */
#include "case_ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "case_int.h"
#include "merkle.h"

/* Checkpoints kept per case that the load-time check reads. */
#define CASE_CKPT_MAX_FILES 100000

static struct {
	bool set;
	unsigned char seed[SIGN_SEED_BYTES];
	struct note_key key;
} signer;

void case_ckpt_set_signer(const unsigned char seed[SIGN_SEED_BYTES],
			  const char *host_fp)
{
	unsigned char pub[SIGN_PUB_BYTES];
	char name[CHECKPOINT_NAME_MAX];

	if (sign_public(seed, pub) < 0)
		return;
	checkpoint_key_name(host_fp, name);
	checkpoint_key_make(&signer.key, name, pub);
	memcpy(signer.seed, seed, SIGN_SEED_BYTES);
	signer.set = true;
}

const struct note_key *case_ckpt_key(void)
{
	return signer.set ? &signer.key : NULL;
}

static long long case_ckpt_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * At load: when the latest checkpoint was signed, on the monotonic clock
 * (from its file's age), so that the 10 s rule counts from it across a
 * restart (ledgerfs-ledger(5) SIGNED CHECKPOINTS).  0 (the next append
 * starts the clock) when there is no such file.
 */
static long long case_ckpt_age_ms(int dir)
{
	struct timespec now;
	struct stat st;
	long long age, t;

	if (fstatat(dir, CASE_CKPT_LATEST, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    clock_gettime(CLOCK_REALTIME, &now) < 0)
		return 0;
	age = ((long long)now.tv_sec - (long long)st.st_mtim.tv_sec) * 1000 +
	      ((long long)now.tv_nsec - (long long)st.st_mtim.tv_nsec) /
		      1000000;
	if (age < 0)
		age = 0;
	t = case_ckpt_now_ms() - age;
	return t > 0 ? t : 1;
}

/* Write text to dirfd/name through name.tmp and a rename.  0 or -1. */
static int case_ckpt_put(int dirfd, const char *name, const char *text,
			 bool flush)
{
	char tmp[64];
	size_t len = strlen(text), done = 0;
	int fd, rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	fd = openat(dirfd, tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto out;
		done += (size_t)n;
	}
	if (flush && fdatasync(fd) < 0)
		goto out;
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		goto out;
	if (flush && fsync(dirfd) < 0)
		goto out;
	rc = 0;
out:
	close(fd);
	if (rc < 0)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

static void case_ckpt_origin(const struct lf_case *c, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", signer.key.name, c->name);
}

/* Sign the tree as it stands and store it; kept: also in checkpoints/. */
static void case_ckpt_write(struct lf_case *c, bool kept)
{
	struct checkpoint cp;
	const struct merkle_range *t = ledger_tree(c->ledger);
	char path[200], name[64], *text = NULL;
	int dirfd = -1, sub = -1;

	/* A checkpoint vouches only for durable rows (ledger.h, deferred). */
	ledger_settle(c->ledger);
	if (ledger_broken(c->ledger))
		return;
	case_ckpt_origin(c, cp.origin, sizeof(cp.origin));
	cp.size = t->n;
	merkle_root(t, cp.root);
	text = checkpoint_sign(&cp, &signer.key, signer.seed);
	snprintf(path, sizeof(path), "cases/%s", c->name);
	dirfd = openat(c->backing_fd, path,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!text || dirfd < 0)
		goto fail;
	if (case_ckpt_put(dirfd, CASE_CKPT_LATEST, text, kept) < 0)
		goto fail;
	if (kept) {
		if (mkdirat(dirfd, CASE_CKPT_DIR, 0700) < 0 && errno != EEXIST)
			goto fail;
		sub = openat(dirfd, CASE_CKPT_DIR,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		snprintf(name, sizeof(name), "%012llu",
			 (unsigned long long)cp.size);
		if (sub < 0 || case_ckpt_put(sub, name, text, true) < 0 ||
		    fsync(dirfd) < 0)
			goto fail;
	}
	c->ckpt_rows = cp.size;
	c->ckpt_ms = case_ckpt_now_ms();
	goto out;
fail:
	fprintf(stderr,
		"ledgerfs: case %s: checkpoint at %llu rows not written: %s\n",
		c->name, (unsigned long long)t->n,
		text ? strerror(errno) : "signing failed");
out:
	if (sub >= 0)
		close(sub);
	if (dirfd >= 0)
		close(dirfd);
	free(text);
}

void case_ckpt_after_append(struct lf_case *c, const json_t *row)
{
	const char *phase = json_string_value(json_object_get(row, "phase"));
	uint64_t rows;

	if (!signer.set || c->load_failed || !c->ledger)
		return;
	if (phase &&
	    (!strcmp(phase, "turn") || !strcmp(phase, "case_closed"))) {
		case_ckpt_write(c, true);
		return;
	}
	rows = ledger_tree(c->ledger)->n;
	if (c->ckpt_ms == 0)
		c->ckpt_ms = case_ckpt_now_ms();
	if (rows - c->ckpt_rows >= CASE_CKPT_EVERY_ROWS ||
	    case_ckpt_now_ms() - c->ckpt_ms >= CASE_CKPT_EVERY_MS)
		case_ckpt_write(c, false);
}

/* Read dirfd/name (at most CHECKPOINT_MAX bytes + 1).  malloc'd or NULL. */
static char *case_ckpt_read(int dirfd, const char *name, size_t *len)
{
	char *buf = malloc(CHECKPOINT_MAX + 1);
	size_t got = 0;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = openat(dirfd, name,
		    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while (got < CHECKPOINT_MAX + 1) {
		n = read(fd, buf + got, CHECKPOINT_MAX + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got < CHECKPOINT_MAX ? got : CHECKPOINT_MAX] = '\0';
	*len = got;
	return buf;
}

struct ckpt_seen {
	char name[64];
	struct checkpoint cp;
};

static int case_ckpt_by_size(const void *a, const void *b)
{
	const struct ckpt_seen *x = a, *y = b;

	return x->cp.size < y->cp.size ? -1 : x->cp.size > y->cp.size;
}

/* Parse and check the signature of one stored checkpoint.  NULL or why. */
static char *case_ckpt_take(int dirfd, const char *file, const char *shown,
			    const char *origin, struct ckpt_seen *out)
{
	struct lf_why why = {{0}};
	size_t len = 0;
	char *text = case_ckpt_read(dirfd, file, &len), *msg = NULL;

	snprintf(out->name, sizeof(out->name), "%s", shown);
	if (!text) {
		if (asprintf(&msg, "checkpoint %s: cannot read: %s", shown,
			     strerror(errno)) < 0)
			msg = NULL;
		return msg ? msg : strdup("checkpoint unreadable");
	}
	if (checkpoint_open(text, len, &signer.key, &out->cp, &why) != LF_OK)
		msg = strdup(why.msg);
	else if (strcmp(out->cp.origin, origin) != 0)
		msg = strdup("checkpoint: origin is not this case's");
	free(text);
	if (msg) {
		char *m = NULL;

		if (asprintf(&m, "%s: %s", shown, msg) < 0)
			m = NULL;
		free(msg);
		return m ? m : strdup("checkpoint does not verify");
	}
	return NULL;
}

char *case_ckpt_load(struct lf_case *c, int dir)
{
	struct ckpt_seen *seen = NULL;
	struct merkle_range tree;
	struct lf_why why = {{0}};
	uint64_t *sizes = NULL, rows = 0;
	merkle_hash *roots = NULL;
	char origin[CHECKPOINT_ORIGIN_MAX], *msg = NULL, shown[80];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	DIR *d = NULL;
	int sub;

	if (signer.set && !c->load_failed) {
		case_ckpt_origin(c, origin, sizeof(origin));
		cap = 16;
		seen = malloc(cap * sizeof(*seen));
		if (!seen)
			return strdup("out of memory");
		if (faccessat(dir, CASE_CKPT_LATEST, F_OK,
			      AT_SYMLINK_NOFOLLOW) == 0) {
			msg = case_ckpt_take(dir, CASE_CKPT_LATEST,
					     CASE_CKPT_LATEST, origin,
					     &seen[0]);
			n = msg ? 0 : 1;
		}
		sub = openat(dir, CASE_CKPT_DIR,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		d = sub >= 0 ? fdopendir(sub) : NULL;
		if (sub >= 0 && !d)
			close(sub);
		while (!msg && d && (de = readdir(d))) {
			if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
				continue;
			if (n == cap) {
				struct ckpt_seen *p;

				if (cap >= CASE_CKPT_MAX_FILES) {
					msg = strdup("too many checkpoints");
					break;
				}
				p = realloc(seen, 2 * cap * sizeof(*seen));
				if (!p) {
					msg = strdup("out of memory");
					break;
				}
				seen = p;
				cap *= 2;
			}
			snprintf(shown, sizeof(shown), CASE_CKPT_DIR "/%.60s",
				 de->d_name);
			msg = case_ckpt_take(dirfd(d), de->d_name, shown,
					     origin, &seen[n]);
			if (!msg)
				n++;
		}
		if (d)
			closedir(d);
		if (msg)
			goto out;
	}
	if (n)
		qsort(seen, n, sizeof(*seen), case_ckpt_by_size);
	sizes = malloc((n ? n : 1) * sizeof(*sizes));
	roots = malloc((n ? n : 1) * sizeof(*roots));
	if (!sizes || !roots) {
		msg = strdup("out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		sizes[i] = seen[i].cp.size;
	if (merkle_scan_fd(ledger_fd(c->ledger), ledger_size(c->ledger), &tree,
			   sizes, n, roots, NULL, &rows, &why) != LF_OK) {
		msg = strdup(why.msg);
		goto out;
	}
	ledger_set_tree(c->ledger, &tree);
	for (i = 0; i < n && !msg; i++) {
		if (seen[i].cp.size > rows) {
			if (asprintf(
				    &msg,
				    "%s: signed for %llu rows, the ledger has %llu (truncated)",
				    seen[i].name,
				    (unsigned long long)seen[i].cp.size,
				    (unsigned long long)rows) < 0)
				msg = strdup("truncated ledger");
		} else if (memcmp(roots[i], seen[i].cp.root, MERKLE_HASH)) {
			if (asprintf(
				    &msg,
				    "%s: the first %llu rows do not have the signed tree root",
				    seen[i].name,
				    (unsigned long long)seen[i].cp.size) < 0)
				msg = strdup("tree root differs");
		}
	}
	if (n) {
		c->ckpt_rows = seen[n - 1].cp.size;
		c->ckpt_ms = case_ckpt_age_ms(dir);
	}
out:
	free(seen);
	free(sizes);
	free(roots);
	return msg;
}

char *case_checkpoint_text(struct lf_case *c)
{
	char path[200], *text;
	size_t len = 0;
	int dirfd;

	snprintf(path, sizeof(path), "cases/%s", c->name);
	dirfd = openat(c->backing_fd, path,
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return strdup("");
	text = case_ckpt_read(dirfd, CASE_CKPT_LATEST, &len);
	close(dirfd);
	return text ? text : strdup("");
}
