/* SPDX-License-Identifier: MIT */
/*
 * ledger_verify.c - reading a ledger back: a large one read ahead on
 * every thread (ledger_hashes.h), the rest line by line here, each line
 * checked by ledger_check.c, and a padded or torn tail.
 */
#include "ledger.h"
#include "ledger_check.h"
#include "ledger_hashes.h"
#include "ledger_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEDGER_READ_BUF ((size_t)256 << 10)

/*
 * Row 1 as threads reading ahead see it before the reader checks it:
 * whether it is sealed (it has an epoch), and with host_key the case key
 * its case_id names.  Only a guess, since the reader checks each MAC
 * under the key it derives itself.  Neither, when row 1 cannot be read
 * from the first 64 KiB.
 */
static void ledger_peek_row1(int fd, const unsigned char *host_key,
			     bool *sealed, unsigned char key[CHAIN_KEY_BYTES],
			     bool *keyed)
{
	char head[65536];
	struct ledger_fields f;
	const char *err, *nl;
	json_t *v = NULL;
	ssize_t r = pread(fd, head, sizeof(head), 0);

	*sealed = *keyed = false;
	if (r <= 0 || !(nl = memchr(head, '\n', (size_t)r)) ||
	    ledger_scan_fields(head, (size_t)(nl - head), &f, &err) < 0)
		return;
	*sealed = f.epoch.p != NULL;
	if (host_key && ledger_is_str(&f.case_id) &&
	    (v = json_loadb(f.case_id.p, f.case_id.n, JSON_DECODE_ANY, NULL)) &&
	    json_is_string(v)) {
		chain_case_key(host_key, json_string_value(v), key);
		*keyed = true;
	}
	json_decref(v);
}

/*
 * The key threads reading ahead MAC rows under, into key; NULL for none.
 * Without seals, the case key.  A sealed row MACs under K(its epoch),
 * which a case key would only waste time on: with the seal key file's
 * K(E), the threads MAC the rows of epoch E (st->ahead_epoch) and leave
 * the rest unchecked, as the reader does; with K0, every row under
 * K(its epoch) (ledger_prescan).
 */
static const unsigned char *ledger_ahead_key(struct ledger_scan *st, int fd,
					     unsigned char key[CHAIN_KEY_BYTES])
{
	bool sealed, keyed;

	ledger_peek_row1(fd, st->host_key, &sealed, key, &keyed);
	if (sealed) {
		if (st->walk.keys.mode == RATCHET_KEYS_NONE)
			return NULL;
		st->ahead_seal = st->walk.keys.mode;
		st->ahead_epoch = st->walk.keys.epoch;
		memcpy(key, st->walk.keys.key, CHAIN_KEY_BYTES);
		return key;
	}
	if (st->host_key && st->case_tok)
		return st->case_key;
	return keyed ? key : NULL;
}

/*
 * Check the lines of a large ledger read ahead on every thread
 * (ledger_hashes.h); *good: the end of the last line checked, where the
 * reader goes on alone.
 */
static enum lf_err ledger_verify_ahead(struct ledger_scan *st, int fd,
				       long long *good, struct lf_why *why)
{
	struct ledger_hashes hs;
	const struct ledger_hashes_chunk *c;
	const struct ledger_hashes_line *l;
	unsigned char guess[CHAIN_KEY_BYTES];
	const unsigned char *key;
	enum lf_err rc = LF_OK;
	size_t i;

	/* A daemon loading a case reads on one thread: no guess to make. */
	if (!ledger_hashes_worth(fd, NULL))
		return LF_OK;
	key = ledger_ahead_key(st, fd, guess);
	/* Its canon, cb and ahead_* stay as they are: the threads read them. */
	if (ledger_hashes_start(&hs, fd, ledger_prescan,
				sizeof(struct ledger_prescan), st, key) <= 0)
		goto out; /* no threads: the reader reads it all */
	while (!rc && (c = ledger_hashes_take(&hs, *good))) {
		for (i = 0; i < c->n; i++) {
			l = &c->line[i];
			st->ahead = ledger_hashes_slot(&hs, c, i);
			st->ahead_hex = l->hex;
			rc = ledger_check_line(st, l->s, l->n, l->off, why);
			if (rc)
				break;
			*good = l->off + (long long)l->n + 1;
		}
		st->ahead = NULL;
		st->ahead_hex = NULL;
		ledger_hashes_give_back(&hs, c);
	}
	ledger_hashes_stop(&hs);
out:
	explicit_bzero(guess, sizeof(guess));
	return rc;
}

static ssize_t ledger_pread(int fd, char *buf, size_t n, long long off)
{
	ssize_t r;

	do {
		r = pread(fd, buf, n, (off_t)off);
	} while (r < 0 && errno == EINTR);
	return r;
}

/*
 * After the last whole row at base, the file holds a 0x00 byte: it is
 * padding when every byte from base to the end is 0x00 (LF_OK), else a
 * torn tail, cut whole at repair (ledgerfs-ledger(5) PADDING, RECOVERY).
 * p: the first bytes at base, already read.  *eof: the file's end.
 */
static enum lf_err ledger_tail(int fd, long long base, const char *p,
			       long long *eof, struct ledger_scan *st,
			       struct ledger_report *rep, struct lf_why *why)
{
	char chunk[65536];
	long long off = base;
	struct stat sb;
	ssize_t r, i;
	bool zero = p[0] == '\0';

	while (zero) {
		r = ledger_pread(fd, chunk, sizeof(chunk), off);
		if (r < 0)
			return lf_fail(why, LF_IO, "cannot read ledger: %s",
				       strerror(errno));
		if (r == 0)
			break;
		for (i = 0; i < r; i++)
			if (chunk[i])
				zero = false;
		off += r;
	}
	if (zero) {
		*eof = off;
		return LF_OK;
	}
	/* The tail cut at repair runs to the file's end. */
	if (fstat(fd, &sb) == 0 && sb.st_size > *eof)
		*eof = sb.st_size;
	rep->torn = true;
	return lf_fail(why, LF_VERIFY, "row %llu: torn (bytes after the rows)",
		       st->row + 1);
}

enum lf_err ledger_verify_fd(int fd, const char *case_id,
			     const unsigned char *host_key, ledger_row_cb cb,
			     void *ctx, struct ledger_report *rep,
			     struct lf_why *why)
{
	return ledger_verify_sealed(fd, case_id, host_key, NULL, cb, ctx, rep,
				    why);
}

enum lf_err ledger_verify_sealed(int fd, const char *case_id,
				 const unsigned char *host_key,
				 const struct ratchet_keys *seal,
				 ledger_row_cb cb, void *ctx,
				 struct ledger_report *rep, struct lf_why *why)
{
	struct ledger_reader rd = {.cb = cb, .ctx = ctx};

	return ledger_verify_read(fd, case_id, host_key, seal, &rd, rep, why);
}

enum lf_err ledger_verify_read(int fd, const char *case_id,
			       const unsigned char *host_key,
			       const struct ratchet_keys *seal,
			       const struct ledger_reader *rd,
			       struct ledger_report *rep, struct lf_why *why)
{
	struct ledger_scan st;
	struct ledger_report dummy;
	size_t cap = LEDGER_READ_BUF, have = 0, rem;
	long long base = 0, readoff = 0; /* file offset of buf[0], of EOF */
	long long good = 0;		 /* end of the last good line */
	char *buf = NULL, *p, *q, *end, *nl;
	size_t checked = 0;
	enum lf_err rc = LF_OK;
	struct stat sb;
	ssize_t r;

	if (!rep)
		rep = &dummy;
	memset(rep, 0, sizeof(*rep));
	memset(&st, 0, sizeof(st));
	memset(st.prev, '0', CHAIN_HEX_LEN);
	st.host_key = host_key;
	if (rd) {
		st.cb = rd->cb;
		st.ctx = rd->ctx;
		st.members = rd->members;
		st.signed_rows = rd->signed_rows;
	}
	ratchet_walk_init(&st.walk, seal);
	st.canon = !host_key && !(seal && seal->mode != RATCHET_KEYS_NONE);
	chain_init();
	if (case_id) {
		rc = ledger_expect_case(&st, case_id, why);
		if (rc)
			goto out;
	}
	/* A large ledger is read ahead on every thread; the rest here. */
	rc = ledger_verify_ahead(&st, fd, &good, why);
	base = readoff = good;
	if (rc)
		goto out;
	/* A small rest needs no large buffer; lines longer than it grow it. */
	if (fstat(fd, &sb) == 0 && sb.st_size >= good &&
	    (unsigned long long)(sb.st_size - good) < cap)
		cap = (size_t)(sb.st_size - good) < 65536
			      ? 65536
			      : (size_t)(sb.st_size - good) + 1;
	buf = malloc(cap);
	if (!buf) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
#ifdef POSIX_FADV_SEQUENTIAL
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
	for (;;) {
		r = ledger_pread(fd, buf + have, cap - have, readoff);
		if (r < 0) {
			rc = lf_fail(why, LF_IO, "cannot read ledger: %s",
				     strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		readoff += r;
		have += (size_t)r;
		p = buf;
		end = buf + have;
		/* The carried-over start of a line holds no newline. */
		q = buf + checked;
		while ((nl = memchr(q, '\n', (size_t)(end - q)))) {
			rc = ledger_check_line(&st, p, (size_t)(nl - p),
					       base + (p - buf), why);
			if (rc)
				goto out;
			p = q = nl + 1;
			good = base + (p - buf);
		}
		rem = (size_t)(end - p);
		base += p - buf;
		if (rem && memchr(p, '\0', rem)) {
			/* No row holds 0x00: padding, or a torn tail. */
			rc = ledger_tail(fd, base, p, &readoff, &st, rep, why);
			have = 0;
			goto out;
		}
		if (rem > LEDGER_MAX_LINE) {
			rc = lf_fail(why, LF_VERIFY,
				     "row %llu: line over 64 MiB", st.row + 1);
			goto out;
		}
		memmove(buf, p, rem);
		have = rem;
		checked = rem;
		if (have == cap) {
			/* One line fills the buffer: make room, up to the bound. */
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				rc = lf_fail(why, LF_NOMEM, "out of memory");
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (have) {
		rep->torn = true;
		rc = lf_fail(why, LF_VERIFY,
			     "row %llu: torn (no newline at end)", st.row + 1);
	}
out:
	rep->head.rows = st.row;
	rep->sealed = st.sealed;
	rep->walk = st.walk;
	ratchet_walk_wipe(&rep->walk);
	ratchet_walk_wipe(&st.walk);
	/* Every row's MAC checked; an empty ledger: whether a key was. */
	rep->macs_checked = st.row ? st.walk.mac_rows == st.row
				   : host_key || (seal && seal->mode);
	memcpy(rep->head.head, st.prev, sizeof(st.prev));
	rep->good_bytes = good;
	rep->file_bytes = readoff;
	if (rc != LF_OK && rc != LF_IO && rc != LF_NOMEM)
		rep->bad_row = st.row + 1;
	/* A scan that stopped early has not read to the end. */
	if (rc != LF_OK && !rep->torn && fstat(fd, &sb) == 0 &&
	    sb.st_size > readoff)
		rep->file_bytes = sb.st_size;
	chain_mac_free(st.mac);
	free(buf);
	free(st.case_tok);
	return rc;
}
