/* SPDX-License-Identifier: MIT */
/*
 * journal.c - the commit journal (see journal.h; ledgerfs(8) --sync=journal
 * and RESTART).
 *
 * The file is written ahead in zeros and flushed once, so that every later
 * write overwrites blocks already on disk and fdatasync has no size or
 * allocation to commit.  It holds entries back to back from its start:
 *
 *   "LFJ1", u32 entry bytes, u64 generation, u64 ledger offset,
 *   u16 name bytes, u16 0, u32 line bytes, the case name, the line with
 *   its newline, SHA-256 of everything before it   (little-endian)
 *
 * A generation begins with a marker (no name, no line) at offset 0 and
 * ends at the first entry that is torn, zeros, or of another generation:
 * entries left behind by an older one are never read as rows.
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <gcrypt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "ledger.h"
#include "ledger_scan.h"

#define JOURNAL_MAGIC "LFJ1"
#define JOURNAL_HEAD  32
#define JOURNAL_SUM   32
#define JOURNAL_NAME  128 /* a case name's bytes (ledgerfs(8) THE VIEW) */

struct journal {
	int fd;
	unsigned long long size, gen, pos;
	bool broken; /* a write or flush failed: its state is unknown */
	unsigned char *buf;
	size_t cap;
};

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static size_t journal_entry_size(size_t name, size_t line)
{
	return JOURNAL_HEAD + name + line + JOURNAL_SUM;
}

/* Encode one entry at p (journal_entry_size bytes). */
static void journal_encode(unsigned char *p, unsigned long long gen,
			   const struct journal_row *row)
{
	size_t name = row ? strlen(row->case_id) : 0, n = row ? row->n : 0;
	size_t body = JOURNAL_HEAD + name + n;

	memcpy(p, JOURNAL_MAGIC, 4);
	put_le(p + 4, journal_entry_size(name, n), 4);
	put_le(p + 8, gen, 8);
	put_le(p + 16, row ? (uint64_t)row->offset : 0, 8);
	put_le(p + 24, name, 2);
	put_le(p + 26, 0, 2);
	put_le(p + 28, n, 4);
	if (row) {
		memcpy(p + JOURNAL_HEAD, row->case_id, name);
		memcpy(p + JOURNAL_HEAD + name, row->line, n);
	}
	gcry_md_hash_buffer(GCRY_MD_SHA256, p + body, p, body);
}

/* --- recovery ------------------------------------------------------------ */

/* A decoded entry of the file (pointers into the reader's buffer). */
struct journal_entry {
	unsigned long long gen, offset;
	char name[JOURNAL_NAME + 1];
	const char *line;
	size_t n, size;
};

/*
 * Read the entry at off into *buf: 1 when it is whole (its sum matches),
 * 0 at the end of what the file holds (zeros, a torn write, an entry of
 * no shape).
 */
static int journal_read_entry(int fd, unsigned long long file_size,
			      unsigned long long off, unsigned char **buf,
			      size_t *cap, struct journal_entry *e)
{
	unsigned char head[JOURNAL_HEAD], sum[JOURNAL_SUM];
	size_t name, size;

	if (off + JOURNAL_HEAD > file_size ||
	    ledger_get(fd, head, sizeof(head), (off_t)off) < 0 ||
	    memcmp(head, JOURNAL_MAGIC, 4) != 0)
		return 0;
	size = (size_t)get_le(head + 4, 4);
	name = (size_t)get_le(head + 24, 2);
	e->n = (size_t)get_le(head + 28, 4);
	if (name > JOURNAL_NAME || e->n > LEDGER_MAX_LINE + 1 ||
	    size != journal_entry_size(name, e->n) || off + size > file_size)
		return 0;
	if (size > *cap) {
		unsigned char *nb = realloc(*buf, size);

		if (!nb)
			return -1;
		*buf = nb;
		*cap = size;
	}
	if (ledger_get(fd, *buf, size, (off_t)off) < 0)
		return 0;
	gcry_md_hash_buffer(GCRY_MD_SHA256, sum, *buf, size - JOURNAL_SUM);
	if (memcmp(sum, *buf + size - JOURNAL_SUM, JOURNAL_SUM) != 0)
		return 0;
	e->gen = get_le(head + 8, 8);
	e->offset = get_le(head + 16, 8);
	memcpy(e->name, *buf + JOURNAL_HEAD, name);
	e->name[name] = '\0';
	e->line = (const char *)*buf + JOURNAL_HEAD + name;
	e->size = size;
	return 1;
}

/*
 * Does the ledger hold, ending right before off, a line whose SHA-256 is
 * prev (64 hex digits)?  At offset 0 prev must be 64 zeros (row 1).
 */
static bool journal_follows(int fd, long long off, const char *prev)
{
	char hex[CHAIN_HEX_LEN + 1], *buf = NULL, *nl;
	size_t w = 4096;
	long long start;
	bool ok = false;

	if (off == 0) {
		memset(hex, '0', CHAIN_HEX_LEN);
		return memcmp(prev, hex, CHAIN_HEX_LEN) == 0;
	}
	for (;;) {
		char *nb;

		start = off - 1 - (long long)w > 0 ? off - 1 - (long long)w : 0;
		nb = realloc(buf, (size_t)(off - start));
		if (!nb)
			break;
		buf = nb;
		if (ledger_get(fd, buf, (size_t)(off - start), start) < 0 ||
		    buf[off - start - 1] != '\n')
			break;
		nl = memrchr(buf, '\n', (size_t)(off - start - 1));
		if (nl || start == 0) {
			char *s = nl ? nl + 1 : buf;

			chain_sha256_hex(
				s, (size_t)(buf + (off - start) - 1 - s), hex);
			ok = memcmp(hex, prev, CHAIN_HEX_LEN) == 0;
			break;
		}
		if (w > LEDGER_MAX_LINE)
			break;
		w *= 2;
	}
	free(buf);
	return ok;
}

/* A case folder's name: 1-128 of [A-Za-z0-9._:-], not . or .. */
static bool journal_case_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > JOURNAL_NAME || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789._:-") == n;
}

static void journal_skip(struct journal_report *rep, const char *name,
			 unsigned long long offset, const char *what)
{
	if (!rep->skipped++)
		snprintf(rep->skip_reason, sizeof(rep->skip_reason),
			 "case %s, offset %llu: %s", name, offset, what);
}

/* Write one entry's row back into its ledger, unless it is there. */
static enum lf_err journal_replay(int backing_fd, const struct journal_entry *e,
				  struct journal_report *rep, bool *wrote,
				  struct lf_why *why)
{
	char path[JOURNAL_NAME + 64], *have = NULL;
	struct ledger_fields f;
	const char *err;
	enum lf_err rc = LF_OK;
	int fd;

	if (!journal_case_name(e->name) || e->n < 2 ||
	    e->line[e->n - 1] != '\n' || e->offset > (1ull << 62)) {
		journal_skip(rep, e->name, e->offset, "not a row of a case");
		return LF_OK;
	}
	snprintf(path, sizeof(path), "cases/%s/ledger.jsonl", e->name);
	fd = openat(backing_fd, path,
		    O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		/* The case is gone, and its rows with it. */
		journal_skip(rep, e->name, e->offset, strerror(errno));
		return LF_OK;
	}
	if (fd < 0)
		/* Kept, with the journal, for a start that can open it. */
		return lf_fail(
			why, LF_IO,
			"commit journal: cannot open %s to write back a row: %s",
			path, strerror(errno));
	have = malloc(e->n);
	if (!have) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	/* Most often the ledger's own pages made it: nothing to do. */
	if (ledger_get(fd, have, e->n, (off_t)e->offset) == 0 &&
	    memcmp(have, e->line, e->n) == 0)
		goto out;
	if (ledger_scan_fields(e->line, e->n - 1, &f, &err) < 0 || !f.prev.p ||
	    f.prev.n != CHAIN_HEX_LEN + 2 ||
	    !journal_follows(fd, (long long)e->offset, f.prev.p + 1)) {
		journal_skip(rep, e->name, e->offset,
			     "the ledger does not end in the row it follows");
		goto out;
	}
	if (ledger_put(fd, e->line, e->n, (long long)e->offset) < 0) {
		rc = lf_fail(why, LF_IO,
			     "commit journal: cannot write back into %s: %s",
			     path, strerror(errno));
		goto out;
	}
	rep->written++;
	*wrote = true;
out:
	free(have);
	close(fd);
	return rc;
}

enum lf_err journal_recover(int backing_fd, struct journal_report *rep,
			    struct lf_why *why)
{
	struct journal_entry e;
	unsigned char *buf = NULL;
	unsigned long long off = 0, gen = 0;
	size_t cap = 0;
	enum lf_err rc = LF_OK;
	bool wrote = false;
	struct stat st;
	int fd, got;

	memset(rep, 0, sizeof(*rep));
	fd = openat(backing_fd, JOURNAL_FILE,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT
			       ? LF_OK
			       : lf_fail(why, LF_IO, "commit journal: %s",
					 strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return lf_fail(why, LF_IO,
			       "commit journal: not a regular file");
	}
	while ((got = journal_read_entry(fd, (unsigned long long)st.st_size,
					 off, &buf, &cap, &e)) == 1) {
		if (off == 0)
			gen = e.gen;
		else if (e.gen != gen)
			break;
		off += e.size;
		if (!e.n)
			continue; /* the marker */
		rep->rows++;
		rc = journal_replay(backing_fd, &e, rep, &wrote, why);
		if (rc != LF_OK)
			break;
	}
	if (got < 0 && rc == LF_OK)
		rc = lf_fail(why, LF_NOMEM, "out of memory");
	free(buf);
	close(fd);
	rep->gen = gen;
	/*
	 * Durable before the journal may start again over these rows: also
	 * those found in place, which after a kill may be in memory only.
	 */
	if (rc == LF_OK && (wrote || rep->rows) && syncfs(backing_fd) < 0)
		rc = lf_fail(
			why, LF_IO,
			"commit journal: cannot flush the rows written back: %s",
			strerror(errno));
	return rc;
}

/* --- writing --------------------------------------------------------------- */

/* Zeros from the file's end to size, flushed with the folder's entry. */
static int journal_fill(int fd, int backing_fd, unsigned long long from,
			unsigned long long size)
{
	static const char zeros[65536];
	size_t k;

	while (from < size) {
		k = size - from < sizeof(zeros) ? (size_t)(size - from)
						: sizeof(zeros);
		if (ledger_put(fd, zeros, k, (long long)from) < 0)
			return -1;
		from += k;
	}
	return fsync(fd) < 0 || fsync(backing_fd) < 0 ? -1 : 0;
}

enum lf_err journal_open(int backing_fd, unsigned long long size,
			 unsigned long long gen, struct journal **out,
			 struct lf_why *why)
{
	struct journal *j = calloc(1, sizeof(*j));
	struct stat st;
	int rc;

	*out = NULL;
	if (!j)
		return lf_fail(why, LF_NOMEM, "out of memory");
	j->size = size;
	j->gen = gen;
	/*
	 * No generation read (no file, or its first entry torn): start from
	 * a random one, so entries an older file left behind its new ones
	 * are never of the same generation.
	 */
	if (!gen) {
		if (chain_random((unsigned char *)&j->gen, sizeof(j->gen)) <
		    0) {
			free(j);
			return lf_fail(why, LF_IO,
				       "no randomness for the journal");
		}
		j->gen >>= 1; /* room to count up */
	}
	j->fd = openat(backing_fd, JOURNAL_FILE,
		       O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
			       O_NONBLOCK,
		       0600);
	if (j->fd < 0 || fstat(j->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		lf_fail(why, LF_IO, "commit journal: %s",
			j->fd < 0 ? strerror(errno) : "not a regular file");
		goto fail;
	}
	if ((unsigned long long)st.st_size > size)
		rc = ftruncate(j->fd, (off_t)size) < 0 || fsync(j->fd) < 0 ? -1
									   : 0;
	else
		rc = journal_fill(j->fd, backing_fd,
				  (unsigned long long)st.st_size, size);
	if (rc < 0 || journal_restart(j) != 0 || fdatasync(j->fd) < 0) {
		lf_fail(why, LF_IO, "commit journal: cannot prepare it: %s",
			strerror(errno));
		goto fail;
	}
	*out = j;
	return LF_OK;
fail:
	journal_close(j);
	return LF_IO;
}

void journal_close(struct journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	free(j->buf);
	free(j);
}

/* Room for n bytes in j->buf. */
static int journal_room(struct journal *j, size_t n)
{
	unsigned char *nb;

	if (n <= j->cap)
		return 0;
	nb = realloc(j->buf, n);
	if (!nb)
		return -1;
	j->buf = nb;
	j->cap = n;
	return 0;
}

int journal_write(struct journal *j, const struct journal_row *rows, size_t n)
{
	size_t total = 0, i, at = 0;

	if (j->broken)
		return EIO;
	for (i = 0; i < n; i++)
		total += journal_entry_size(strlen(rows[i].case_id), rows[i].n);
	if (j->pos + total > j->size)
		return JOURNAL_FULL;
	if (total && journal_room(j, total) < 0)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		journal_encode(j->buf + at, j->gen, &rows[i]);
		at += journal_entry_size(strlen(rows[i].case_id), rows[i].n);
	}
	if (ledger_put(j->fd, j->buf, total, (long long)j->pos) < 0 ||
	    fdatasync(j->fd) < 0) {
		/* What reached the disk is unknown: never write here again. */
		j->broken = true;
		return errno ? errno : EIO;
	}
	j->pos += total;
	return 0;
}

int journal_restart(struct journal *j)
{
	unsigned char marker[JOURNAL_HEAD + JOURNAL_SUM];

	if (j->broken)
		return EIO;
	/*
	 * The marker is flushed with the next batch: until then a crash
	 * finds the old generation, whose rows are all in their ledgers.
	 */
	j->gen++;
	journal_encode(marker, j->gen, NULL);
	if (ledger_put(j->fd, marker, sizeof(marker), 0) < 0) {
		j->broken = true;
		return errno ? errno : EIO;
	}
	j->pos = sizeof(marker);
	return 0;
}

int journal_remove(int backing_fd)
{
	if (unlinkat(backing_fd, JOURNAL_FILE, 0) < 0)
		return errno == ENOENT ? 0 : -1;
	return fsync(backing_fd);
}
