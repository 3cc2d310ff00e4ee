/* SPDX-License-Identifier: MIT */
/*
 * evidence_fixture.h - a host ledger for the evidence and transcript
 * tests, written with ledger_append under a temporary key, with rows
 * shaped as the daemon writes them; and a runner for ledgerctl mains.
 */
#ifndef LF_EVIDENCE_FIXTURE_H
#define LF_EVIDENCE_FIXTURE_H

#include <jansson.h>

extern char fx_dir[64];	     /* the temporary folder */
extern char fx_case[128];    /* fx_dir/cases/C1: a backing case folder */
extern char fx_ledger[160];  /* fx_case/ledger.jsonl */
extern char fx_key[128];     /* the host key file */
extern char fx_bad_key[128]; /* another key */

/*
 * Case C1.  Turn 1: c1 pass (result reported), c2 mock, c3 block, c4 pass
 * with args {"city":"Oslo","n":2.0} (marked missing at the turn), then
 * the turn row.  Turn 2: c5 pass (result reported), c6 pass (pending), a
 * refused late result for c4.
 */
void fx_setup(void);
void fx_teardown(void);

/* The fixture ledger verified and folded.  New reference. */
json_t *fx_events(unsigned long turn);
/* The fixture ledger's rows, verified with its key: a new array. */
json_t *fx_rows(void);

/* TEST_DATA/transcripts/name, loaded.  New reference. */
json_t *fx_transcript(const char *name);
/* Its path (static buffer). */
const char *fx_transcript_path(const char *name);

/*
 * Run a ledgerctl main with argv (NULL-terminated, argv[0] the command),
 * stdout and stderr captured into *out and *err (malloc'd, may be NULL
 * to drop).  Returns the exit status.
 */
int fx_run(int (*main_fn)(int, char **), char **out, char **err,
	   const char *const *argv);

#endif
