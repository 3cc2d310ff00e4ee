/* SPDX-License-Identifier: MIT */
/*
 * ledger_hashes.h - a ledger read ahead in chunks on several threads:
 * each chunk's lines, their chain hashes, and whatever else a reader
 * works out of a line alone (its members' places, its MAC under a
 * guessed key, its checks against the line before it in the same
 * chunk), while the reader checks the lines in order (ledgerctl(1)
 * verify).  None of that depends on an earlier chunk, so chunks can be
 * worked out in any order and on any thread; every check that depends
 * on the reader's state (the row number, the case, the key, whether the
 * line before was taken) stays with the reader.
 *
 * Chunk k holds the lines that start in [k * C, (k + 1) * C) of the
 * file as it was when reading began (C: ledger_hashes_set_chunk).  A
 * line that does not end before that size, or that is longer than a
 * row may be, is left out, and so is every chunk after a chunk that
 * could not be read: the reader goes on from the end of the last line
 * it checked, one line at a time, as it does for a small ledger.
 */
#ifndef LF_LEDGER_HASHES_H
#define LF_LEDGER_HASHES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "chain.h"

#define LEDGER_HASHES_MAX_THREADS 8

struct ledger_hashes_line {
	const char *s; /* its bytes, without the newline */
	size_t n;
	long long off;		     /* its offset in the file */
	char hex[CHAIN_HEX_LEN + 1]; /* its chain hash */
};

/*
 * What a thread works out of line l, into slot, and l's hash into
 * l->hex (with a MAC of the line, chain_sha256_mac2_hex makes both at
 * once): key (NULL: none) is the guess of the MAC key, t the calling
 * thread's own state, ctx the reader's (read only).  before: the line
 * before it in the same chunk, already worked out (its slot beside it),
 * or NULL for a chunk's first line.
 */
struct ledger_hashes_line;
struct ledger_hashes_thread;
typedef void (*ledger_hashes_prep)(void *slot, struct ledger_hashes_line *l,
				   const struct ledger_hashes_line *before,
				   const void *before_slot,
				   const unsigned char *key,
				   struct ledger_hashes_thread *t,
				   const void *ctx);

/* What one thread keeps from line to line, the reader's too. */
struct ledger_hashes_thread {
	struct chain_mac *mac; /* its MAC context; NULL without a key */
	/*
	 * The prep's own: a key it derived last (a sealed ledger's K(e),
	 * stepped forward from key), and how many more steps it may take.
	 */
	unsigned char key[CHAIN_KEY_BYTES];
	unsigned long long epoch, budget;
	bool key_known;
};

/* A chunk's states. */
enum { LEDGER_CHUNK_FREE, LEDGER_CHUNK_TAKEN, LEDGER_CHUNK_READY };

struct ledger_hashes_chunk {
	size_t k; /* which chunk of the file */
	int state;
	bool failed;  /* a read failed: nothing after it is read ahead */
	long long at; /* file offset of buf[0] */
	char *buf;    /* the bytes read */
	size_t len, cap;
	struct ledger_hashes_line *line; /* its complete lines */
	size_t n, line_cap;
	unsigned char *slots; /* line_cap slots of prep */
};

struct ledger_hashes {
	int fd;
	long long size;	  /* the file's size when reading began */
	size_t chunk;	  /* C */
	size_t nchunks;	  /* chunks of that size */
	size_t claimed;	  /* chunks a thread has taken */
	size_t done;	  /* chunks the reader has checked and given back */
	unsigned nslots;  /* chunks read ahead at most */
	unsigned helpers; /* threads started */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid[LEDGER_HASHES_MAX_THREADS];
	struct ledger_hashes_chunk ring[2 * LEDGER_HASHES_MAX_THREADS];
	ledger_hashes_prep prep;
	size_t slot_size;
	const void *prep_ctx;
	const unsigned char *key; /* the guess of the MAC key, or NULL */
	struct ledger_hashes_thread reader;
};

/*
 * Threads used by ledger_verify_fd (ledger.h) in this process: 1 (the
 * default) reads in the reader's thread alone; n > 1 adds n - 1 helpers.
 */
void ledger_verify_set_threads(unsigned n);

/* C, for tests (default 128 KiB; at least 4 KiB). */
void ledger_hashes_set_chunk(size_t bytes);

/*
 * Is fd worth reading ahead: more than one thread set, and a regular file
 * of at least two chunks?  *size (may be NULL): its size now.
 */
bool ledger_hashes_worth(int fd, long long *size);

/*
 * Start reading fd ahead, its size taken now; key (may be NULL) must
 * stay valid until ledger_hashes_stop.  1 when started, 0 when the file
 * is too small or one thread is set (nothing to free), -1 when out of
 * memory or no thread starts.
 */
int ledger_hashes_start(struct ledger_hashes *hs, int fd,
			ledger_hashes_prep prep, size_t slot_size,
			const void *ctx, const unsigned char *key);

/*
 * The next chunk in the file's order, worked out (by this thread if
 * nobody has taken it), whose first line starts at expect; NULL when
 * none is left to read ahead.  Chunks without lines are passed over.
 */
const struct ledger_hashes_chunk *ledger_hashes_take(struct ledger_hashes *hs,
						     long long expect);

/* Slot i of a chunk taken. */
static inline const void *
ledger_hashes_slot(const struct ledger_hashes *hs,
		   const struct ledger_hashes_chunk *c, size_t i)
{
	return c->slots + i * hs->slot_size;
}

/* Done with the chunk ledger_hashes_take gave. */
void ledger_hashes_give_back(struct ledger_hashes *hs,
			     const struct ledger_hashes_chunk *c);

/* Stop the helpers, join them, free the chunks. */
void ledger_hashes_stop(struct ledger_hashes *hs);

#endif
