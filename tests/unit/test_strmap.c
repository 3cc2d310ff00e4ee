/* SPDX-License-Identifier: MIT */
/*
 * test_strmap.c - the call index (strmap): every key found again, and
 * keys a target chooses to collide under a fixed hash still spread, so
 * probe runs stay short (a flood of such call ids cannot make lookups,
 * or a restart, quadratic).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strmap.h"

#define NKEYS 2048

static char keys[NKEYS][24];

static const char *key_of(void *ctx, uint32_t i)
{
	(void)ctx;
	return keys[i];
}

/* Unseeded 32-bit FNV-1a, the fixed hash an attacker could aim at. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

static size_t longest_run(const struct strmap *m)
{
	size_t i, run = 0, best = 0;

	for (i = 0; i < 2 * m->cap; i++) {
		run = m->slots[i & (m->cap - 1)] ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

Test(strmap, keys_chosen_to_collide_under_a_fixed_hash_do_not_pile_up)
{
	struct strmap m;
	unsigned long n = 0;
	size_t k;

	/* Ids whose fixed hash agrees in its low 12 bits: one slot. */
	for (k = 0; k < NKEYS; n++) {
		snprintf(keys[k], sizeof(keys[k]), "c%lu-x", n);
		if ((fnv1a(keys[k]) & 0xfff) == 0)
			k++;
	}
	strmap_init(&m);
	for (k = 0; k < NKEYS; k++)
		cr_assert_eq(strmap_add(&m, keys[k], (uint32_t)k, key_of, NULL),
			     0);
	for (k = 0; k < NKEYS; k++)
		cr_assert_eq(strmap_find(&m, keys[k], key_of, NULL), (long)k);
	cr_assert_eq(strmap_find(&m, "absent", key_of, NULL), -1);
	cr_assert_lt(longest_run(&m), 128, "a probe run of %zu slots of %zu",
		     longest_run(&m), m.cap);
	strmap_free(&m);
}
