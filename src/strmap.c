/* SPDX-License-Identifier: MIT */
/*
 * strmap.c - open-addressing string → index map (see strmap.h).
 */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

static uint32_t strmap_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a: keys are short ids */

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h ? h : 1;
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
