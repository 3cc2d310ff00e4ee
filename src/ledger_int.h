/* SPDX-License-Identifier: MIT */
/*
 * ledger_int.h - what ledger.c (appending) and ledger_repair.c (the
 * torn-tail repair at open) share; not for other modules.
 */
#ifndef LF_LEDGER_INT_H
#define LF_LEDGER_INT_H

#include <stdatomic.h>

#include "ledger.h"
#include "merkle.h"

struct ledger {
	int fd;
	char *case_id;
	unsigned char case_key[CHAIN_KEY_BYTES];
	struct ledger_head head;
	long long size;	      /* where the next line lands */
	bool broken;	      /* a write or flush failed: refuse every append */
	atomic_int failed;    /* a deferred row's flush error (defer.h) */
	atomic_int unsettled; /* deferred rows not yet told (futex word) */
	struct commit_group *commit; /* borrowed; NULL: own fdatasync */
	struct merkle_range tree;    /* of the rows (ledgerfs-ledger(5) TREE) */
	struct ratchet *seal; /* NULL: a ledger without seals (case key) */
	bool padded;	      /* rows go at size, over zeros */
	long long end;	      /* the file's size when padded */
};

/* A deferred row being flushed: its write's deferral and its ledger. */
struct ledger_told {
	struct lf_defer *d;
	struct ledger *l;
};

/*
 * Torn-tail repair is journaled (ledgerfs-ledger(5), RECOVERY): the note's
 * fields are written to PATH.repair and made durable before the cut, so
 * a kill at any point leaves either the torn tail or the journal, and the
 * next open finishes the repair with the same note.
 */
struct ledger_repair {
	long long good_bytes, cut_bytes;
	char cut_sha256[CHAIN_HEX_LEN + 1];
};

#define LEDGER_REPAIR_SUFFIX ".repair"

/* Write all n bytes at the file position.  0, or -1 with errno set. */
int ledger_write_all(int fd, const char *buf, size_t n);

/* PATH.repair into out.  0, or -1 (ENAMETOOLONG). */
int ledger_repair_path(const char *path, char *out, size_t size);
/* 1 when a well-formed journal was read, 0 when none (or a torn one). */
int ledger_repair_read(int dirfd, const char *jpath, struct ledger_repair *j);
/* Cut the torn tail that rep found and append the `recovered` row. */
enum lf_err ledger_recover(struct ledger *l, int dirfd, const char *jpath,
			   const struct ledger_report *rep,
			   const struct ledger_repair *journal,
			   ledger_row_cb cb, void *ctx, struct lf_why *why);
/* A whole ledger with a journal left over: finish the repair it names. */
enum lf_err ledger_repair_finish(struct ledger *l, int dirfd, const char *jpath,
				 const struct ledger_repair *j,
				 ledger_row_cb cb, void *ctx,
				 struct lf_why *why);

#endif
