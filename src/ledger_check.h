/* SPDX-License-Identifier: MIT */
/*
 * ledger_check.h - the state of one ledger scan and the checks of one
 * line (ledger_check.c), shared with the reading of the file
 * (ledger_verify.c); not for other modules.
 */
#ifndef LF_LEDGER_CHECK_H
#define LF_LEDGER_CHECK_H

#include "ledger.h"
#include "ledger_hashes.h"
#include "ledger_scan.h"

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
	bool closed; /* a case_closed row was taken: no row may follow */
	bool canon;  /* no key at all: check canonical form instead */
	unsigned long long signed_rows; /* ledger_reader: not those rows */
	struct ratchet_walk walk;
	struct chain_mac *mac; /* the key's pads, hashed once */
	/*
	 * For threads reading ahead, a sealed ledger's keys at hand: with
	 * RATCHET_KEYS_CURRENT they MAC the rows of epoch ahead_epoch only
	 * (under K(ahead_epoch)); with RATCHET_KEYS_ALL each row under
	 * K(its epoch), stepped from K0.  RATCHET_KEYS_NONE: not sealed.
	 */
	enum ratchet_keys_mode ahead_seal;
	unsigned long long ahead_epoch;
	/* The line being checked as read ahead (ledger_hashes.h), or NULL. */
	const struct ledger_prescan *ahead;
	const char *ahead_hex;
};

/* Is row r's canonical form to be checked (no key, no signed root)? */
static inline bool ledger_canon_due(const struct ledger_scan *st,
				    unsigned long long r)
{
	return st->canon && r > st->signed_rows;
}

/*
 * A line's members as a thread reading ahead found them
 * (ledger_hashes.h), and its MAC under the key the batch expected, when
 * there was one.
 */
struct ledger_prescan {
	/*
	 * First, in the cache line the reader reads: every check of the
	 * row that neither its epoch, its MAC nor the reader's state
	 * decides passed on this line and against the line before it in
	 * its chunk (members and shapes, the same case_id token as that
	 * line, prev its hash); what is left, already worked out: the row
	 * number, the epoch (has_epoch, and epoch_ok when it is canonical),
	 * whether its phase ends the epoch, and whether its MAC matched
	 * (mac_ok) under key.
	 */
	bool vouched, has_epoch, epoch_ok, ends_epoch, mac_done, mac_ok;
	bool closes; /* its phase is case_closed */
	unsigned long long row, epoch;
	unsigned char key[CHAIN_KEY_BYTES];
	struct ledger_fields f;
	const char *err;
	int rc;
	bool canonical; /* parsed, and in canonical form (keyless scans) */
	char mac[CHAIN_HEX_LEN + 1];
};

/*
 * A thread reading ahead works out one line into its slot (a struct
 * ledger_prescan): its members, its MAC under key when there is one, and
 * whether it vouches for the line; and the line's chain hash (a
 * ledger_hashes_prep of ledger_hashes.h; ctx is the scan).
 */
void ledger_prescan(void *slot, struct ledger_hashes_line *l,
		    const struct ledger_hashes_line *before,
		    const void *before_slot, const unsigned char *key,
		    struct ledger_hashes_thread *t, const void *ctx);

/*
 * Check the line s[0..n) at file offset off as the next row: its chain,
 * number, case, seal epoch and MAC, then hand it to the reader.  LF_OK,
 * or LF_VERIFY (LF_NOMEM, a reader's refusal) with why.
 */
enum lf_err ledger_check_line(struct ledger_scan *st, const char *s, size_t n,
			      long long off, struct lf_why *why);

/* Expect case_id in every row (and derive its key when there is one). */
enum lf_err ledger_expect_case(struct ledger_scan *st, const char *case_id,
			       struct lf_why *why);

#endif
