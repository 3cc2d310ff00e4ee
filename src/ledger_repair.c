/* SPDX-License-Identifier: MIT */
/*
 * ledger_repair.c - a torn tail cut at open, journaled so that a kill at
 * any point is finished by the next open with the same `recovered` row
 * (ledgerfs-ledger(5) RECOVERY).  The appending side is ledger.c.
 */
#include "ledger.h"
#include "ledger_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ledger_repair_path(const char *path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s" LEDGER_REPAIR_SUFFIX, path);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* 1 when a well-formed journal was read, 0 when none (or a torn one). */
int ledger_repair_read(int dirfd, const char *jpath, struct ledger_repair *j)
{
	char buf[512];
	json_t *v;
	const char *hex = NULL;
	json_int_t good = -1, cut = -1;
	ssize_t n;
	int fd, ok = 0;

	fd = openat(dirfd, jpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = json_loads(buf, 0, NULL);
	if (v &&
	    json_unpack(v, "{s:I, s:I, s:s}", "good_bytes", &good, "cut_bytes",
			&cut, "cut_sha256", &hex) == 0 &&
	    good >= 0 && cut > 0 && strlen(hex) == CHAIN_HEX_LEN) {
		j->good_bytes = good;
		j->cut_bytes = cut;
		memcpy(j->cut_sha256, hex, CHAIN_HEX_LEN + 1);
		ok = 1;
	}
	json_decref(v);
	return ok;
}

static int ledger_repair_write(int dirfd, const char *jpath,
			       const struct ledger_repair *j)
{
	char buf[256];
	int fd, n, rc = -1;

	n = snprintf(buf, sizeof(buf),
		     "{\"cut_bytes\":%lld,\"cut_sha256\":\"%s\","
		     "\"good_bytes\":%lld}\n",
		     j->cut_bytes, j->cut_sha256, j->good_bytes);
	fd = openat(dirfd, jpath,
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		return -1;
	if (ledger_write_all(fd, buf, (size_t)n) == 0 && fdatasync(fd) == 0 &&
	    ledger_sync_parent(dirfd, jpath) == 0)
		rc = 0;
	close(fd);
	return rc;
}

/* The journal is done with: gone, and its going durable. */
static int ledger_repair_remove(int dirfd, const char *jpath)
{
	if (unlinkat(dirfd, jpath, 0) < 0 && errno != ENOENT)
		return -1;
	return ledger_sync_parent(dirfd, jpath);
}

/* Append the journaled `recovered` row; the reader sees it too. */
static enum lf_err ledger_repair_note(struct ledger *l,
				      const struct ledger_repair *j,
				      ledger_row_cb cb, void *ctx,
				      struct lf_why *why)
{
	json_t *row;
	long long off;
	size_t len;
	enum lf_err rc;
	int cbrc;

	row = json_pack("{s:s, s:I, s:s, s:s}", "phase", "recovered",
			"cut_bytes", (json_int_t)j->cut_bytes, "cut_sha256",
			j->cut_sha256, "reason", "torn tail cut");
	if (!row)
		return lf_fail(why, LF_NOMEM, "out of memory");
	rc = ledger_append(l, row, &off, &len, why);
	if (rc == LF_OK && cb) {
		/* The reader sees the ledger as it now stands, row for row. */
		cbrc = cb(ctx, row, off, len);
		if (cbrc)
			rc = lf_fail(why, (enum lf_err)cbrc,
				     "row %llu: refused by the reader (%s)",
				     l->head.rows,
				     lf_err_name((enum lf_err)cbrc));
	}
	json_decref(row);
	return rc;
}

/* Hash the torn tail: what the note will say was cut. */
static enum lf_err ledger_hash_tail(struct ledger *l,
				    const struct ledger_report *rep,
				    struct ledger_repair *j, struct lf_why *why)
{
	size_t cut = (size_t)(rep->file_bytes - rep->good_bytes);
	char *buf;

	buf = malloc(cut ? cut : 1);
	if (!buf)
		return lf_fail(why, LF_NOMEM, "out of memory");
	if (ledger_get(l->fd, buf, cut, rep->good_bytes) < 0) {
		free(buf);
		return lf_fail(why, LF_IO, "cannot read torn tail: %s",
			       errno == EIO ? "file shrank or unreadable"
					    : strerror(errno));
	}
	chain_sha256_hex(buf, cut, j->cut_sha256);
	free(buf);
	j->good_bytes = rep->good_bytes;
	j->cut_bytes = (long long)cut;
	return LF_OK;
}

/*
 * Cut the torn tail and record it.  When a journal already names this
 * cut point, the repair was under way when the daemon died: the torn
 * bytes are the tail it had hashed (or the start of its own note), and
 * the journal's note is the one written.
 */
enum lf_err ledger_recover(struct ledger *l, int dirfd, const char *jpath,
			   const struct ledger_report *rep,
			   const struct ledger_repair *journal,
			   ledger_row_cb cb, void *ctx, struct lf_why *why)
{
	struct ledger_repair j;
	enum lf_err rc;

	if (journal && journal->good_bytes == rep->good_bytes) {
		j = *journal;
	} else {
		rc = ledger_hash_tail(l, rep, &j, why);
		if (rc != LF_OK)
			return rc;
		if (ledger_repair_write(dirfd, jpath, &j) < 0)
			return lf_fail(
				why, LF_IO,
				"cannot journal the torn-tail repair: %s",
				strerror(errno));
	}
	if (ftruncate(l->fd, (off_t)rep->good_bytes) < 0 ||
	    fdatasync(l->fd) < 0)
		return lf_fail(why, LF_IO, "cannot cut torn tail: %s",
			       strerror(errno));
	rc = ledger_repair_note(l, &j, cb, ctx, why);
	if (rc == LF_OK && ledger_repair_remove(dirfd, jpath) < 0)
		rc = lf_fail(why, LF_IO, "cannot remove the repair journal: %s",
			     strerror(errno));
	return rc;
}

/*
 * A whole ledger with a journal left over: the daemon died after the cut.
 * Ending exactly at the cut point, the note is missing: append it.  With
 * the note already there (or the journal stale), only the journal goes.
 */
enum lf_err ledger_repair_finish(struct ledger *l, int dirfd, const char *jpath,
				 const struct ledger_repair *j,
				 ledger_row_cb cb, void *ctx,
				 struct lf_why *why)
{
	enum lf_err rc = LF_OK;

	if (l->size == j->good_bytes)
		rc = ledger_repair_note(l, j, cb, ctx, why);
	if (rc == LF_OK && ledger_repair_remove(dirfd, jpath) < 0)
		rc = lf_fail(why, LF_IO, "cannot remove the repair journal: %s",
			     strerror(errno));
	return rc;
}
