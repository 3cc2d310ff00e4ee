/* SPDX-License-Identifier: MIT */
/*
 * strmap.c - open-addressing string → index map (see strmap.h).
 */
#include "strmap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/*
 * SipHash-2-4 under a key drawn once per process: call ids come from the
 * target, which could otherwise choose ids that all land in one probe
 * run and make every lookup, and a restart, quadratic.
 */
static uint64_t strmap_key[2];
static pthread_once_t strmap_key_once = PTHREAD_ONCE_INIT;

static void strmap_key_draw(void)
{
	if (getrandom(strmap_key, sizeof(strmap_key), 0) !=
	    (ssize_t)sizeof(strmap_key)) {
		/* No randomness: still a key nobody outside can read. */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		strmap_key[0] = (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)&ts;
		strmap_key[1] = (uint64_t)ts.tv_sec ^ (uint64_t)getpid();
	}
}

#define SIP_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND                                                              \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = SIP_ROTL(v1, 13);                                         \
		v1 ^= v0;                                                      \
		v0 = SIP_ROTL(v0, 32);                                         \
		v2 += v3;                                                      \
		v3 = SIP_ROTL(v3, 16);                                         \
		v3 ^= v2;                                                      \
		v0 += v3;                                                      \
		v3 = SIP_ROTL(v3, 21);                                         \
		v3 ^= v0;                                                      \
		v2 += v1;                                                      \
		v1 = SIP_ROTL(v1, 17);                                         \
		v1 ^= v2;                                                      \
		v2 = SIP_ROTL(v2, 32);                                         \
	} while (0)

static uint32_t strmap_hash(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), i;
	uint64_t k0, k1, v0, v1, v2, v3, m, b, h;

	pthread_once(&strmap_key_once, strmap_key_draw);
	k0 = strmap_key[0];
	k1 = strmap_key[1];
	v0 = k0 ^ 0x736f6d6570736575ULL;
	v1 = k1 ^ 0x646f72616e646f6dULL;
	v2 = k0 ^ 0x6c7967656e657261ULL;
	v3 = k1 ^ 0x7465646279746573ULL;
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8); /* little-endian hosts: SipHash's order */
		v3 ^= m;
		SIP_ROUND;
		SIP_ROUND;
		v0 ^= m;
	}
	b = (uint64_t)len << 56;
	for (m = 0; i < len; i++)
		m |= (uint64_t)p[i] << (8 * (i & 7));
	b |= m;
	v3 ^= b;
	SIP_ROUND;
	SIP_ROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIP_ROUND;
	SIP_ROUND;
	SIP_ROUND;
	SIP_ROUND;
	h = v0 ^ v1 ^ v2 ^ v3;
	return (uint32_t)(h ^ (h >> 32)) ? (uint32_t)(h ^ (h >> 32)) : 1;
}

void strmap_init(struct strmap *m)
{
	memset(m, 0, sizeof(*m));
}

void strmap_free(struct strmap *m)
{
	free(m->slots);
	free(m->hashes);
	strmap_init(m);
}

long strmap_find(const struct strmap *m, const char *key, strmap_key_fn fn,
		 void *ctx)
{
	uint32_t h;
	size_t i, mask;

	if (!m->cap)
		return -1;
	h = strmap_hash(key);
	mask = m->cap - 1;
	for (i = h & mask; m->slots[i]; i = (i + 1) & mask)
		if (m->hashes[i] == h &&
		    strcmp(fn(ctx, m->slots[i] - 1), key) == 0)
			return (long)(m->slots[i] - 1);
	return -1;
}

static void strmap_put(uint32_t *slots, uint32_t *hashes, size_t cap,
		       uint32_t h, uint32_t v)
{
	size_t i, mask = cap - 1;

	for (i = h & mask; slots[i]; i = (i + 1) & mask)
		;
	slots[i] = v;
	hashes[i] = h;
}

int strmap_add(struct strmap *m, const char *key, uint32_t i, strmap_key_fn fn,
	       void *ctx)
{
	(void)fn;
	(void)ctx;
	if ((m->used + 1) * 4 > m->cap * 3) {
		size_t ncap = m->cap ? m->cap * 2 : 16, j;
		uint32_t *ns = calloc(ncap, sizeof(*ns));
		uint32_t *nh = calloc(ncap, sizeof(*nh));

		if (!ns || !nh) {
			free(ns);
			free(nh);
			return -1;
		}
		for (j = 0; j < m->cap; j++)
			if (m->slots[j])
				strmap_put(ns, nh, ncap, m->hashes[j],
					   m->slots[j]);
		free(m->slots);
		free(m->hashes);
		m->slots = ns;
		m->hashes = nh;
		m->cap = ncap;
	}
	strmap_put(m->slots, m->hashes, m->cap, strmap_hash(key), i + 1);
	m->used++;
	return 0;
}
