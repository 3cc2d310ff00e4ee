/* SPDX-License-Identifier: MIT */
/*
 * fuzz_pattern.c - fuzz harness for the pattern module: the input is a
 * Python pattern, a NUL, then a subject (no NUL: a fixed subject).  Every
 * pattern is translated and compiled; a compiled one is matched on a
 * short budget.  A broken promise of pattern.h aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

/* Small enough to fuzz fast, large enough to reach every limit path. */
#define FUZZ_BUDGET_MS 5

static void check_reason(const struct lf_why *why)
{
	const char *end = memchr(why->msg, '\0', sizeof(why->msg));

	CHECK(end && end != why->msg);
	CHECK(!strchr(why->msg, '\n'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char fixed[] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\n";
	const char *src = (const char *)data, *subject = fixed;
	const char *nul = memchr(data, '\0', size);
	size_t plen = nul ? (size_t)(nul - src) : size;
	size_t slen = nul ? size - plen - 1 : sizeof(fixed) - 1;
	struct pattern *p = NULL;
	struct pattern_budget b;
	struct lf_why why = {{0}};
	enum lf_err e;
	bool found = false;

	if (nul)
		subject = nul + 1;
	e = pattern_compile(src, plen, &p, &why);
	CHECK(e == LF_OK || e == LF_EINVAL_DOC || e == LF_NOMEM);
	if (e != LF_OK) {
		CHECK(!p);
		check_reason(&why);
		return 0;
	}
	CHECK(p && pattern_size(p) <= PATTERN_MAX_COMPILED);
	pattern_budget_init(&b, FUZZ_BUDGET_MS);
	e = pattern_search(p, subject, slen, &b, &found, &why);
	CHECK(e == LF_OK || e == LF_PATTERN_LIMIT || e == LF_NOMEM);
	if (e == LF_PATTERN_LIMIT) {
		CHECK(b.spent && !found);
		check_reason(&why);
		/* A spent budget stays spent for the rest of the call. */
		CHECK(pattern_search(p, "", 0, &b, &found, &why) ==
		      LF_PATTERN_LIMIT);
	}
	pattern_free(p);
	return 0;
}
