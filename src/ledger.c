/* SPDX-License-Identifier: MIT */
/*
 * ledger.c - one case's durable ledger: create or open (verify, cut a torn
 * tail), append rows chained by SHA-256 and MACed with the key of their
 * epoch (or the case key, without seals), each made durable by fdatasync
 * before the append returns (ledgerfs-ledger(5) DESCRIPTION, SEALS).
 */
#include "ledger.h"
#include "canon.h"
#include "commit.h"
#include "defer.h"
#include "futex.h"
#include "journal.h"
#include "ledger_int.h"
#include "ledger_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ledgerfs-ledger(5) PADDING: bytes of zeros written ahead at a time. */
static long long ledger_pad_bytes;

void ledger_set_padding(long long bytes)
{
	ledger_pad_bytes = bytes > 0 ? bytes : 0;
}

char *ledger_canonical(const json_t *row)
{
	return canon_dump(row, NULL);
}

void ledger_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	/* tv_nsec < 1e9, so the microseconds are always six digits. */
	snprintf(out + n, 32 - n, ".%06uZ",
		 (unsigned)((unsigned long)ts.tv_nsec / 1000u % 1000000u));
}

/* All n bytes written (put) or read at off, or at the file position
 * when off < 0: 0, or -1 with errno (EIO where the file took or gave no
 * more). */
static int ledger_all(int fd, char *buf, size_t n, long long off, bool put)
{
	ssize_t r;

	while (n) {
		if (put)
			r = off < 0 ? write(fd, buf, n)
				    : pwrite(fd, buf, n, (off_t)off);
		else
			r = off < 0 ? read(fd, buf, n)
				    : pread(fd, buf, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		buf += r;
		if (off >= 0)
			off += r;
		n -= (size_t)r;
	}
	return 0;
}

int ledger_put(int fd, const void *data, size_t n, long long off)
{
	return ledger_all(fd, (char *)data, n, off, true);
}

int ledger_get(int fd, void *data, size_t n, long long off)
{
	return ledger_all(fd, data, n, off, false);
}

int ledger_write_all(int fd, const char *buf, size_t n)
{
	return ledger_put(fd, buf, n, -1);
}

/*
 * Room for `need` more bytes of rows: zeros written from the file's end,
 * at least ledger_pad_bytes of them, and flushed before any row lands in
 * them (ledgerfs-ledger(5) PADDING).  0 or -1 (errno set).
 */
static int ledger_pad(struct ledger *l, size_t need)
{
	static const char zeros[65536];
	long long want = l->size + (long long)need, to;
	size_t k;

	if (want <= l->end || !ledger_pad_bytes)
		return 0;
	to = want + ledger_pad_bytes;
	while (l->end < to) {
		k = to - l->end < (long long)sizeof(zeros)
			    ? (size_t)(to - l->end)
			    : sizeof(zeros);
		if (ledger_put(l->fd, zeros, k, l->end) < 0)
			return -1;
		l->end += (long long)k;
	}
	return fdatasync(l->fd);
}

/* Write a whole line where the rows end. */
static int ledger_write_line(struct ledger *l, const char *line, size_t n)
{
	if (!l->padded)
		return ledger_write_all(l->fd, line, n);
	if (ledger_pad(l, n) < 0 || ledger_put(l->fd, line, n, l->size) < 0)
		return -1;
	if (l->size + (long long)n > l->end)
		l->end = l->size + (long long)n;
	return 0;
}

/*
 * Make the line just written (n bytes with its newline, where the rows
 * ended) durable: 0 or an errno value.  overwrite: it landed in padding
 * already on disk (ledgerfs-ledger(5) PADDING).  A group with a journal
 * writes the line there instead (ledgerfs(8) --sync=journal).
 */
/*
 * A deferred row's flush is over: settle its ledger, then tell its write.
 * In that order: the target's next line (a result after this call's
 * reply) must find the case settled, not wait for this thread.
 */
static void ledger_row_told(void *arg, int rc)
{
	struct ledger_told *t = arg;
	struct ledger *l = t->l;

	futex_count_down(&l->unsettled);
	defer_release(t->d, rc);
	free(t);
}

/*
 * Join the pending batch without waiting, for the deferral open on this
 * thread (defer.h): 0, or -1 when it cannot (no group, a row that ends
 * its epoch, which ratchets only once the row is durable, or no memory),
 * and the row is flushed as before.
 */
static int ledger_defer_row(struct ledger *l, const struct journal_row *row,
			    bool overwrite, const char *phase)
{
	struct lf_defer *d = defer_current();
	struct ledger_told *t;

	if (!d || !l->commit ||
	    (l->seal && ratchet_row_ends_epoch(l->seal, phase)))
		return -1;
	t = malloc(sizeof(*t));
	if (!t)
		return -1;
	t->d = d;
	t->l = l;
	defer_hold(d);
	atomic_fetch_add(&l->unsettled, 1);
	if (commit_group_enqueue(l->commit, l->fd, overwrite, row, &l->failed,
				 ledger_row_told, t)) {
		atomic_fetch_sub(&l->unsettled, 1);
		defer_release(d, 0);
		free(t);
		return -1;
	}
	defer_note_group(l->commit);
	return 0;
}

static int ledger_flush(struct ledger *l, const char *line, size_t n,
			bool overwrite, const char *phase)
{
	struct journal_row row = {
		.case_id = l->case_id, .offset = l->size, .line = line, .n = n};

	if (ledger_defer_row(l, &row, overwrite, phase) == 0)
		return 0;
	if (l->commit)
		return commit_group_sync_row(l->commit, l->fd, overwrite, &row);
	return fdatasync(l->fd) < 0 ? errno : 0;
}

bool ledger_unsettled(struct ledger *l)
{
	return atomic_load(&l->unsettled) != 0;
}

void ledger_settle(struct ledger *l)
{
	if (atomic_load(&l->unsettled))
		commit_group_wait_told(l->commit, &l->unsettled);
}

int ledger_flush_error(const struct ledger *l)
{
	return atomic_load(&((struct ledger *)l)->failed);
}

enum lf_err ledger_append(struct ledger *l, json_t *row, long long *offset,
			  size_t *len, struct lf_why *why)
{
	char now[32], mac[CHAIN_HEX_LEN + 1], *body = NULL, *line = NULL;
	enum lf_err rc = LF_IO;
	size_t n, body_len, slot;
	int set = 0, err;
	bool overwrite;

	if (ledger_broken(l))
		return lf_fail(why, LF_IO,
			       "ledger failed earlier; no further appends");
	if (!json_is_object(row))
		return lf_fail(why, LF_EINVAL_JSON,
			       "ledger row is not an object");
	ledger_now(now);
	json_object_del(row, "mac");
	set |= json_object_set_new(row, "case_id", json_string(l->case_id));
	set |= json_object_set_new(row, "row",
				   json_integer((json_int_t)l->head.rows + 1));
	set |= json_object_set_new(row, "time", json_string(now));
	set |= json_object_set_new(row, "prev", json_string(l->head.head));
	if (set)
		return lf_fail(why, LF_NOMEM, "out of memory building a row");
	if (!json_is_string(json_object_get(row, "phase")))
		return lf_fail(why, LF_EINVAL_JSON, "ledger row has no phase");
	if (l->seal && ratchet_row_fields(l->seal, row, l->head.rows == 0))
		return lf_fail(why, LF_NOMEM, "out of memory building a row");
	body = canon_dump_slot(row, "mac", &body_len, &slot);
	if (!body) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	chain_hmac_hex(l->seal ? ratchet_key(l->seal) : l->case_key, body,
		       body_len, mac);
	if (json_object_set_new(row, "mac", json_string(mac))) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	/* The line is the MAC's text with `mac` in its place. */
	line = canon_fill_slot(body, body_len, slot, "mac", mac, &n);
	if (!line)
		line = canon_dump(row, &n);
	if (!line) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	if (n > LEDGER_MAX_LINE) {
		rc = lf_fail(why, LF_TOO_BIG,
			     "ledger row of %zu bytes is over 64 MiB", n);
		goto out;
	}
	/* The newline goes in the same write: a line is whole or torn. */
	line[n] = '\n';
	/* Into padding already flushed, or made and flushed by the write. */
	overwrite = l->padded &&
		    (ledger_pad_bytes || l->size + (long long)n + 1 <= l->end);
	if (ledger_write_line(l, line, n + 1) < 0) {
		l->broken = true;
		lf_fail(why, LF_IO, "ledger write failed: %s", strerror(errno));
		goto out;
	}
	err = ledger_flush(l, line, n + 1, overwrite,
			   json_string_value(json_object_get(row, "phase")));
	if (err) {
		/* A failed flush may have dropped the data: never retry. */
		l->broken = true;
		lf_fail(why, LF_IO, "ledger flush failed: %s", strerror(err));
		goto out;
	}
	if (offset)
		*offset = l->size;
	if (len)
		*len = n;
	l->size += (long long)n + 1;
	l->head.rows++;
	chain_sha256_hex(line, n, l->head.head);
	merkle_append(&l->tree, line, n);
	rc = LF_OK;
	/* The epoch's last row is durable: ratchet before acknowledging. */
	if (l->seal) {
		rc = ratchet_row_written(
			l->seal,
			json_string_value(json_object_get(row, "phase")), why);
		if (rc != LF_OK)
			l->broken = true;
	}
out:
	free(body);
	free(line);
	return rc;
}

void ledger_set_commit(struct ledger *l, struct commit_group *g)
{
	l->commit = g;
}

void ledger_get_head(const struct ledger *l, struct ledger_head *out)
{
	*out = l->head;
}

/* The len bytes at offset (a row this ledger wrote), in a new buffer;
 * NULL on a short read or out of memory. */
static char *ledger_pread_line(const struct ledger *l, long long offset,
			       size_t len)
{
	char *buf;

	if (offset < 0 || len > LEDGER_MAX_LINE)
		return NULL;
	buf = malloc(len ? len : 1);
	if (buf && ledger_get(l->fd, buf, len, offset) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

json_t *ledger_read_row(const struct ledger *l, long long offset, size_t len)
{
	char *buf = ledger_pread_line(l, offset, len);
	json_t *row;

	if (!buf)
		return NULL;
	row = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			 NULL);
	free(buf);
	return row;
}

json_t *ledger_read_members(const struct ledger *l, long long offset,
			    size_t len, const char *const *members)
{
	char *buf = ledger_pread_line(l, offset, len);
	json_t *row;

	if (!buf)
		return NULL;
	row = ledger_scan_members(buf, len, members);
	free(buf);
	return row;
}

bool ledger_broken(const struct ledger *l)
{
	return l->broken || ledger_flush_error(l);
}

long long ledger_size(const struct ledger *l)
{
	return l->size;
}

const struct merkle_range *ledger_tree(const struct ledger *l)
{
	return &l->tree;
}

void ledger_set_tree(struct ledger *l, const struct merkle_range *r)
{
	l->tree = *r;
}

int ledger_fd(const struct ledger *l)
{
	return l->fd;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->case_id);
	/* The case key is derived from the host key: do not leave it about. */
	explicit_bzero(l->case_key, sizeof(l->case_key));
	ratchet_free(l->seal);
	free(l);
}

/* fsync the folder that holds dirfd/path, so a new name is durable. */
int ledger_sync_parent(int dirfd, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int dfd, rc;

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		if ((size_t)(slash - path) >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	dfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	rc = fsync(dfd);
	close(dfd);
	return rc;
}

/*
 * Rows go at the end of the rows, not the file's, once the file is
 * padded or is to be (ledgerfs-ledger(5) PADDING); a ledger never padded
 * keeps O_APPEND, so bytes that something else appended are never
 * written over.  0 or -1 (errno set).
 */
static int ledger_use_padding(struct ledger *l)
{
	struct stat st;
	int fl;

	if (fstat(l->fd, &st) < 0)
		return -1;
	if (!ledger_pad_bytes && st.st_size <= l->size)
		return 0;
	fl = fcntl(l->fd, F_GETFL);
	if (fl < 0 || fcntl(l->fd, F_SETFL, fl & ~O_APPEND) < 0)
		return -1;
	l->padded = true;
	l->end = st.st_size;
	return 0;
}

struct ledger *ledger_open_failed(int dirfd, const char *path,
				  const char *case_id,
				  const unsigned char host_key[CHAIN_KEY_BYTES])
{
	struct ledger_report rep;
	struct lf_why ignored;
	struct ledger *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->case_id = strdup(case_id);
	if (!l->case_id) {
		free(l);
		return NULL;
	}
	l->broken = true;
	memset(l->head.head, '0', CHAIN_HEX_LEN);
	l->fd = dirfd < 0 ? -1
			  : openat(dirfd, path,
				   O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (l->fd >= 0) {
		struct ratchet *seal = NULL;
		struct ratchet_keys keys;

		chain_init();
		/*
		 * A sealed ledger's current epoch is checked with its seal
		 * key file when that loads, so a row whose MAC does not
		 * match is not served as verified (ledgerfs(8) FAILURE);
		 * without it, the chain and canonical form alone.
		 */
		if (ratchet_beside_load(dirfd, path, host_key, &seal, &keys,
					&ignored) != LF_OK)
			seal = NULL;
		if (ledger_verify_sealed(l->fd, case_id, host_key,
					 seal ? &keys : NULL, NULL, NULL, &rep,
					 &ignored) != LF_NOMEM) {
			l->head = rep.head;
			l->size = rep.good_bytes;
		}
		explicit_bzero(&keys, sizeof(keys));
		ratchet_free(seal);
	}
	return l;
}

enum lf_err ledger_seal_start(struct ledger *l, int dirfd, const char *path,
			      const unsigned char host_key[CHAIN_KEY_BYTES],
			      unsigned long long epoch_rows, struct lf_why *why)
{
	if (l->seal || l->head.rows)
		return lf_fail(why, LF_EXISTS, "the ledger is sealed already");
	return ratchet_beside_create(dirfd, path, host_key, epoch_rows,
				     &l->seal, why);
}

void ledger_seal_park(struct ledger *l, int base_fd, const char *path)
{
	ratchet_beside_park(l->seal, base_fd, path);
}

enum lf_err ledger_seal_handout(struct ledger *l,
				unsigned char k0[CHAIN_KEY_BYTES],
				struct lf_why *why)
{
	if (!l->seal)
		return lf_fail(why, LF_NOT_FOUND, "the ledger has no seal");
	return ratchet_handout(l->seal, k0, why);
}

enum lf_err ledger_open(int dirfd, const char *path, const char *case_id,
			const unsigned char host_key[CHAIN_KEY_BYTES],
			bool create, const struct ledger_reader *rd,
			struct ledger **out, struct lf_why *why)
{
	ledger_row_cb cb = rd ? rd->cb : NULL;
	void *ctx = rd ? rd->ctx : NULL;
	struct ledger_report rep;
	struct ledger_repair journal;
	struct ratchet_keys keys;
	struct ledger *l;
	struct stat st;
	enum lf_err rc;
	char jpath[PATH_MAX];
	int journaled;
	int flags = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW;

	*out = NULL;
	if (!case_id || !host_key)
		return lf_fail(why, LF_EINVAL_JSON,
			       "ledger needs a case id and a host key");
	chain_init();
	l = calloc(1, sizeof(*l));
	if (!l)
		return lf_fail(why, LF_NOMEM, "out of memory");
	l->fd = -1;
	l->case_id = strdup(case_id);
	if (!l->case_id) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	chain_case_key(host_key, case_id, l->case_key);
	memset(l->head.head, '0', CHAIN_HEX_LEN);
	if (create) {
		l->fd = openat(dirfd, path, flags | O_CREAT | O_EXCL, 0600);
		if (l->fd < 0) {
			rc = lf_fail(why, errno == EEXIST ? LF_EXISTS : LF_IO,
				     "cannot create ledger %s: %s", path,
				     strerror(errno));
			goto fail;
		}
		if (ledger_sync_parent(dirfd, path) < 0) {
			rc = lf_fail(why, LF_IO,
				     "cannot sync the folder of ledger %s: %s",
				     path, strerror(errno));
			goto fail;
		}
		if (ledger_use_padding(l) < 0) {
			rc = lf_fail(why, LF_IO, "cannot open ledger %s: %s",
				     path, strerror(errno));
			goto fail;
		}
		*out = l;
		return LF_OK;
	}
	l->fd = openat(dirfd, path, flags);
	if (l->fd < 0) {
		rc = lf_fail(why, errno == ENOENT ? LF_NOT_FOUND : LF_IO,
			     "cannot open ledger %s: %s", path,
			     strerror(errno));
		goto fail;
	}
	if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = lf_fail(why, LF_IO, "ledger %s is not a regular file",
			     path);
		goto fail;
	}
	if (ledger_repair_path(path, jpath, sizeof(jpath)) < 0) {
		rc = lf_fail(why, LF_IO, "ledger path %s is too long", path);
		goto fail;
	}
	journaled = ledger_repair_read(dirfd, jpath, &journal);
	rc = ratchet_beside_load(dirfd, path, host_key, &l->seal, &keys, why);
	if (rc != LF_OK)
		goto fail;
	rc = ledger_verify_read(l->fd, case_id, host_key,
				l->seal ? &keys : NULL, rd, &rep, why);
	explicit_bzero(&keys, sizeof(keys));
	l->head = rep.head;
	l->size = rep.good_bytes;
	/* Where the epochs stand: the ratchet resumes there (SEALS). */
	if ((rc == LF_OK || (rc == LF_VERIFY && rep.torn)) &&
	    ratchet_load_check(l->seal, rep.sealed, rep.head.rows, &rep.walk,
			       why) != LF_OK) {
		rc = LF_VERIFY;
		goto fail;
	}
	if (rc == LF_VERIFY && rep.torn && rd && rd->ended && *rd->ended) {
		/* ledgerfs(8) RECOVERY: any other fault is left as it is. */
		rc = lf_fail(why, LF_VERIFY,
			     "bytes after row %llu, which ends the ledger "
			     "(no append of the daemon's follows it)",
			     rep.head.rows);
		goto fail;
	}
	if (rc == LF_VERIFY && rep.torn)
		rc = ledger_recover(l, dirfd, jpath, &rep,
				    journaled ? &journal : NULL, cb, ctx, why);
	else if (rc == LF_OK && journaled)
		rc = ledger_repair_finish(l, dirfd, jpath, &journal, cb, ctx,
					  why);
	if (rc != LF_OK)
		goto fail;
	if (ledger_use_padding(l) < 0) {
		rc = lf_fail(why, LF_IO, "cannot open ledger %s: %s", path,
			     strerror(errno));
		goto fail;
	}
	*out = l;
	return LF_OK;
fail:
	ledger_close(l);
	return rc;
}
