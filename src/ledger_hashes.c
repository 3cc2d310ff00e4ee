/* SPDX-License-Identifier: MIT */
/*
 * ledger_hashes.c - a ledger read ahead in chunks (see ledger_hashes.h).
 *
 * Every thread, the reader's too, takes the next chunk nobody has taken,
 * reads it with its own pread, splits it into lines and works each line
 * out.  The reader takes the chunks back in the file's order; while the
 * one it needs is still being worked out by a helper, it works out a
 * later one itself instead of waiting.  At most two chunks a thread are
 * read ahead, so memory stays a few megabytes whatever the ledger's size.
 * Nothing is shared between threads while a chunk is worked out: no
 * thread waits on another except for a whole chunk.
 */
#include "ledger_hashes.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ledger.h"

static atomic_uint ledger_verify_threads = 1;
static atomic_size_t ledger_chunk_bytes = (size_t)128 << 10;

void ledger_verify_set_threads(unsigned n)
{
	if (n < 1)
		n = 1;
	if (n > LEDGER_HASHES_MAX_THREADS)
		n = LEDGER_HASHES_MAX_THREADS;
	atomic_store(&ledger_verify_threads, n);
}

void ledger_hashes_set_chunk(size_t bytes)
{
	atomic_store(&ledger_chunk_bytes, bytes < 4096 ? 4096 : bytes);
}

/*
 * Read up to want more bytes after what c holds, never past the size
 * reading began with.  0, or -1 when a read fails or the file has
 * shrunk (the reader, going on alone, says which).
 */
static int ledger_chunk_read(const struct ledger_hashes *hs,
			     struct ledger_hashes_chunk *c, size_t want)
{
	long long left = hs->size - (c->at + (long long)c->len);
	ssize_t r;

	if (left < 0)
		left = 0;
	if ((long long)want > left)
		want = (size_t)left;
	if (c->len + want > c->cap) {
		char *nb = realloc(c->buf, c->len + want);

		if (!nb)
			return -1;
		c->buf = nb;
		c->cap = c->len + want;
	}
	while (want) {
		r = pread(hs->fd, c->buf + c->len, want,
			  (off_t)(c->at + (long long)c->len));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		c->len += (size_t)r;
		want -= (size_t)r;
	}
	return 0;
}

/* One more line at buf offset pos, n bytes.  0, or -1 out of memory. */
static int ledger_chunk_add(const struct ledger_hashes *hs,
			    struct ledger_hashes_chunk *c, size_t pos, size_t n)
{
	if (c->n == c->line_cap) {
		size_t cap = c->line_cap ? c->line_cap * 2 : 1024;
		struct ledger_hashes_line *nl =
			realloc(c->line, cap * sizeof(*nl));
		unsigned char *ns;

		if (!nl)
			return -1;
		c->line = nl;
		if (hs->slot_size) {
			ns = realloc(c->slots, cap * hs->slot_size);
			if (!ns)
				return -1;
			c->slots = ns;
		}
		c->line_cap = cap;
	}
	/* Pointers are set once the buffer stops moving. */
	c->line[c->n].s = NULL;
	c->line[c->n].n = n;
	c->line[c->n].off = c->at + (long long)pos;
	c->n++;
	return 0;
}

/*
 * Split chunk k into the lines that start in it and end before the size
 * reading began with.  0, or -1: what was found before stays, and the
 * chunk is marked failed so that nothing after it is taken.
 */
static int ledger_chunk_split(struct ledger_hashes *hs,
			      struct ledger_hashes_chunk *c, size_t k)
{
	long long start = (long long)k * (long long)hs->chunk;
	long long lim = start + (long long)hs->chunk;
	size_t pos = 0, from, more;
	const char *nl;

	/* From start - 1: a newline there means a line starts at start. */
	c->at = k ? start - 1 : 0;
	if (ledger_chunk_read(hs, c, (size_t)(lim - c->at) + 4096) < 0)
		return -1;
	if (k) {
		size_t span = (size_t)(lim - 1 - c->at);

		nl = memchr(c->buf, '\n', span < c->len ? span : c->len);
		if (!nl)
			return 0; /* inside one long line */
		pos = (size_t)(nl - c->buf) + 1;
	}
	from = pos;
	while (c->at + (long long)pos < lim) {
		nl = memchr(c->buf + from, '\n', c->len - from);
		if (nl) {
			if (ledger_chunk_add(hs, c, pos,
					     (size_t)(nl - c->buf) - pos) < 0)
				return -1;
			pos = from = (size_t)(nl - c->buf) + 1;
			continue;
		}
		/* A line not ended in what was read: read on, twice as far. */
		if (c->at + (long long)c->len >= hs->size ||
		    c->len - pos > LEDGER_MAX_LINE)
			break;
		from = c->len;
		more = c->len > hs->chunk ? c->len : hs->chunk;
		if (ledger_chunk_read(hs, c, more) < 0)
			return -1;
	}
	return 0;
}

/* Work out chunk k into c: its lines, then each line's hash and prep. */
static void ledger_chunk_fill(struct ledger_hashes *hs,
			      struct ledger_hashes_chunk *c, size_t k,
			      struct ledger_hashes_thread *t)
{
	const unsigned char *key = hs->key && t->mac ? hs->key : NULL;
	struct ledger_hashes_line *l;
	size_t i;

	c->n = 0;
	c->len = 0;
	c->failed = ledger_chunk_split(hs, c, k) < 0;
	for (i = 0; i < c->n; i++) {
		l = &c->line[i];
		l->s = c->buf + (l->off - c->at);
		if (!hs->prep) {
			chain_sha256_hex(l->s, l->n, l->hex);
			continue;
		}
		hs->prep(c->slots + i * hs->slot_size, l, i ? l - 1 : NULL,
			 i ? c->slots + (i - 1) * hs->slot_size : NULL, key, t,
			 hs->prep_ctx);
	}
}

/* Can a thread take the next chunk?  Under the lock. */
static bool ledger_hashes_can_take(const struct ledger_hashes *hs)
{
	return !hs->stop && hs->claimed < hs->nchunks &&
	       hs->claimed < hs->done + hs->nslots;
}

/* Take the next chunk and work it out.  Called and returns locked. */
static void ledger_hashes_work(struct ledger_hashes *hs,
			       struct ledger_hashes_thread *t)
{
	size_t k = hs->claimed++;
	struct ledger_hashes_chunk *c = &hs->ring[k % hs->nslots];

	/* Its slot is free: chunk k - nslots has been given back. */
	c->k = k;
	c->state = LEDGER_CHUNK_TAKEN;
	pthread_mutex_unlock(&hs->lock);
	ledger_chunk_fill(hs, c, k, t);
	pthread_mutex_lock(&hs->lock);
	c->state = LEDGER_CHUNK_READY;
	pthread_cond_broadcast(&hs->cond);
}

static void *ledger_hashes_run(void *arg)
{
	struct ledger_hashes *hs = arg;
	struct ledger_hashes_thread t = {.mac = hs->key ? chain_mac_new()
							: NULL};

	pthread_mutex_lock(&hs->lock);
	for (;;) {
		while (!hs->stop && hs->claimed < hs->nchunks &&
		       !ledger_hashes_can_take(hs))
			pthread_cond_wait(&hs->cond, &hs->lock);
		if (!ledger_hashes_can_take(hs))
			break;
		ledger_hashes_work(hs, &t);
	}
	pthread_mutex_unlock(&hs->lock);
	chain_mac_free(t.mac);
	explicit_bzero(t.key, sizeof(t.key));
	return NULL;
}

bool ledger_hashes_worth(int fd, long long *size)
{
	struct stat sb;

	/* Below two chunks, threads would cost more than they save. */
	if (atomic_load(&ledger_verify_threads) < 2 || fstat(fd, &sb) < 0 ||
	    !S_ISREG(sb.st_mode) ||
	    sb.st_size < 2 * (long long)atomic_load(&ledger_chunk_bytes))
		return false;
	if (size)
		*size = sb.st_size;
	return true;
}

int ledger_hashes_start(struct ledger_hashes *hs, int fd,
			ledger_hashes_prep prep, size_t slot_size,
			const void *ctx, const unsigned char *key)
{
	unsigned threads = atomic_load(&ledger_verify_threads), i;
	size_t chunk = atomic_load(&ledger_chunk_bytes);
	long long size;

	memset(hs, 0, sizeof(*hs));
	if (!ledger_hashes_worth(fd, &size))
		return 0;
	hs->fd = fd;
	hs->size = size;
	hs->chunk = chunk;
	hs->nchunks =
		(size_t)((hs->size + (long long)chunk - 1) / (long long)chunk);
	hs->nslots = 2 * threads;
	hs->prep = prep;
	hs->slot_size = prep ? slot_size : 0;
	hs->prep_ctx = ctx;
	hs->key = key;
	if (key && !(hs->reader.mac = chain_mac_new()))
		return -1;
	if (pthread_mutex_init(&hs->lock, NULL) != 0) {
		chain_mac_free(hs->reader.mac);
		return -1;
	}
	if (pthread_cond_init(&hs->cond, NULL) != 0) {
		pthread_mutex_destroy(&hs->lock);
		chain_mac_free(hs->reader.mac);
		return -1;
	}
	/* A helper that does not start leaves its chunks to the others. */
	for (i = 0; i + 1 < threads; i++)
		if (pthread_create(&hs->tid[hs->helpers], NULL,
				   ledger_hashes_run, hs) == 0)
			hs->helpers++;
	return 1;
}

/* Give c back.  Under the lock. */
static void ledger_hashes_free_slot(struct ledger_hashes *hs,
				    struct ledger_hashes_chunk *c)
{
	c->state = LEDGER_CHUNK_FREE;
	hs->done++;
	pthread_cond_broadcast(&hs->cond);
}

const struct ledger_hashes_chunk *ledger_hashes_take(struct ledger_hashes *hs,
						     long long expect)
{
	struct ledger_hashes_chunk *c;

	pthread_mutex_lock(&hs->lock);
	for (;;) {
		if (hs->stop || hs->done >= hs->nchunks) {
			c = NULL;
			break;
		}
		c = &hs->ring[hs->done % hs->nslots];
		if (hs->claimed == hs->done) {
			/* Nobody has it: work it out here. */
			ledger_hashes_work(hs, &hs->reader);
			continue;
		}
		if (c->state == LEDGER_CHUNK_READY) {
			/* Lines found before a failure still count. */
			if (c->n && c->line[0].off == expect)
				break;
			if (!c->n && !c->failed) {
				ledger_hashes_free_slot(hs, c);
				continue;
			}
			/* Not the next line: the reader goes on alone. */
			c = NULL;
			break;
		}
		/* A helper is on it: work out a later chunk meanwhile. */
		if (ledger_hashes_can_take(hs)) {
			ledger_hashes_work(hs, &hs->reader);
			continue;
		}
		pthread_cond_wait(&hs->cond, &hs->lock);
	}
	if (!c || c->failed) {
		/* Nothing after this chunk is read ahead. */
		hs->stop = true;
		pthread_cond_broadcast(&hs->cond);
	}
	pthread_mutex_unlock(&hs->lock);
	return c;
}

void ledger_hashes_give_back(struct ledger_hashes *hs,
			     const struct ledger_hashes_chunk *c)
{
	pthread_mutex_lock(&hs->lock);
	ledger_hashes_free_slot(hs, &hs->ring[c->k % hs->nslots]);
	pthread_mutex_unlock(&hs->lock);
}

void ledger_hashes_stop(struct ledger_hashes *hs)
{
	unsigned i;

	pthread_mutex_lock(&hs->lock);
	hs->stop = true;
	pthread_cond_broadcast(&hs->cond);
	pthread_mutex_unlock(&hs->lock);
	for (i = 0; i < hs->helpers; i++)
		pthread_join(hs->tid[i], NULL);
	for (i = 0; i < hs->nslots; i++) {
		free(hs->ring[i].buf);
		free(hs->ring[i].line);
		free(hs->ring[i].slots);
	}
	chain_mac_free(hs->reader.mac);
	explicit_bzero(hs->reader.key, sizeof(hs->reader.key));
	pthread_cond_destroy(&hs->cond);
	pthread_mutex_destroy(&hs->lock);
	memset(hs, 0, sizeof(*hs));
}
