/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - runs the request fuzz harness without libFuzzer: over
 * every seed of the corpus folder, then over deterministic mutations of
 * them, so `make check` (and its sanitizer build) exercises the parser
 * with hostile bytes on every run.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_request.h"

#ifndef FUZZ_CORPUS
#define FUZZ_CORPUS "tests/fuzz/corpus/request"
#endif

#define MAX_SEEDS 1024
#define SEED_MAX  65536
/* Mutants stay small: depth and byte-level rules need no more. */
#define MUTANT_MAX 8192
#ifndef DEFAULT_ROUNDS
#define DEFAULT_ROUNDS 200000UL
#endif
/* The same replay drives other harnesses (mk/pattern.am): their name. */
#ifndef FUZZ_NAME
#define FUZZ_NAME "fuzz_request_replay"
#endif

struct seed {
	unsigned char *data;
	size_t len;
};

static uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static int load_seeds(const char *dir, struct seed *seeds, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];
	FILE *f;

	if (!d) {
		fprintf(stderr, FUZZ_NAME ": %s: %s\n", dir, strerror(errno));
		return -1;
	}
	*n = 0;
	while ((e = readdir(d)) && *n < MAX_SEEDS) {
		struct seed *s = &seeds[*n];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
		if (!f)
			continue;
		s->data = malloc(SEED_MAX);
		if (!s->data) {
			fclose(f);
			break;
		}
		s->len = fread(s->data, 1, SEED_MAX, f);
		fclose(f);
		(*n)++;
	}
	closedir(d);
	return 0;
}

/* Insert src[0..n) at pos of buf (length *len, room MUTANT_MAX). */
static void insert(unsigned char *buf, size_t *len, size_t pos,
		   const unsigned char *src, size_t n)
{
	if (*len + n > MUTANT_MAX)
		n = MUTANT_MAX - *len;
	memmove(buf + pos + n, buf + pos, *len - pos);
	memmove(buf + pos, src, n);
	*len += n;
}

static void mutate(unsigned char *buf, size_t *len, uint64_t *rng)
{
	static const unsigned char special[] = {'{',  '[', '"', '\\', 0x00,
						0xff, '}', ']', ':',  ','};
	unsigned char tmp[MUTANT_MAX];
	size_t ops = 1 + xorshift64(rng) % 4;
	size_t pos, a, b, k;

	while (ops--) {
		pos = *len ? xorshift64(rng) % (*len + 1) : 0;
		switch (xorshift64(rng) % 6) {
		case 0: /* bit flip */
			if (*len)
				buf[pos % *len] ^= 1u << (xorshift64(rng) % 8);
			break;
		case 1: /* insert a structural or hostile byte */
			insert(buf, len, pos,
			       &special[xorshift64(rng) % sizeof(special)], 1);
			break;
		case 2: /* truncate */
			*len = pos;
			break;
		case 3: /* duplicate a range */
			if (!*len)
				break;
			a = xorshift64(rng) % *len;
			b = a + xorshift64(rng) % (*len - a) + 1;
			memcpy(tmp, buf + a, b - a);
			insert(buf, len, pos, tmp, b - a);
			break;
		case 4: /* overwrite with a hostile byte */
			if (*len)
				buf[pos % *len] = special[xorshift64(rng) %
							  sizeof(special)];
			break;
		default: /* a run of openers: the depth rule's edge */
			k = 60 + xorshift64(rng) % 10;
			memset(tmp, xorshift64(rng) % 2 ? '[' : '{', k);
			insert(buf, len, pos, tmp, k);
			break;
		}
	}
}

int main(int argc, char **argv)
{
	static struct seed seeds[MAX_SEEDS];
	static unsigned char buf[MUTANT_MAX];
	const char *dir = argc > 1 ? argv[1] : FUZZ_CORPUS;
	unsigned long rounds =
		argc > 2 ? strtoul(argv[2], NULL, 10) : DEFAULT_ROUNDS;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	size_t nseeds, i, len, inputs = 0;
	unsigned long r;

	if (load_seeds(dir, seeds, &nseeds) < 0)
		return 1;
	if (nseeds == 0) {
		fprintf(stderr, FUZZ_NAME ": no seeds in %s\n", dir);
		return 1;
	}
	for (i = 0; i < nseeds; i++, inputs++)
		LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].len);
	for (r = 0; r < rounds; r++, inputs++) {
		struct seed *s = &seeds[xorshift64(&rng) % nseeds];

		len = s->len < MUTANT_MAX ? s->len : MUTANT_MAX;
		memcpy(buf, s->data, len);
		mutate(buf, &len, &rng);
		LLVMFuzzerTestOneInput(buf, len);
	}
	for (i = 0; i < nseeds; i++)
		free(seeds[i].data);
	/* A crash never gets here: the harness aborts on a broken promise. */
	printf(FUZZ_NAME ": %zu inputs, 0 crashes\n", inputs);
	return 0;
}
