/* SPDX-License-Identifier: MIT */
/*
 * ledger_check.c - the checks of one ledger line (ledgerfs-ledger(5)
 * ROWS, SEALS): chain, row numbers, case, seals and MACs on the members
 * ledger_scan.c finds without a full JSON parse; the canonical-form check
 * for rows that are parsed anyway; the handing of a row to its reader.
 * ledger_verify.c reads the file and feeds the lines in.
 */
#include "ledger_check.h"
#include "ledger_hashes.h"

#include <stdlib.h>
#include <string.h>

/*
 * The rules of a row's shape that ledger_check_line and the helpers'
 * shortcut (ledger_prescan_vouches) both hold, written once so the two
 * cannot drift apart.
 */
static bool ledger_has_members(const struct ledger_fields *f)
{
	return f->row.p && ledger_is_str(&f->case_id) && f->prev.p &&
	       f->mac.p && ledger_is_str(&f->time) && ledger_is_str(&f->phase);
}

/* prev is the hash hex (64 characters) as a JSON string. */
static bool ledger_prev_is(const struct ledger_fields *f, const char *hex)
{
	return f->prev.n == CHAIN_HEX_LEN + 2 && f->prev.p[0] == '"' &&
	       f->prev.p[CHAIN_HEX_LEN + 1] == '"' &&
	       memcmp(f->prev.p + 1, hex, CHAIN_HEX_LEN) == 0;
}

/* mac is 64 lower-case hex digits, a member after the first. */
static bool ledger_mac_shaped(const struct ledger_fields *f)
{
	return ledger_is_hex_tok(&f->mac) && f->mac_member[0] == ',';
}

/*
 * Does a line worked out ahead pass every check of ledger_check_line that
 * neither its epoch, its MAC nor the reader's state decides?  bp: the
 * line before it in the chunk, whose hash its prev must be and whose
 * case_id token it must repeat (the reader holds that line to its case).
 */
static bool ledger_prescan_vouches(const struct ledger_prescan *ps, size_t n,
				   const struct ledger_hashes_line *before,
				   const struct ledger_prescan *bp)
{
	const struct ledger_fields *f = &ps->f;

	if (n > LEDGER_MAX_LINE || ps->rc < 0 || bp->rc < 0 ||
	    !ledger_has_members(f) || !ledger_mac_shaped(f))
		return false;
	if (f->case_id.n != bp->f.case_id.n ||
	    memcmp(f->case_id.p, bp->f.case_id.p, f->case_id.n) != 0)
		return false;
	return ledger_prev_is(f, before->hex);
}

/*
 * The key a thread reading ahead MACs a sealed row under: K(E) of the
 * seal key file for a row of epoch E; with K0 (key), K(e) stepped
 * forward from the last the thread derived.  Since an epoch holds a row
 * at least, a thread takes at most two steps a line, whatever epochs the
 * rows claim.  NULL: the reader MACs the row itself.
 */
static const unsigned char *ledger_ahead_epoch_key(
	const struct ledger_scan *st, struct ledger_hashes_thread *t,
	const struct ledger_prescan *ps, const unsigned char *key)
{
	unsigned long long e = ps->epoch;

	if (!ps->epoch_ok)
		return NULL;
	if (st->ahead_seal == RATCHET_KEYS_CURRENT)
		return e == st->ahead_epoch ? key : NULL;
	t->budget += 2;
	if (!t->key_known || e < t->epoch) {
		memcpy(t->key, key, CHAIN_KEY_BYTES);
		t->epoch = 0;
		t->key_known = true;
	}
	if (e - t->epoch > t->budget)
		return NULL;
	t->budget -= e - t->epoch;
	for (; t->epoch < e; t->epoch++)
		ratchet_step(t->key, t->key);
	return t->key;
}

/*
 * The line's chain hash into l->hex and its MAC under key into ps
 * (mac_done, mac_ok), both at once.
 */
static void ledger_prescan_mac(struct ledger_prescan *ps,
			       struct ledger_hashes_line *l,
			       const unsigned char *key, struct chain_mac *m)
{
	const struct ledger_fields *f = &ps->f;
	const char *s = l->s;

	/* The canonical row without mac is the line minus that member. */
	if (chain_sha256_mac2_hex(
		    m, key, s, l->n, s, (size_t)(f->mac_member - s), f->mac_end,
		    l->n - (size_t)(f->mac_end - s), l->hex, ps->mac) != 0)
		return;
	memcpy(ps->key, key, CHAIN_KEY_BYTES);
	ps->mac_done = true;
	ps->mac_ok = ledger_is_hex_tok(&f->mac) &&
		     chain_equal_n(ps->mac, f->mac.p + 1, CHAIN_HEX_LEN);
}

/*
 * ledger_prescan but the hash: the key to MAC the line under, or NULL
 * when the reader is to MAC it itself.
 */
static const unsigned char *
ledger_prescan_fields(struct ledger_prescan *ps, const char *s, size_t n,
		      const struct ledger_hashes_line *before,
		      const void *before_slot, const unsigned char *key,
		      struct ledger_hashes_thread *t,
		      const struct ledger_scan *st)
{
	const struct ledger_fields *f = &ps->f;

	ps->err = NULL;
	ps->mac_done = ps->mac_ok = ps->vouched = false;
	/*
	 * With no key at all every row's canonical form is checked: the
	 * most costly step of a keyless scan, and one a line alone decides.
	 * Only a pass is taken from here; a failure is found again, and
	 * said, by the reader.
	 */
	ps->canonical = false;
	ps->rc = ledger_scan_fields(s, n, &ps->f, &ps->err);
	if (ps->rc < 0)
		return NULL;
	ps->row = ledger_row_number(&f->row);
	ps->canonical = st && ledger_canon_due(st, ps->row) && !st->cb &&
			ledger_is_canonical(s, n);
	ps->has_epoch = f->epoch.p != NULL;
	ps->epoch_ok = ratchet_epoch_parse(f->epoch.p, f->epoch.n, &ps->epoch);
	ps->ends_epoch = ratchet_phase_ends_epoch(f->phase.p, f->phase.n);
	ps->closes = ledger_tok_is(&f->phase, "case_closed");
	ps->vouched =
		before && ledger_prescan_vouches(ps, n, before, before_slot);
	if (!key || !t || !t->mac || !f->mac.p || f->mac_member[0] != ',')
		return NULL;
	if (st && st->ahead_seal != RATCHET_KEYS_NONE)
		return ledger_ahead_epoch_key(st, t, ps, key);
	return key;
}

void ledger_prescan(void *slot, struct ledger_hashes_line *l,
		    const struct ledger_hashes_line *before,
		    const void *before_slot, const unsigned char *key,
		    struct ledger_hashes_thread *t, const void *ctx)
{
	struct ledger_prescan *ps = slot;

	key = ledger_prescan_fields(ps, l->s, l->n, before, before_slot, key, t,
				    ctx);
	if (key)
		ledger_prescan_mac(ps, l, key, t->mac);
	else
		chain_sha256_hex(l->s, l->n, l->hex);
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

/*
 * The row's MAC under key.  hex (may be NULL): where to put the line's
 * chain hash when the MAC is made here, both at once; *made says if it
 * was.
 */
static enum lf_err ledger_check_mac(struct ledger_scan *st,
				    const unsigned char *key, const char *s,
				    size_t n, const struct ledger_fields *f,
				    unsigned long long r, char *hex, bool *made,
				    struct lf_why *why)
{
	size_t head = (size_t)(f->mac_member - s);
	size_t tail = n - (size_t)(f->mac_end - s);
	const struct ledger_prescan *ps = st->ahead;
	char want[CHAIN_HEX_LEN + 1];

	if (ps && ps->mac_done && ps->f.mac_end == f->mac_end &&
	    memcmp(ps->key, key, CHAIN_KEY_BYTES) == 0) {
		/* A helper hashed it under this very key. */
		memcpy(want, ps->mac, sizeof(want));
	} else {
		if (!st->mac && !(st->mac = chain_mac_new()))
			return lf_fail(why, LF_NOMEM, "out of memory");
		/* The canonical row without mac is the line minus that member. */
		if (hex)
			*made = chain_sha256_mac2_hex(st->mac, key, s, n, s,
						      head, f->mac_end, tail,
						      hex, want) == 0;
		else
			chain_mac2_hex(st->mac, key, s, head, f->mac_end, tail,
				       want);
	}
	if (!chain_equal_n(want, f->mac.p + 1, CHAIN_HEX_LEN))
		return lf_fail(why, LF_VERIFY, "row %llu: mac does not match",
			       r);
	return LF_OK;
}

/*
 * A row a helper vouched for (ledger_prescan), numbered r, after a line
 * the reader took: the checks of ledger_check_line that are left, in its
 * order, on what the helper found, without touching the line's bytes,
 * which sit in another processor's cache.  -1 when this does not apply
 * (the full checks run), else LF_OK or the failure, with why.
 */
static int ledger_check_vouched(struct ledger_scan *st, const char *s, size_t n,
				unsigned long long r, struct lf_why *why)
{
	const struct ledger_prescan *ps = st->ahead;
	const unsigned char *key = NULL;
	enum lf_err rc;

	if (!ps || !ps->vouched || ps->row != r || !st->case_tok || st->cb ||
	    st->canon)
		return -1;
	if (!st->sealed) {
		/* ledger_seal_row: no epoch, and the case key's MAC. */
		if (ps->has_epoch || !st->host_key || !ps->mac_ok ||
		    memcmp(ps->key, st->case_key, CHAIN_KEY_BYTES) != 0)
			return -1;
		st->walk.mac_rows++;
	} else {
		if (!ps->epoch_ok)
			return -1;
		rc = ratchet_walk_row(&st->walk, r, ps->epoch, &key, why);
		if (rc)
			return (int)rc;
		if (key &&
		    !(ps->mac_ok &&
		      memcmp(ps->key, key, CHAIN_KEY_BYTES) == 0) &&
		    (rc = ledger_check_mac(st, key, s, n, &ps->f, r, NULL, NULL,
					   why)))
			return (int)rc;
		ratchet_walk_done_ends(&st->walk, ps->ends_epoch);
	}
	memcpy(st->prev, st->ahead_hex, sizeof(st->prev));
	st->closed = ps->closes;
	st->row = r;
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
enum lf_err ledger_check_line(struct ledger_scan *st, const char *s, size_t n,
			      long long off, struct lf_why *why)
{
	unsigned long long r = st->row + 1, got;
	const unsigned char *key = NULL;
	struct ledger_fields f;
	const char *err = NULL;
	char hex[CHAIN_HEX_LEN + 1];
	bool hashed = false;
	enum lf_err rc;
	int vouched;

	if (n > LEDGER_MAX_LINE)
		return lf_fail(why, LF_VERIFY, "row %llu: line over 64 MiB", r);
	/* ledgerfs-ledger(5) ROWS: no row ever follows case_closed. */
	if (st->closed)
		return lf_fail(why, LF_VERIFY,
			       "row %llu: a row after case_closed", r);
	vouched = ledger_check_vouched(st, s, n, r, why);
	if (vouched >= 0)
		return (enum lf_err)vouched;
	if (ledger_fields_of(st, s, n, &f, &err) < 0)
		return lf_fail(why, LF_VERIFY, "row %llu: %s", r, err);
	if (!ledger_has_members(&f))
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
	if (!ledger_prev_is(&f, st->prev)) {
		if (r == 1)
			return lf_fail(why, LF_VERIFY,
				       "row 1: prev is not 64 zeros");
		return lf_fail(why, LF_VERIFY,
			       "row %llu: prev does not match row %llu", r,
			       r - 1);
	}
	if (!ledger_mac_shaped(&f))
		return lf_fail(why, LF_VERIFY, "row %llu: mac is malformed", r);
	rc = ledger_seal_row(st, s, n, &f, r, &key, why);
	if (rc)
		return rc;
	if (key) {
		rc = ledger_check_mac(st, key, s, n, &f, r,
				      st->ahead_hex ? NULL : hex, &hashed, why);
		if (rc)
			return rc;
	}
	/*
	 * With no key at all, canonical form stands in for the MAC.  With a
	 * key, a row it cannot reach (an earlier epoch) is held by the chain
	 * alone: re-serializing it would prove nothing a rewriter could not
	 * also do, and would make restart and verify ten times slower.
	 */
	if (st->cb ||
	    (ledger_canon_due(st, r) && !ledger_canonical_ahead(st))) {
		rc = ledger_parse_row(st, s, n, off, r,
				      ledger_canon_due(st, r) && !key, why);
		if (rc)
			return rc;
	}
	if (st->sealed)
		ratchet_walk_done(&st->walk, f.phase.p, f.phase.n);
	if (st->ahead_hex)
		memcpy(st->prev, st->ahead_hex, sizeof(st->prev));
	else if (hashed)
		memcpy(st->prev, hex, sizeof(st->prev));
	else
		chain_sha256_hex(s, n, st->prev);
	st->closed = ledger_tok_is(&f.phase, "case_closed");
	st->row = r;
	return LF_OK;
}

/* The expected case as a canonical JSON string token. */
enum lf_err ledger_expect_case(struct ledger_scan *st, const char *case_id,
			       struct lf_why *why)
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
