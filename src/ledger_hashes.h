/* SPDX-License-Identifier: MIT */
/*
 * ledger_hashes.h - the chain hashes of a batch of ledger lines, and
 * whatever else a reader works out of a line alone (its members' places),
 * computed ahead on helper threads while the reader checks the lines in
 * order (ledgerctl(1) verify).  Neither depends on a key or an earlier
 * row, so they can be computed out of order; every check that does
 * stays in the reader's thread.
 */
#ifndef LF_LEDGER_HASHES_H
#define LF_LEDGER_HASHES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "chain.h"

#define LEDGER_HASHES_BATCH	  4096 /* lines a batch */
#define LEDGER_HASHES_MAX_HELPERS 7

/* A line's states: nobody on it, a thread working on it, done. */
enum { LEDGER_LINE_FREE, LEDGER_LINE_TAKEN, LEDGER_LINE_DONE };

struct ledger_hashes_line {
	const char *s;
	size_t n;
	atomic_int state;
	char hex[CHAIN_HEX_LEN + 1]; /* its chain hash */
};

/*
 * What a helper works out of one line besides its hash, into slot: key
 * (NULL: none yet) is the batch's guess of the MAC key, m a MAC context
 * of the calling thread's own, ctx the reader's prep_ctx (read only).
 */
typedef void (*ledger_hashes_prep)(void *slot, const char *s, size_t n,
				   const unsigned char *key,
				   struct chain_mac *m, const void *ctx);

struct ledger_hashes;

struct ledger_hashes_helper {
	struct ledger_hashes *hs;
	unsigned idx;
	pthread_t tid;
	int running;
};

struct ledger_hashes {
	struct ledger_hashes_line *line; /* cap entries */
	struct ledger_hashes_line one;	 /* the line of a one-thread batch */
	size_t cap;
	unsigned char *slots; /* as many slots of slot_size */
	size_t slot_size;
	ledger_hashes_prep prep;
	const void *prep_ctx; /* handed to prep; not changed during a scan */
	unsigned char key[CHAIN_KEY_BYTES]; /* the batch's guess of the key */
	int keyed;
	struct chain_mac *mac; /* the reader's */
	size_t n, next;	       /* lines in the batch; next to get */
	unsigned helpers;      /* started for this batch */
	atomic_int stop;
	struct ledger_hashes_helper h[LEDGER_HASHES_MAX_HELPERS];
};

/*
 * Threads used by ledger_verify_fd (ledger.h) in this process: 1 (the
 * default) hashes in the reader's thread; n > 1 adds n - 1 helpers.
 */
void ledger_verify_set_threads(unsigned n);

/*
 * Set up / free an empty batch; prep (may be NULL) runs on each line
 * before its hash.  Init: 0, or -1 when out of memory.
 */
int ledger_hashes_init(struct ledger_hashes *hs, ledger_hashes_prep prep,
		       size_t slot_size);
void ledger_hashes_free(struct ledger_hashes *hs);

/*
 * The MAC key the next batches' lines are likely to need (NULL: none);
 * prep's MAC under it is used only when the reader's key is the same.
 * Between batches only.
 */
void ledger_hashes_set_key(struct ledger_hashes *hs, const unsigned char *key);

/*
 * Start a batch: up to LEDGER_HASHES_BATCH complete lines (ending in
 * '\n') from p, the first newline searched for from q (p <= q <= end).
 * Returns the number of lines; the helpers, if any, start hashing them.
 */
size_t ledger_hashes_start(struct ledger_hashes *hs, const char *p,
			   const char *q, const char *end);

/* Line i of the batch (its bytes without the newline). */
static inline const struct ledger_hashes_line *
ledger_hashes_line(const struct ledger_hashes *hs, size_t i)
{
	return &hs->line[i];
}

/*
 * The prep slot of the next line, once a helper has filled it; NULL when
 * no helper runs for it (s: that line, to make sure).
 */
const void *ledger_hashes_slot(struct ledger_hashes *hs, const char *s);

/*
 * The hex chain hash of the next line of the batch (s, n: that line,
 * hashed here when no batch is running).
 */
void ledger_hashes_next(struct ledger_hashes *hs, const char *s, size_t n,
			char out[CHAIN_HEX_LEN + 1]);

/* End the batch: the helpers stop and are joined. */
void ledger_hashes_end(struct ledger_hashes *hs);

#endif
