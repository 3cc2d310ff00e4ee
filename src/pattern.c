/* SPDX-License-Identifier: MIT */
/*
 * pattern.c - compile and match on PCRE2 with bounds (see pattern.h).
 * PCRE2 is the one home of regular expressions in ledgerfs.
 *
 * Why a CPU-time budget besides PCRE2's limits: match_limit counts
 * backtracking steps, but one step may scan the whole subject (a
 * possessive or single-character repeat), so `[a-y]*+[^a-y]` against
 * 100 KB of `a` runs for seconds well inside any step limit.  Every
 * pattern is compiled with automatic callouts, and the callout checks the
 * thread's CPU clock: between two callouts lies at most one item's scan
 * of the subject.  No JIT: the interpreter keeps its backtracking frames
 * on the heap (bounded by the heap limit), never on the thread's stack.
 *
 * The heap limit bounds one match; matches of many cases run at once, so
 * their heap is also charged to one daemon-wide budget through PCRE2's
 * own allocator hooks, and a match that would pass it is refused for
 * now (the call may be sent again), not decided.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "pattern.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct pattern {
	pcre2_code *code;
	size_t size;
};

/* Bytes PCRE2 holds for matches now, and whether this thread's passed. */
static atomic_size_t heap_held;
static _Thread_local bool heap_refused;
static pcre2_general_context *heap_ctx;
static pthread_once_t heap_once = PTHREAD_ONCE_INIT;

/* Each block carries its size ahead of it, for heap_free. */
#define HEAP_HEAD 16u

static void *heap_alloc(PCRE2_SIZE n, void *data)
{
	size_t *h;

	(void)data;
	if (n > SIZE_MAX - HEAP_HEAD ||
	    atomic_fetch_add(&heap_held, n) + n >
		    (size_t)PATTERN_HEAP_ALL_KB * 1024) {
		if (n <= SIZE_MAX - HEAP_HEAD)
			atomic_fetch_sub(&heap_held, n);
		heap_refused = true;
		return NULL;
	}
	h = malloc(n + HEAP_HEAD);
	if (!h) {
		atomic_fetch_sub(&heap_held, n);
		return NULL;
	}
	*h = n;
	return (char *)h + HEAP_HEAD;
}

static void heap_free(void *p, void *data)
{
	size_t *h;

	(void)data;
	if (!p)
		return;
	h = (size_t *)(void *)((char *)p - HEAP_HEAD);
	atomic_fetch_sub(&heap_held, *h);
	free(h);
}

static void heap_ctx_make(void)
{
	heap_ctx = pcre2_general_context_create(heap_alloc, heap_free, NULL);
}

/* How often (in callouts) the callout reads the clock: ~a few µs apart. */
#define CLOCK_EVERY 256u

static long long cpu_now_ns(void)
{
	struct timespec t;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return 0;
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

void pattern_budget_init(struct pattern_budget *b, unsigned cpu_ms)
{
	memset(b, 0, sizeof(*b));
	if (cpu_ms)
		b->deadline_ns = cpu_now_ns() + (long long)cpu_ms * 1000000LL;
}

static bool budget_over(struct pattern_budget *b)
{
	if (!b->spent && b->deadline_ns && cpu_now_ns() >= b->deadline_ns)
		b->spent = true;
	return b->spent;
}

static int on_callout(pcre2_callout_block *cb, void *data)
{
	struct pattern_budget *b = data;

	(void)cb;
	if (++b->callouts % CLOCK_EVERY == 0 && budget_over(b))
		return PCRE2_ERROR_CALLOUT; /* abandons the whole match */
	return 0;
}

enum lf_err pattern_compile(const char *src, size_t len, struct pattern **out,
			    struct lf_why *why)
{
	pcre2_compile_context *cc = NULL;
	struct pattern *p = NULL;
	char *pcre_src = NULL;
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE at;
	enum lf_err e;
	uint32_t opts;
	bool ascii;
	int code;

	*out = NULL;
	if (len > PATTERN_MAX_SOURCE)
		return lf_fail(why, LF_EINVAL_DOC,
			       "pattern of %zu bytes is over the bound of %d",
			       len, PATTERN_MAX_SOURCE);
	pcre_src = pattern_translate(src, len, &ascii, &e, why);
	if (!pcre_src)
		return e;
	p = calloc(1, sizeof(*p));
	cc = pcre2_compile_context_create(NULL);
	if (!p || !cc) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	pcre2_set_parens_nest_limit(cc, PATTERN_MAX_NEST);
	/*
	 * Python's str patterns: code points, Unicode \d \w \s \b, `$` also
	 * before a final newline (so no DOLLAR_ENDONLY); (?a) turns the
	 * Unicode classes off.
	 */
	opts = PCRE2_UTF | PCRE2_AUTO_CALLOUT | PCRE2_NEVER_BACKSLASH_C |
	       (ascii ? 0 : PCRE2_UCP);
	p->code = pcre2_compile((PCRE2_SPTR)pcre_src, PCRE2_ZERO_TERMINATED,
				opts, &code, &at, cc);
	if (!p->code) {
		if (pcre2_get_error_message(code, msg, sizeof(msg)) < 0)
			snprintf((char *)msg, sizeof(msg), "error %d", code);
		if (code == PCRE2_ERROR_HEAP_FAILED)
			e = lf_fail(why, LF_NOMEM, "out of memory");
		else if (code == PCRE2_ERROR_PATTERN_TOO_LARGE)
			e = lf_fail(
				why, LF_EINVAL_DOC,
				"pattern compiles to more than the bound of %u bytes",
				PATTERN_MAX_COMPILED);
		else
			e = lf_fail(why, LF_EINVAL_DOC, "invalid regex: %s",
				    (char *)msg);
		goto out;
	}
	if (pcre2_pattern_info(p->code, PCRE2_INFO_SIZE, &p->size) ||
	    p->size > PATTERN_MAX_COMPILED) {
		e = lf_fail(
			why, LF_EINVAL_DOC,
			"pattern compiles to %zu bytes, over the bound of %u",
			p->size, PATTERN_MAX_COMPILED);
		goto out;
	}
	*out = p;
	p = NULL;
	e = LF_OK;
out:
	pattern_free(p);
	pcre2_compile_context_free(cc);
	free(pcre_src);
	return e;
}

void pattern_free(struct pattern *p)
{
	if (!p)
		return;
	pcre2_code_free(p->code);
	free(p);
}

size_t pattern_size(const struct pattern *p)
{
	return p ? p->size : 0;
}

static enum lf_err limit_hit(struct pattern_budget *b, int rc,
			     struct lf_why *why)
{
	b->spent = true;
	switch (rc) {
	case PCRE2_ERROR_MATCHLIMIT:
		return lf_fail(why, LF_PATTERN_LIMIT,
			       "match limit of %u steps reached",
			       PATTERN_MATCH_LIMIT);
	case PCRE2_ERROR_DEPTHLIMIT:
		return lf_fail(why, LF_PATTERN_LIMIT,
			       "backtracking depth limit of %u reached",
			       PATTERN_DEPTH_LIMIT);
	case PCRE2_ERROR_HEAPLIMIT:
		return lf_fail(why, LF_PATTERN_LIMIT,
			       "heap limit of %u KiB reached",
			       PATTERN_HEAP_LIMIT_KB);
	default:
		return lf_fail(
			why, LF_PATTERN_LIMIT,
			"the call's matching budget of %d ms CPU is spent",
			PATTERN_CALL_MS);
	}
}

/* The daemon-wide budget is in use by other calls' matches. */
static enum lf_err heap_busy(struct lf_why *why)
{
	return lf_fail(why, LF_MATCH_HEAP_FULL,
		       "matching needs more heap than the %u MiB all calls "
		       "share leave free now; send the call again",
		       PATTERN_HEAP_ALL_KB / 1024);
}

enum lf_err pattern_search(const struct pattern *p, const char *subject,
			   size_t len, struct pattern_budget *b, bool *found,
			   struct lf_why *why)
{
	pcre2_match_context *mc = NULL;
	pcre2_match_data *md = NULL;
	enum lf_err e;
	int rc;

	*found = false;
	if (b->spent || budget_over(b))
		return limit_hit(b, PCRE2_ERROR_CALLOUT, why);
	pthread_once(&heap_once, heap_ctx_make);
	heap_refused = false;
	mc = heap_ctx ? pcre2_match_context_create(heap_ctx) : NULL;
	md = heap_ctx ? pcre2_match_data_create(1, heap_ctx) : NULL;
	if (heap_refused) {
		e = heap_busy(why);
		goto out;
	}
	if (!mc || !md) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	pcre2_set_match_limit(mc, PATTERN_MATCH_LIMIT);
	pcre2_set_depth_limit(mc, PATTERN_DEPTH_LIMIT);
	pcre2_set_heap_limit(mc, PATTERN_HEAP_LIMIT_KB);
	pcre2_set_callout(mc, on_callout, b);
	b->matches++;
	rc = pcre2_match(p->code, (PCRE2_SPTR)subject, len, 0, 0, md, mc);
	if (rc >= 0) {
		*found = true;
		e = LF_OK;
	} else if (rc == PCRE2_ERROR_NOMATCH) {
		e = LF_OK;
	} else if (rc == PCRE2_ERROR_MATCHLIMIT ||
		   rc == PCRE2_ERROR_DEPTHLIMIT ||
		   rc == PCRE2_ERROR_HEAPLIMIT || rc == PCRE2_ERROR_CALLOUT) {
		e = limit_hit(b, rc, why);
	} else if (rc == PCRE2_ERROR_NOMEMORY && heap_refused) {
		e = heap_busy(why);
	} else if (rc == PCRE2_ERROR_NOMEMORY) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
	} else {
		/* Invalid UTF-8 cannot reach here from JSON; Python would
		 * not match bytes it cannot read either. */
		e = LF_OK;
	}
out:
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	return e;
}
