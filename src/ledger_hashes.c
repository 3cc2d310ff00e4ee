/* SPDX-License-Identifier: MIT */
/*
 * ledger_hashes.c - chain hashes of ledger lines computed ahead on helper
 * threads, so that `ledgerctl verify` hashes each line's chain link and
 * its MAC at the same time on two processors (ledgerctl(1) verify).
 * Helper k of H takes lines n - 1 - k, n - 1 - k - H, ... of a batch
 * of n; each line is claimed before it is worked on, so the reader, going
 * forward, does the lines no helper has taken yet itself, and waits only
 * for a line a helper is working on.
 */
#include "ledger_hashes.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static atomic_uint ledger_verify_threads = 1;

/* Below this many lines a batch is hashed in the reader's thread. */
#define LEDGER_HASHES_MIN_LINES 64

void ledger_verify_set_threads(unsigned n)
{
	if (n < 1)
		n = 1;
	if (n > LEDGER_HASHES_MAX_HELPERS + 1)
		n = LEDGER_HASHES_MAX_HELPERS + 1;
	atomic_store(&ledger_verify_threads, n);
}

int ledger_hashes_init(struct ledger_hashes *hs, ledger_hashes_prep prep,
		       size_t slot_size)
{
	memset(hs, 0, sizeof(*hs));
	/* A process that verifies on one thread needs no batch memory. */
	hs->line = &hs->one;
	hs->cap = 1;
	if (atomic_load(&ledger_verify_threads) < 2)
		return 0;
	hs->cap = LEDGER_HASHES_BATCH;
	hs->prep = prep;
	hs->slot_size = prep ? slot_size : 0;
	hs->line = malloc(LEDGER_HASHES_BATCH * sizeof(*hs->line));
	if (hs->slot_size)
		hs->slots = malloc(LEDGER_HASHES_BATCH * hs->slot_size);
	hs->mac = chain_mac_new();
	if (!hs->line || (hs->slot_size && !hs->slots) || !hs->mac) {
		ledger_hashes_free(hs);
		return -1;
	}
	return 0;
}

void ledger_hashes_free(struct ledger_hashes *hs)
{
	ledger_hashes_end(hs);
	if (hs->line != &hs->one)
		free(hs->line);
	free(hs->slots);
	chain_mac_free(hs->mac);
	hs->mac = NULL;
	explicit_bzero(hs->key, sizeof(hs->key));
	hs->line = NULL;
	hs->slots = NULL;
}

/* Work out line i, if nobody has claimed it.  1 when this thread did. */
static int ledger_hashes_do(struct ledger_hashes *hs, size_t i,
			    struct chain_mac *m)
{
	struct ledger_hashes_line *l = &hs->line[i];
	int free_state = LEDGER_LINE_FREE;

	if (!atomic_compare_exchange_strong_explicit(
		    &l->state, &free_state, LEDGER_LINE_TAKEN,
		    memory_order_acquire, memory_order_relaxed))
		return 0;
	if (hs->prep)
		hs->prep(hs->slots + i * hs->slot_size, l->s, l->n,
			 hs->keyed && m ? hs->key : NULL, m, hs->prep_ctx);
	chain_sha256_hex(l->s, l->n, l->hex);
	atomic_store_explicit(&l->state, LEDGER_LINE_DONE,
			      memory_order_release);
	return 1;
}

/*
 * Helpers work from the end of the batch towards the reader, who works
 * from its start: they meet once, instead of the reader catching up with
 * a helper line after line.  A line already claimed was claimed by the
 * reader (the stripes are disjoint), and so was every line before it.
 */
static void *ledger_hashes_run(void *arg)
{
	struct ledger_hashes_helper *h = arg;
	struct ledger_hashes *hs = h->hs;
	struct chain_mac *m = hs->keyed ? chain_mac_new() : NULL;
	size_t k;

	for (k = h->idx; k < hs->n; k += hs->helpers) {
		if (atomic_load_explicit(&hs->stop, memory_order_relaxed) ||
		    !ledger_hashes_do(hs, hs->n - 1 - k, m))
			break;
	}
	chain_mac_free(m);
	return NULL;
}

void ledger_hashes_set_key(struct ledger_hashes *hs, const unsigned char *key)
{
	hs->keyed = key != NULL;
	if (key)
		memcpy(hs->key, key, CHAIN_KEY_BYTES);
}

size_t ledger_hashes_start(struct ledger_hashes *hs, const char *p,
			   const char *q, const char *end)
{
	unsigned want = atomic_load(&ledger_verify_threads) - 1, i;
	const char *nl;

	hs->n = 0;
	hs->next = 0;
	hs->helpers = 0;
	while (hs->n < hs->cap && (nl = memchr(q, '\n', (size_t)(end - q)))) {
		hs->line[hs->n].s = p;
		hs->line[hs->n].n = (size_t)(nl - p);
		atomic_store_explicit(&hs->line[hs->n].state, LEDGER_LINE_FREE,
				      memory_order_relaxed);
		hs->n++;
		p = q = nl + 1;
	}
	if (want == 0 || !hs->line || hs->n < LEDGER_HASHES_MIN_LINES)
		return hs->n;
	atomic_store(&hs->stop, 0);
	for (i = 0; i < want; i++) {
		struct ledger_hashes_helper *h = &hs->h[i];

		h->hs = hs;
		h->idx = i;
		h->running = 0;
	}
	/* helpers is read by the threads: set it before any starts. */
	hs->helpers = want;
	for (i = 0; i < want; i++) {
		if (pthread_create(&hs->h[i].tid, NULL, ledger_hashes_run,
				   &hs->h[i]) != 0)
			break;
		hs->h[i].running = 1;
	}
	if (i < want) {
		/* No thread for every stripe: hash the batch here instead. */
		ledger_hashes_end(hs);
		hs->helpers = 0;
	}
	return hs->n;
}

/* Line i done: by this thread if no helper has taken it, else awaited. */
static void ledger_hashes_wait(struct ledger_hashes *hs, size_t i)
{
	size_t spins = 0;

	if (ledger_hashes_do(hs, i, hs->mac))
		return;
	while (atomic_load_explicit(&hs->line[i].state, memory_order_acquire) !=
	       LEDGER_LINE_DONE) {
		if (++spins > 64)
			sched_yield();
	}
}

const void *ledger_hashes_slot(struct ledger_hashes *hs, const char *s)
{
	size_t i = hs->next;

	if (!hs->helpers || !hs->slots || i >= hs->n || hs->line[i].s != s)
		return NULL;
	ledger_hashes_wait(hs, i);
	return hs->slots + i * hs->slot_size;
}

void ledger_hashes_next(struct ledger_hashes *hs, const char *s, size_t n,
			char out[CHAIN_HEX_LEN + 1])
{
	size_t i = hs->next++;

	if (!hs->helpers || i >= hs->n || hs->line[i].s != s) {
		chain_sha256_hex(s, n, out);
		return;
	}
	ledger_hashes_wait(hs, i);
	memcpy(out, hs->line[i].hex, CHAIN_HEX_LEN + 1);
}

void ledger_hashes_end(struct ledger_hashes *hs)
{
	unsigned i;

	atomic_store(&hs->stop, 1);
	for (i = 0; i < hs->helpers; i++)
		if (hs->h[i].running) {
			pthread_join(hs->h[i].tid, NULL);
			hs->h[i].running = 0;
		}
	hs->helpers = 0;
}
