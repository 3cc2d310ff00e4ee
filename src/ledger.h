/* SPDX-License-Identifier: MIT */
/*
 * ledger.h - one case's ledger: compact, key-sorted JSON rows, each
 * chained to the previous line by SHA-256 and MACed with the key of its
 * epoch, or the case key in a ledger without seals (ledgerfs-ledger(5)
 * ROWS, SEALS).  An append returns only after fdatasync
 * succeeded (ledgerfs-ledger(5) DESCRIPTION).
 */
#ifndef LF_LEDGER_H
#define LF_LEDGER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "chain.h"
#include "commit.h"
#include "err.h"
#include "ratchet.h"

/* A row's bytes at most: written, read back, or journaled. */
#define LEDGER_MAX_LINE ((size_t)64 << 20)

/* Write all n bytes: at off, or at the file position when off < 0. */
int ledger_put(int fd, const void *data, size_t n, long long off);
/* Read all n bytes: at off, or at the file position when off < 0.  0,
 * or -1 with errno set (EIO where the file ends first). */
int ledger_get(int fd, void *data, size_t n, long long off);

struct ledger;

struct ledger_head {
	unsigned long long rows;
	char head[CHAIN_HEX_LEN +
		  1]; /* SHA-256 of the last line; zeros if none */
};

/* What a scan found.  bad_row is 1-based, 0 when every row is good. */
struct ledger_report {
	struct ledger_head head; /* of the good prefix */
	long long good_bytes;	 /* length of the good prefix */
	long long file_bytes;
	unsigned long long bad_row;
	bool torn;	   /* the only fault is a final line without newline */
	bool macs_checked; /* every row's MAC was checked */
	bool sealed;	   /* forward-secure seals (ledgerfs-ledger(5) SEALS) */
	/* Epochs seen and MACs checked (keys wiped). */
	struct ratchet_walk walk;
};

/*
 * Called for each good row in order.  row is borrowed; offset/len locate
 * the line (without newline) in the file.  Return 0 to go on; anything
 * else stops the scan and is returned as the scan's result.
 */
typedef int (*ledger_row_cb)(void *ctx, const json_t *row, long long offset,
			     size_t len);

/*
 * Who reads a scan's rows.  members, when not NULL, is a NULL-terminated
 * list of top-level member names: a row the scan vouches for with a key
 * (its MAC; a row of an epoch no key held reaches, the chain to the rows
 * after it, and a scan that fails there fails the whole read) then
 * reaches cb holding only those members, each parsed alone from the
 * line.  A
 * daemon starting needs a dozen small members of rows whose arguments
 * and results are most of their bytes (ledgerfs(8) RESTART).  Rows
 * checked by their canonical form alone are parsed whole.
 */
struct ledger_reader {
	ledger_row_cb cb;
	void *ctx;
	const char *const *members;
	/*
	 * Not NULL: true once cb has read a row that no row may follow
	 * (case_closed).  A torn tail after it is no append a crash cut
	 * short, so ledger_open then cuts nothing and fails (LF_VERIFY).
	 */
	const bool *ended;
	/*
	 * Public verification (ledgerfs-ledger(5) PUBLIC VERIFICATION): rows
	 * 1..signed_rows are the leaves of a signed tree root checked after
	 * the scan, which fixes their bytes as a MAC would, so a scan with
	 * no key does not check their canonical form.
	 */
	unsigned long long signed_rows;
};

/*
 * Verify a ledger read from fd (from offset 0).  case_id: the expected
 * case (NULL: take it from row 1).  host_key: NULL to check the chain,
 * row numbers and canonical form only.  Returns LF_OK when everything
 * verifies, else LF_VERIFY with rep->bad_row and why ("row 7: prev does
 * not match row 6"), or LF_IO.  A torn tail is LF_VERIFY with rep->torn.
 */
enum lf_err ledger_verify_fd(int fd, const char *case_id,
			     const unsigned char *host_key, ledger_row_cb cb,
			     void *ctx, struct ledger_report *rep,
			     struct lf_why *why);

/*
 * The same, with the seal keys held for a sealed ledger (NULL: none):
 * K(e) from the seal key file checks the rows of epoch e, K0 checks every
 * row.  With no key at all, rows are checked for canonical form instead.
 */
enum lf_err ledger_verify_sealed(int fd, const char *case_id,
				 const unsigned char *host_key,
				 const struct ratchet_keys *seal,
				 ledger_row_cb cb, void *ctx,
				 struct ledger_report *rep, struct lf_why *why);

/* The same, the rows read by rd (NULL: none). */
enum lf_err ledger_verify_read(int fd, const char *case_id,
			       const unsigned char *host_key,
			       const struct ratchet_keys *seal,
			       const struct ledger_reader *rd,
			       struct ledger_report *rep, struct lf_why *why);

/*
 * Open dirfd/path for appending.  create: make a new, empty ledger
 * (O_EXCL; the folder is fsync'd).  Otherwise the ledger is verified
 * with the key (rd, when not NULL, reads every good row); a torn tail is cut (ftruncate +
 * fdatasync) and a `recovered` row recording the bytes cut and their
 * SHA-256 is appended, the repair journaled in path.repair first so a
 * kill at any point is finished by the next open; any other fault is
 * LF_VERIFY and nothing changes.
 */
enum lf_err ledger_open(int dirfd, const char *path, const char *case_id,
			const unsigned char host_key[CHAIN_KEY_BYTES],
			bool create, const struct ledger_reader *rd,
			struct ledger **out, struct lf_why *why);

/*
 * Seal a new, empty ledger (ledgerfs-ledger(5) SEALS): K0 from the
 * kernel, kept in dirfd/path.seal; rows are MACed with K(epoch) from
 * here on.  epoch_rows: N (RATCHET_EPOCH_ROWS in the daemon).
 */
enum lf_err ledger_seal_start(struct ledger *l, int dirfd, const char *path,
			      const unsigned char host_key[CHAIN_KEY_BYTES],
			      unsigned long long epoch_rows,
			      struct lf_why *why);

/*
 * Keep the seal key file closed between updates, reopened as
 * base_fd/path.seal (ratchet_park); base_fd must outlive l.
 */
void ledger_seal_park(struct ledger *l, int base_fd, const char *path);

/* K0 of a sealed ledger, once, during epoch 0 (ratchet_handout). */
enum lf_err ledger_seal_handout(struct ledger *l,
				unsigned char k0[CHAIN_KEY_BYTES],
				struct lf_why *why);

/*
 * For a case loaded as failed: a ledger that refuses every append and
 * serves only the prefix of dirfd/path that verifies (nothing when the
 * file cannot be opened).  NULL only when out of memory.
 */
struct ledger *
ledger_open_failed(int dirfd, const char *path, const char *case_id,
		   const unsigned char host_key[CHAIN_KEY_BYTES]);

/*
 * Append row (borrowed; this sets case_id, row, time, prev and mac on it)
 * as one line, then fdatasync (or its group's flush).  offset/len (may be NULL) receive where the
 * line landed.  Not thread-safe: the caller holds the case lock.  After
 * any failure the ledger refuses every later append (LF_IO): a failed
 * flush may have dropped data, so it is never retried.
 */
enum lf_err ledger_append(struct ledger *l, json_t *row, long long *offset,
			  size_t *len, struct lf_why *why);

/*
 * Make later appends durable through group g (borrowed; NULL: each append
 * its own fdatasync).  Under the case lock, like ledger_append.
 */
void ledger_set_commit(struct ledger *l, struct commit_group *g);

/*
 * Grow ledgers opened from now on into zeros written ahead, bytes at a
 * time (0: off, the default), so a row's flush overwrites bytes already
 * on disk (ledgerfs-ledger(5) PADDING).  Set once, before serving.
 */
void ledger_set_padding(long long bytes);

void ledger_get_head(const struct ledger *l, struct ledger_head *out);

/* Read back and parse the row at offset/len.  New reference or NULL. */
json_t *ledger_read_row(const struct ledger *l, long long offset, size_t len);
/* Only the named top-level members (a NULL-terminated list) of the row at
 * offset, each parsed alone (ledger_scan_members): for a row this ledger
 * wrote, where the rest of it (a call's arguments) is not needed.  A new
 * reference, or NULL. */
json_t *ledger_read_members(const struct ledger *l, long long offset,
			    size_t len, const char *const *members);

/* The file descriptor (read-only use: pread for serving `ledger`). */
int ledger_fd(const struct ledger *l);

/* Has an append failed (so every later one is refused)? */
bool ledger_broken(const struct ledger *l);

/*
 * Deferred rows (defer.h): an append made while a deferral is open on the
 * thread returns before its row is durable, with the ledger's state (its
 * size, head, tree) already past it.  Until ledger_unsettled is false
 * nothing may show that state: the case lock waits for it
 * (case_int.h, case_lock).  ledger_settle waits, leading the flush when
 * none runs (the case lock may be held: a flush takes none).
 * ledger_flush_error: the
 * first error of a deferred row's flush (then ledger_broken), or 0.
 */
bool ledger_unsettled(struct ledger *l);
void ledger_settle(struct ledger *l);
int ledger_flush_error(const struct ledger *l);

/* Where this ledger's own durable rows end (bytes).  Under the case lock. */
long long ledger_size(const struct ledger *l);

/*
 * The Merkle tree of the rows appended since open or since the last
 * ledger_set_tree (case_ckpt.c rebuilds it from the file at load).
 */
struct merkle_range;
const struct merkle_range *ledger_tree(const struct ledger *l);
void ledger_set_tree(struct ledger *l, const struct merkle_range *r);

void ledger_close(struct ledger *l);

/*
 * The canonical line of a row: compact, keys sorted.  malloc'd string.
 * Shared by append and verify so both serialize the same way.
 */
char *ledger_canonical(const json_t *row);

/* RFC 3339 UTC with microseconds, e.g. 2026-11-30T06:43:31.123456Z. */
void ledger_now(char out[32]);

/* fsync the folder that holds dirfd/path, so a new name in it is
 * durable.  0, or -1 with errno set. */
int ledger_sync_parent(int dirfd, const char *path);

#endif
