/* SPDX-License-Identifier: MIT */
/*
 * pattern.h - the one regular-expression engine of ledgerfs: Python `re`
 * syntax and meaning on PCRE2, bounded when a document is loaded (source
 * length, nesting, compiled size) and when it matches (a budget shared by
 * every pattern one call evaluates).  ledgerfs-policy(5) PATTERNS.
 */
#ifndef LF_PATTERN_H
#define LF_PATTERN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

/* Load-time bounds (ledgerfs-policy(5) PATTERNS). */
#define PATTERN_MAX_SOURCE   4096		/* bytes of one pattern */
#define PATTERN_MAX_NEST     32			/* nested parentheses */
#define PATTERN_MAX_COMPILED (64u * 1024)	/* bytes, one pattern */
#define PATTERN_MAX_DOC	     (8u * 1024 * 1024) /* bytes, one document */

/* Match-time bounds: per match (PCRE2's limits) and per call (CPU time). */
#define PATTERN_MATCH_LIMIT   5000000u
#define PATTERN_DEPTH_LIMIT   1000000u
#define PATTERN_HEAP_LIMIT_KB (64u * 1024)
/* All matches running at once, in every case (ledgerfs-policy(5)). */
#define PATTERN_HEAP_ALL_KB (4u * PATTERN_HEAP_LIMIT_KB)
#define PATTERN_CALL_MS	    100

struct pattern;

/*
 * What one call may spend on matching, across all its patterns.  Start it
 * with pattern_budget_init before the first pattern; it is the caller's
 * (one call, one thread), never shared between threads.
 */
struct pattern_budget {
	long long deadline_ns; /* thread CPU time; 0: no time limit */
	unsigned long callouts;
	unsigned long matches;
	bool spent;
};

/*
 * Compile src (len bytes, UTF-8, Python `re` syntax) into *out.  On
 * refusal LF_EINVAL_DOC with a one-line reason in why (no location: the
 * caller prefixes the file and key); LF_NOMEM when memory ran out.
 */
enum lf_err pattern_compile(const char *src, size_t len, struct pattern **out,
			    struct lf_why *why);
void pattern_free(struct pattern *p);

/* The compiled size in bytes (for the per-document bound). */
size_t pattern_size(const struct pattern *p);

/*
 * A fresh budget of cpu_ms milliseconds of this thread's CPU time
 * (0: no time limit; PCRE2's own limits still hold).
 */
void pattern_budget_init(struct pattern_budget *b, unsigned cpu_ms);

/*
 * Python's re.search(pattern, subject) is not None.  subject is UTF-8 of
 * len bytes (NUL bytes allowed).  LF_OK with *found, LF_PATTERN_LIMIT
 * with why when a limit or the budget ran out (the budget stays spent),
 * LF_NOMEM.  Safe to call from many threads on one pattern.
 */
enum lf_err pattern_search(const struct pattern *p, const char *subject,
			   size_t len, struct pattern_budget *b, bool *found,
			   struct lf_why *why);

/*
 * The PCRE2 source a Python pattern becomes (for tests and the fuzzer).
 * Returns malloc'd text, or NULL with why (LF_EINVAL_DOC or LF_NOMEM in
 * *err).
 */
char *pattern_translate(const char *src, size_t len, bool *ascii,
			enum lf_err *err, struct lf_why *why);

#endif
