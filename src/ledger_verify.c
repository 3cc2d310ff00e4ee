/* SPDX-License-Identifier: MIT */
/*
 * ledger_verify.c - reading a ledger back: line splitting, the checks of
 * chain, row numbers, seals and MACs on the members ledger_scan.c finds
 * without a full JSON parse, the canonical-form check for rows that are
 * parsed anyway, and a padded or torn tail.
 */
#include "ledger.h"
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

/* The running state of one scan. */
struct ledger_scan {
	const unsigned char *host_key;
	unsigned char case_key[CHAIN_KEY_BYTES];
	char *case_tok; /* expected case_id as a JSON string token */
	size_t case_tok_len;
	unsigned long long row; /* rows verified so far */
	char prev[CHAIN_HEX_LEN + 1];
	ledger_row_cb cb;
	void *ctx;
	const char *const *members; /* ledger_reader */
	bool sealed; /* row 1 has an epoch: forward-secure seals */
	bool canon;  /* no key at all: check canonical form instead */
	struct ratchet_walk walk;
	struct chain_mac *mac; /* the key's pads, hashed once */
	/* The line being checked as read ahead (ledger_hashes.h), or NULL. */
	const struct ledger_prescan *ahead;
	const char *ahead_hex;
};

/*
 * A line's members as a thread reading ahead found them (ledger_hashes.h), and
 * its MAC under the key the batch expected, when there was one.
 */
struct ledger_prescan {
	struct ledger_fields f;
	const char *err;
	int rc;
	bool mac_done;
	bool canonical; /* parsed, and in canonical form (keyless scans) */
	unsigned char key[CHAIN_KEY_BYTES];
	char mac[CHAIN_HEX_LEN + 1];
};

static void ledger_prescan(void *slot, const char *s, size_t n,
			   const unsigned char *key, struct chain_mac *m,
			   const void *ctx)
{
	struct ledger_prescan *ps = slot;
	const struct ledger_fields *f = &ps->f;
	const struct ledger_scan *st = ctx;

	ps->err = NULL;
	ps->mac_done = false;
	/*
	 * With no key at all every row's canonical form is checked: the
	 * most costly step of a keyless scan, and one a line alone decides.
	 * Only a pass is taken from here; a failure is found again, and
	 * said, by the reader.
	 */
	ps->canonical = st && st->canon && !st->cb && ledger_is_canonical(s, n);
	ps->rc = ledger_scan_fields(s, n, &ps->f, &ps->err);
	if (ps->rc < 0 || !key || !m || !f->mac.p || f->mac_member[0] != ',')
		return;
	/* The canonical row without mac is the line minus that member. */
	if (chain_mac2_hex(m, key, s, (size_t)(f->mac_member - s), f->mac_end,
			   n - (size_t)(f->mac_end - s), ps->mac) == 0) {
		memcpy(ps->key, key, CHAIN_KEY_BYTES);
		ps->mac_done = true;
	}
}

/* ledger_scan_fields, or what a helper already found for this line. */
static int ledger_fields_of(struct ledger_scan *st, const char *s, size_t n,
			    struct ledger_fields *f, const char **err)
{
	const struct ledger_prescan *ps = st->ahead;

	if (!ps)
		return ledger_scan_fields(s, n, f, err);
	*f = ps->f;
	*err = ps->err;
	return ps->rc;
}

/* Take the case from row 1's token: derive the key, remember the token. */
static enum lf_err ledger_take_case(struct ledger_scan *st,
				    const struct ledger_tok *t,
				    struct lf_why *why)
{
	json_t *v =
		json_loadb(t->p, t->n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	if (!json_is_string(v)) {
		json_decref(v);
		return lf_fail(why, LF_VERIFY, "row 1: case_id is malformed");
	}
	if (st->host_key)
		chain_case_key(st->host_key, json_string_value(v),
			       st->case_key);
	json_decref(v);
	st->case_tok = malloc(t->n);
	if (!st->case_tok)
		return lf_fail(why, LF_NOMEM, "out of memory");
	memcpy(st->case_tok, t->p, t->n);
	st->case_tok_len = t->n;
	return LF_OK;
}

static enum lf_err ledger_check_mac(struct ledger_scan *st,
				    const unsigned char *key, const char *s,
				    size_t n, const struct ledger_fields *f,
				    unsigned long long r, struct lf_why *why)
{
	size_t head = (size_t)(f->mac_member - s);
	size_t tail = n - (size_t)(f->mac_end - s);
	char want[CHAIN_HEX_LEN + 1], got[CHAIN_HEX_LEN + 1];

	const struct ledger_prescan *ps = st->ahead;

	if (ps && ps->mac_done && ps->f.mac_end == f->mac_end &&
	    memcmp(ps->key, key, CHAIN_KEY_BYTES) == 0) {
		/* A helper hashed it under this very key. */
		memcpy(want, ps->mac, sizeof(want));
	} else {
		if (!st->mac && !(st->mac = chain_mac_new()))
			return lf_fail(why, LF_NOMEM, "out of memory");
		/* The canonical row without mac is the line minus that member. */
		chain_mac2_hex(st->mac, key, s, head, f->mac_end, tail, want);
	}
	memcpy(got, f->mac.p + 1, CHAIN_HEX_LEN);
	got[CHAIN_HEX_LEN] = '\0';
	if (!chain_equal(want, got))
		return lf_fail(why, LF_VERIFY, "row %llu: mac does not match",
			       r);
	return LF_OK;
}

/* Did a helper find this line canonical already (ledger_prescan)? */
static bool ledger_canonical_ahead(const struct ledger_scan *st)
{
	return st->ahead && st->ahead->canonical;
}

/* Parse a row, insist it re-serializes to the same bytes, hand it to cb. */
static enum lf_err ledger_parse_row(struct ledger_scan *st, const char *s,
				    size_t n, long long off,
				    unsigned long long r, bool canon,
				    struct lf_why *why)
{
	json_error_t jerr;
	json_t *row;
	char *again = NULL;
	enum lf_err rc = LF_VERIFY;
	int cbrc;

	/* An authentic row: only what its reader asked for (ledger.h). */
	row = !canon && st->members ? ledger_scan_members(s, n, st->members)
				    : NULL;
	if (!row)
		row = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
				 &jerr);
	if (!row) {
		lf_fail(why, LF_VERIFY, "row %llu: not valid JSON (%s)", r,
			jerr.text);
		goto out;
	}
	/*
	 * A row whose MAC matched was written by the key's holder, in
	 * canonical form: serializing it again would only double the cost
	 * of a restart (ledgerfs(8), RESTART).
	 */
	if (canon) {
		again = ledger_canonical(row);
		if (!again) {
			rc = lf_fail(why, LF_NOMEM, "out of memory");
			goto out;
		}
		if (strlen(again) != n || memcmp(again, s, n) != 0) {
			lf_fail(why, LF_VERIFY,
				"row %llu: not in canonical form", r);
			goto out;
		}
	}
	if (st->cb) {
		cbrc = st->cb(st->ctx, row, off, n);
		if (cbrc) {
			rc = lf_fail(why, (enum lf_err)cbrc,
				     "row %llu: refused by the reader (%s)", r,
				     lf_err_name((enum lf_err)cbrc));
			goto out;
		}
	}
	rc = LF_OK;
out:
	free(again);
	json_decref(row);
	return rc;
}

/*
 * Which key checks row r's MAC (ledgerfs-ledger(5) SEALS): the case key
 * in a ledger without seals; in a sealed one, K(epoch) when the keys
 * held reach it, else none.  *key NULL: not checked.
 */
static enum lf_err ledger_seal_row(struct ledger_scan *st, const char *s,
				   size_t n, const struct ledger_fields *f,
				   unsigned long long r,
				   const unsigned char **key,
				   struct lf_why *why)
{
	enum lf_err rc;

	*key = NULL;
	if (r == 1 && f->epoch.p) {
		rc = ratchet_walk_begin(&st->walk, s, n, why);
		if (rc)
			return rc;
		st->sealed = true;
	}
	if (!st->sealed) {
		if (f->epoch.p)
			return lf_fail(
				why, LF_VERIFY,
				"row %llu: an epoch in a ledger without seals",
				r);
		if (st->host_key) {
			*key = st->case_key;
			st->walk.mac_rows++;
		}
		return LF_OK;
	}
	return ratchet_walk_epoch(&st->walk, r, f->epoch.p, f->epoch.n, key,
				  why);
}

/* All checks of one complete line (without its newline), in order. */
static enum lf_err ledger_check_line(struct ledger_scan *st, const char *s,
				     size_t n, long long off,
				     struct lf_why *why)
{
	unsigned long long r = st->row + 1, got;
	const unsigned char *key = NULL;
	struct ledger_fields f;
	const char *err = NULL;
	enum lf_err rc;

	if (n > LEDGER_MAX_LINE)
		return lf_fail(why, LF_VERIFY, "row %llu: line over 64 MiB", r);
	if (ledger_fields_of(st, s, n, &f, &err) < 0)
		return lf_fail(why, LF_VERIFY, "row %llu: %s", r, err);
	if (!f.row.p || !ledger_is_str(&f.case_id) || !f.prev.p || !f.mac.p ||
	    !ledger_is_str(&f.time) || !ledger_is_str(&f.phase))
		return lf_fail(
			why, LF_VERIFY,
			"row %llu: a required member (case_id, row, time, phase, prev, mac) is missing or not a string",
			r);
	got = ledger_row_number(&f.row);
	if (got != r)
		return lf_fail(why, LF_VERIFY,
			       "row %llu: row number %.*s, expected %llu", r,
			       (int)(f.row.n > 24 ? 24 : f.row.n), f.row.p, r);
	if (!st->case_tok) {
		rc = ledger_take_case(st, &f.case_id, why);
		if (rc)
			return rc;
	} else if (f.case_id.n != st->case_tok_len ||
		   memcmp(f.case_id.p, st->case_tok, f.case_id.n) != 0) {
		return lf_fail(
			why, LF_VERIFY, "row %llu: case_id %.*s, expected %.*s",
			r, (int)(f.case_id.n > 64 ? 64 : f.case_id.n),
			f.case_id.p,
			(int)(st->case_tok_len > 64 ? 64 : st->case_tok_len),
			st->case_tok);
	}
	if (f.prev.n != CHAIN_HEX_LEN + 2 ||
	    memcmp(f.prev.p + 1, st->prev, CHAIN_HEX_LEN) != 0 ||
	    f.prev.p[0] != '"' || f.prev.p[CHAIN_HEX_LEN + 1] != '"') {
		if (r == 1)
			return lf_fail(why, LF_VERIFY,
				       "row 1: prev is not 64 zeros");
		return lf_fail(why, LF_VERIFY,
			       "row %llu: prev does not match row %llu", r,
			       r - 1);
	}
	if (!ledger_is_hex_tok(&f.mac) || f.mac_member[0] != ',')
		return lf_fail(why, LF_VERIFY, "row %llu: mac is malformed", r);
	rc = ledger_seal_row(st, s, n, &f, r, &key, why);
	if (rc)
		return rc;
	if (key) {
		rc = ledger_check_mac(st, key, s, n, &f, r, why);
		if (rc)
			return rc;
	}
	/*
	 * With no key at all, canonical form stands in for the MAC.  With a
	 * key, a row it cannot reach (an earlier epoch) is held by the chain
	 * alone: re-serializing it would prove nothing a rewriter could not
	 * also do, and would make restart and verify ten times slower.
	 */
	if (st->cb || (st->canon && !ledger_canonical_ahead(st))) {
		rc = ledger_parse_row(st, s, n, off, r, st->canon && !key, why);
		if (rc)
			return rc;
	}
	if (st->sealed)
		ratchet_walk_done(&st->walk, f.phase.p, f.phase.n);
	if (st->ahead_hex)
		memcpy(st->prev, st->ahead_hex, sizeof(st->prev));
	else
		chain_sha256_hex(s, n, st->prev);
	st->row = r;
	return LF_OK;
}

/* The expected case as a canonical JSON string token. */
static enum lf_err ledger_expect_case(struct ledger_scan *st,
				      const char *case_id, struct lf_why *why)
{
	json_t *s = json_string(case_id);

	if (!s)
		return lf_fail(why, LF_VERIFY, "case id is not valid UTF-8");
	st->case_tok = json_dumps(s, JSON_ENCODE_ANY | JSON_COMPACT);
	json_decref(s);
	if (!st->case_tok)
		return lf_fail(why, LF_NOMEM, "out of memory");
	st->case_tok_len = strlen(st->case_tok);
	if (st->host_key)
		chain_case_key(st->host_key, case_id, st->case_key);
	return LF_OK;
}

/*
 * The MAC key row 1 names, for threads reading ahead before row 1 is
 * checked: only a guess, since the reader checks each MAC under the key
 * it derives itself.  0, or -1 when row 1 does not name a case.
 */
static int ledger_guess_case_key(int fd, const unsigned char *host_key,
				 unsigned char out[CHAIN_KEY_BYTES])
{
	char head[65536];
	struct ledger_fields f;
	const char *err, *nl;
	json_t *v = NULL;
	ssize_t r = pread(fd, head, sizeof(head), 0);

	if (r <= 0 || !(nl = memchr(head, '\n', (size_t)r)) ||
	    ledger_scan_fields(head, (size_t)(nl - head), &f, &err) < 0 ||
	    !ledger_is_str(&f.case_id) ||
	    !(v = json_loadb(f.case_id.p, f.case_id.n, JSON_DECODE_ANY,
			     NULL)) ||
	    !json_is_string(v)) {
		json_decref(v);
		return -1;
	}
	chain_case_key(host_key, json_string_value(v), out);
	json_decref(v);
	return 0;
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
	const unsigned char *key = NULL;
	enum lf_err rc = LF_OK;
	size_t i;

	/* A daemon loading a case reads on one thread: no guess to make. */
	if (!ledger_hashes_worth(fd, NULL))
		return LF_OK;
	if (st->host_key && st->case_tok)
		key = st->case_key;
	else if (st->host_key &&
		 ledger_guess_case_key(fd, st->host_key, guess) == 0)
		key = guess;
	/* Its canon and cb stay as they are: the threads read them. */
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
