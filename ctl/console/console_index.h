/* SPDX-License-Identifier: MIT */
/*
 * console_index.h - what the console knows about the cases of a mount,
 * read through the view only (O_RDONLY, never the backing folder) and
 * kept up to date incrementally: each refresh reads the ledger bytes
 * added since the last one, so a 100,000-row case costs one pass once
 * and a page of rows is a few preads (ledgerctl(1) CONSOLE).
 *
 * Each ledger line read is checked as `ledgerctl verify` checks a
 * mounted case (chain, row numbers, canonical form, the end the
 * daemon's status names) and, when the host key could be read, its MAC.
 */
#ifndef LF_CONSOLE_INDEX_H
#define LF_CONSOLE_INDEX_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "chain.h"

struct cx;

/* Rows or calls a page may hold at most (?limit= is clamped to it). */
#define CX_PAGE_MAX 1000
/* Bins of the plot series. */
#define CX_SERIES_BINS 120

/*
 * A new index over mount (borrowed string, copied).  key: the host key
 * to check MACs with, or NULL.  NULL when out of memory.
 */
struct cx *cx_new(const char *mount, const unsigned char *key);
void cx_free(struct cx *x);

/* Is name a case name of the view (ledgerfs(8) THE VIEW)? */
bool cx_name_ok(const char *name);

/* Is there such a case in the view now? */
bool cx_case_exists(struct cx *x, const char *name);

/*
 * GET /api/cases: {"total","offset","limit","cases":[...]}, the cases in
 * name order, each refreshed.  New reference, NULL when the view's
 * cases/ folder cannot be read.
 */
json_t *cx_cases_json(struct cx *x, size_t offset, size_t limit);

/*
 * GET /api/cases/NAME: {"case","status","verify","summary","rows_total",
 * "offset","rows":[...]}.  NULL when there is no such case.
 */
json_t *cx_case_json(struct cx *x, const char *name, size_t offset,
		     size_t limit);

/* GET /api/cases/NAME/calls: the calls in attempt order, paged. */
json_t *cx_calls_json(struct cx *x, const char *name, size_t offset,
		      size_t limit);

/* GET /api/cases/NAME/series: calls by mode over the case's life. */
json_t *cx_series_json(struct cx *x, const char *name);

/*
 * A value that changes when what a page shows changes: one case (name)
 * or a page of the case list (name NULL).  Refreshes what it covers.
 */
uint64_t cx_signature(struct cx *x, const char *name, size_t offset,
		      size_t limit);

#endif
