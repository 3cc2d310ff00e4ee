/* SPDX-License-Identifier: MIT */
/*
 * ratchet.c - forward-secure seals (ledgerfs-ledger(5) SEALS): the one-way
 * key ratchet, the verifier's walk that says which epoch each row is in
 * and which key checks it, and what a ledger asks of its seal (the seal
 * key file itself is ratchet_file.c).
 */
#include "ratchet.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

void ratchet_step(const unsigned char in[CHAIN_KEY_BYTES],
		  unsigned char out[CHAIN_KEY_BYTES])
{
	unsigned char next[CHAIN_KEY_BYTES];

	chain_hmac(in, RATCHET_LABEL, sizeof(RATCHET_LABEL) - 1, next);
	memcpy(out, next, sizeof(next));
	explicit_bzero(next, sizeof(next));
}

/* ---- the verifier's walk ------------------------------------------- */

void ratchet_walk_init(struct ratchet_walk *w, const struct ratchet_keys *k)
{
	memset(w, 0, sizeof(*w));
	if (k)
		w->keys = *k;
	if (w->keys.mode == RATCHET_KEYS_ALL) {
		memcpy(w->key, w->keys.key, CHAIN_KEY_BYTES);
		w->key_known = true;
	}
}

enum lf_err ratchet_walk_row(struct ratchet_walk *w, unsigned long long r,
			     unsigned long long claimed,
			     const unsigned char **mac_key, struct lf_why *why)
{
	*mac_key = NULL;
	if (claimed != w->epoch)
		return lf_fail(why, LF_VERIFY,
			       "row %llu: epoch %llu, expected %llu", r,
			       claimed, w->epoch);
	if (w->keys.mode == RATCHET_KEYS_ALL) {
		*mac_key = w->key;
	} else if (w->keys.mode == RATCHET_KEYS_CURRENT) {
		if (w->epoch > w->keys.epoch)
			return lf_fail(
				why, LF_VERIFY,
				"row %llu: epoch %llu is past the seal key's epoch %llu",
				r, w->epoch, w->keys.epoch);
		if (w->epoch == w->keys.epoch)
			*mac_key = w->keys.key;
	}
	if (*mac_key)
		w->mac_rows++;
	return LF_OK;
}

enum lf_err ratchet_walk_begin(struct ratchet_walk *w, const char *row1,
			       size_t n, struct lf_why *why)
{
	json_t *row = json_loadb(row1, n, JSON_ALLOW_NUL, NULL);
	json_t *v = json_object_get(row, "epoch_rows");
	json_int_t rows = json_is_integer(v) ? json_integer_value(v) : 0;

	json_decref(row);
	if (rows < 1)
		return lf_fail(
			why, LF_VERIFY,
			"row 1: sealed (it has an epoch) but epoch_rows is missing or not a positive integer");
	w->epoch_rows = (unsigned long long)rows;
	return LF_OK;
}

bool ratchet_epoch_parse(const char *tok, size_t n, unsigned long long *v)
{
	size_t i;

	*v = 0;
	/* Canonical: 0, or digits without a leading zero. */
	if (!tok || n == 0 || n > 19 || (tok[0] == '0' && n > 1))
		return false;
	for (i = 0; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return false;
		*v = *v * 10 + (unsigned long long)(tok[i] - '0');
	}
	return true;
}

enum lf_err ratchet_walk_epoch(struct ratchet_walk *w, unsigned long long r,
			       const char *tok, size_t n,
			       const unsigned char **mac_key,
			       struct lf_why *why)
{
	unsigned long long v;

	if (ratchet_epoch_parse(tok, n, &v))
		return ratchet_walk_row(w, r, v, mac_key, why);
	*mac_key = NULL;
	return lf_fail(why, LF_VERIFY,
		       "row %llu: epoch is missing or malformed", r);
}

static bool ratchet_tok_is(const char *tok, size_t n, const char *s)
{
	return tok && n == strlen(s) && memcmp(tok, s, n) == 0;
}

bool ratchet_phase_ends_epoch(const char *phase_tok, size_t phase_len)
{
	return ratchet_tok_is(phase_tok, phase_len, "\"turn\"") ||
	       ratchet_tok_is(phase_tok, phase_len, "\"case_closed\"");
}

void ratchet_walk_done(struct ratchet_walk *w, const char *phase_tok,
		       size_t phase_len)
{
	ratchet_walk_done_ends(w,
			       ratchet_phase_ends_epoch(phase_tok, phase_len));
}

void ratchet_walk_done_ends(struct ratchet_walk *w, bool ends)
{
	w->rows_in_epoch++;
	if (ends || (w->epoch_rows && w->rows_in_epoch >= w->epoch_rows)) {
		w->epoch++;
		w->rows_in_epoch = 0;
		if (w->key_known)
			ratchet_step(w->key, w->key);
	}
}

void ratchet_walk_wipe(struct ratchet_walk *w)
{
	explicit_bzero(w->key, sizeof(w->key));
	explicit_bzero(w->keys.key, sizeof(w->keys.key));
	w->key_known = false;
}

/* ---- what a ledger asks of its seal ------------------------------- */

/* The seal key file's name beside the ledger at path. */
static int ratchet_path(const char *path, char *out, size_t size)
{
	int n = snprintf(out, size, "%s" RATCHET_FILE_SUFFIX, path);

	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

enum lf_err ratchet_beside_create(int dirfd, const char *ledger_path,
				  const unsigned char host_key[CHAIN_KEY_BYTES],
				  unsigned long long epoch_rows,
				  struct ratchet **out, struct lf_why *why)
{
	char spath[PATH_MAX];

	if (ratchet_path(ledger_path, spath, sizeof(spath)) < 0)
		return lf_fail(why, LF_IO, "ledger path %s is too long",
			       ledger_path);
	return ratchet_create(dirfd, spath, host_key, epoch_rows, out, why);
}

void ratchet_beside_park(struct ratchet *r, int base_fd,
			 const char *ledger_path)
{
	char spath[PATH_MAX];

	if (r && ratchet_path(ledger_path, spath, sizeof(spath)) == 0)
		ratchet_park(r, base_fd, spath);
}

enum lf_err ratchet_beside_load(int dirfd, const char *ledger_path,
				const unsigned char host_key[CHAIN_KEY_BYTES],
				struct ratchet **out, struct ratchet_keys *keys,
				struct lf_why *why)
{
	char spath[PATH_MAX];
	enum lf_err rc;

	memset(keys, 0, sizeof(*keys));
	*out = NULL;
	if (ratchet_path(ledger_path, spath, sizeof(spath)) < 0)
		return lf_fail(why, LF_IO, "ledger path %s is too long",
			       ledger_path);
	rc = ratchet_load(dirfd, spath, host_key, out, why);
	if (rc == LF_NOT_FOUND)
		return LF_OK;
	if (rc == LF_OK)
		ratchet_current_keys(*out, keys);
	return rc;
}

enum lf_err ratchet_load_check(struct ratchet *r, bool sealed,
			       unsigned long long rows,
			       const struct ratchet_walk *w, struct lf_why *why)
{
	if (sealed && !r)
		return lf_fail(
			why, LF_VERIFY,
			"the ledger is sealed but its seal key file is missing");
	if (!r)
		return LF_OK;
	if (!sealed && rows > 0)
		return lf_fail(why, LF_VERIFY,
			       "a seal key file beside a ledger without seals");
	return ratchet_resume(r, w, rows, why) == LF_OK ? LF_OK : LF_VERIFY;
}

int ratchet_row_fields(const struct ratchet *r, json_t *row, bool first)
{
	char fp[CHAIN_FP_LEN + 1];
	int set = 0;

	set |= json_object_set_new(row, "epoch",
				   json_integer((json_int_t)ratchet_epoch(r)));
	if (first) {
		chain_key_fingerprint(ratchet_key(r), CHAIN_KEY_BYTES, fp);
		set |= json_object_set_new(
			row, "epoch_rows",
			json_integer((json_int_t)ratchet_epoch_rows(r)));
		set |= json_object_set_new(row, "seal_fingerprint",
					   json_string(fp));
	}
	return set;
}
