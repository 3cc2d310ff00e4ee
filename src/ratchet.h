/* SPDX-License-Identifier: MIT */
/*
 * ratchet.h - forward-secure seals (ledgerfs-ledger(5) SEALS): a case's
 * MAC key K(e) evolves one way, K(e+1) = HMAC(K(e), "ledgerfs-ratchet"),
 * at each epoch; only the current key is kept, in the case's seal key
 * file, so whoever takes the host later cannot re-seal an earlier epoch.
 */
#ifndef LF_RATCHET_H
#define LF_RATCHET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "chain.h"
#include "err.h"

/* Rows in an epoch unless a turn or case_closed row ends it sooner. */
#define RATCHET_EPOCH_ROWS 1024

/* The seal key file's name: the ledger's path with this suffix. */
#define RATCHET_FILE_SUFFIX ".seal"

/* The label of one ratchet step. */
#define RATCHET_LABEL "ledgerfs-ratchet"

/* K(e+1) from K(e).  in and out may be the same buffer. */
void ratchet_step(const unsigned char in[CHAIN_KEY_BYTES],
		  unsigned char out[CHAIN_KEY_BYTES]);

/* Keys a verifier holds for a sealed ledger. */
enum ratchet_keys_mode {
	RATCHET_KEYS_NONE,    /* no seal key: chain and canonical form only */
	RATCHET_KEYS_CURRENT, /* K(epoch) from the seal key file */
	RATCHET_KEYS_ALL      /* K0 from the handout: every epoch */
};

struct ratchet_keys {
	enum ratchet_keys_mode mode;
	unsigned long long epoch; /* CURRENT: the key's epoch; ALL: 0 */
	unsigned char key[CHAIN_KEY_BYTES];
};

/*
 * A verifier's walk along a sealed ledger: which epoch each row must
 * carry, and with which key (if any) its MAC is checked.
 */
struct ratchet_walk {
	struct ratchet_keys keys;
	unsigned long long epoch_rows;	    /* N, from row 1 */
	unsigned long long epoch;	    /* the epoch of the next row */
	unsigned long long rows_in_epoch;   /* rows of `epoch` so far */
	unsigned long long mac_rows;	    /* rows whose MAC was checked */
	unsigned char key[CHAIN_KEY_BYTES]; /* K(epoch) when known */
	bool key_known;
};

/* Start a walk with the keys held (NULL: none). */
void ratchet_walk_init(struct ratchet_walk *w, const struct ratchet_keys *k);

/*
 * Row r of a sealed ledger claims epoch `claimed`.  On LF_OK, *mac_key is
 * the key to check its MAC with, or NULL when the keys held cannot.
 */
enum lf_err ratchet_walk_row(struct ratchet_walk *w, unsigned long long r,
			     unsigned long long claimed,
			     const unsigned char **mac_key, struct lf_why *why);

/* Row 1 (its line) of a sealed ledger: take its epoch_rows, N. */
enum lf_err ratchet_walk_begin(struct ratchet_walk *w, const char *row1,
			       size_t n, struct lf_why *why);

/* An epoch's JSON number token, canonical (0, or no leading zero). */
bool ratchet_epoch_parse(const char *tok, size_t n, unsigned long long *v);

/* ratchet_walk_row with the epoch as its JSON number token. */
enum lf_err ratchet_walk_epoch(struct ratchet_walk *w, unsigned long long r,
			       const char *tok, size_t n,
			       const unsigned char **mac_key,
			       struct lf_why *why);

/* Row r verified: count it; a turn/case_closed row or the N-th ends it. */
void ratchet_walk_done(struct ratchet_walk *w, const char *phase_tok,
		       size_t phase_len);
/* Does a row of this phase (its JSON string token) end its epoch? */
bool ratchet_phase_ends_epoch(const char *phase_tok, size_t phase_len);
/* ratchet_walk_done with that answer already known. */
void ratchet_walk_done_ends(struct ratchet_walk *w, bool ends);

void ratchet_walk_wipe(struct ratchet_walk *w);

/* The daemon's side: the seal key file of one ledger. */
struct ratchet;

/*
 * A new seal for a new ledger: K0 from the kernel, the file dirfd/path
 * created (O_EXCL, 0600) holding K0 wrapped with the host key, flushed
 * with its folder.  epoch_rows: N (row 1 records it).
 */
enum lf_err ratchet_create(int dirfd, const char *path,
			   const unsigned char host_key[CHAIN_KEY_BYTES],
			   unsigned long long epoch_rows, struct ratchet **out,
			   struct lf_why *why);

/*
 * Read dirfd/path: the newest whole slot (the other is wiped).
 * LF_NOT_FOUND when there is no such file.
 */
enum lf_err ratchet_load(int dirfd, const char *path,
			 const unsigned char host_key[CHAIN_KEY_BYTES],
			 struct ratchet **out, struct lf_why *why);

/* The same, for a verifier: read-only, no clean-up, no handle kept. */
enum lf_err ratchet_read_keys(int dirfd, const char *path,
			      const unsigned char host_key[CHAIN_KEY_BYTES],
			      struct ratchet_keys *out, struct lf_why *why);

/*
 * Close the file and open it again, as base_fd/path, only to update it
 * (a ratchet, a hand-out): an open case then holds one descriptor, its
 * ledger, not two (ledgerfs(8) LIMITS).  base_fd must outlive r.
 */
void ratchet_park(struct ratchet *r, int base_fd, const char *path);

unsigned long long ratchet_epoch(const struct ratchet *r);
const unsigned char *ratchet_key(const struct ratchet *r);
unsigned long long ratchet_epoch_rows(const struct ratchet *r);

/* The stored key as a verifier's CURRENT keys. */
void ratchet_current_keys(const struct ratchet *r, struct ratchet_keys *out);

/*
 * At load, after the ledger's walk under the stored key: the stored key
 * must be the next row's epoch, or one behind when the last row ended
 * its epoch and the daemon died before the ratchet (then it ratchets).
 */
enum lf_err ratchet_resume(struct ratchet *r, const struct ratchet_walk *w,
			   unsigned long long rows, struct lf_why *why);

/*
 * A row of the current epoch is durable: count it, and when it ends the
 * epoch, ratchet: K(e+1) written to the other slot and flushed, the old
 * slot overwritten with zeros and flushed, the old key wiped.
 */
enum lf_err ratchet_row_written(struct ratchet *r, const char *phase,
				struct lf_why *why);

/* Does a row of this phase, appended next, end the current epoch? */
bool ratchet_row_ends_epoch(const struct ratchet *r, const char *phase);

/*
 * Hand out K0, once: only in epoch 0 and only if never handed out; the
 * "handed out" mark is durable before the key is given.
 */
enum lf_err ratchet_handout(struct ratchet *r,
			    unsigned char k0[CHAIN_KEY_BYTES],
			    struct lf_why *why);

void ratchet_free(struct ratchet *r);

/* What a ledger asks of its seal, the key file beside it at PATH.seal: */

/* Create it for a new ledger (ratchet_create). */
enum lf_err ratchet_beside_create(int dirfd, const char *ledger_path,
				  const unsigned char host_key[CHAIN_KEY_BYTES],
				  unsigned long long epoch_rows,
				  struct ratchet **out, struct lf_why *why);

/* Load it when there is one (*out NULL when not), and its keys. */
enum lf_err ratchet_beside_load(int dirfd, const char *ledger_path,
				const unsigned char host_key[CHAIN_KEY_BYTES],
				struct ratchet **out, struct ratchet_keys *keys,
				struct lf_why *why);

/* ratchet_park for the seal key file of base_fd/ledger_path. */
void ratchet_beside_park(struct ratchet *r, int base_fd,
			 const char *ledger_path);

/*
 * After the ledger's walk at load: a sealed ledger needs its key file, a
 * key file needs a sealed ledger, and the ratchet resumes (ratchet_resume).
 */
enum lf_err ratchet_load_check(struct ratchet *r, bool sealed,
			       unsigned long long rows,
			       const struct ratchet_walk *w,
			       struct lf_why *why);

/* A row's seal members: epoch; in row 1 (first) epoch_rows and K0's
 * fingerprint.  Nonzero when out of memory. */
int ratchet_row_fields(const struct ratchet *r, json_t *row, bool first);

#endif
