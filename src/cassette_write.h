/* SPDX-License-Identifier: MIT */
/*
 * cassette_write.h - a closed case's ledger turned into what re-runs it
 * (ledgerctl(1) CASSETTES): the calls it made in order, ASSERT's mocks
 * file replaying every result, the recordings of the cassette folder and
 * the replay policy; and the comparison of a re-run against those calls.
 * No I/O here: ctl/ctl_cassette.c reads the case and writes the files.
 */
#ifndef LF_CASSETTE_WRITE_H
#define LF_CASSETTE_WRITE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

/* The scenario name of replay rules; their state never moves. */
#define CASSETTE_SCENARIO "ledger-replay"
/* The folder of recordings, beside the mocks file. */
#define CASSETTE_DIR "cassettes"

/*
 * The calls of a ledger (rows: its parsed rows, borrowed) in sequence
 * order, each {sequence, call_id, tool, args, mode, result_source,
 * returned, is_error, replay}: what the target saw as the call's result
 * (the host's for mock and block, the reported or host-executed result
 * for pass, null and false for a pass whose result never came) and who
 * gives it again in a re-run ("mocks", or "policy" for a block the
 * policy itself decides).  New reference, or NULL with why.
 */
json_t *cassette_calls(const json_t *rows, struct lf_why *why);

/* What cassette_build makes; every member a new reference. */
struct cassette_set {
	json_t *calls;	    /* cassette_calls, plus "cassette" names */
	json_t *mocks;	    /* ASSERT's mocks document */
	json_t *recordings; /* {"call-000001": returned, ...} */
	char *mocks_yaml;   /* mocks as YAML text (malloc'd) */
};

/*
 * Build the replay of the case case_id from its rows: one mocks rule per
 * tool, in the order of first call (a tool whose results are all one
 * value gets an inline error or a replay rule naming its recording;
 * otherwise a scenario rule with one step per call, in order).  Refused
 * (LF_EINVAL_DOC, why naming the call) when a tool name cannot be a mocks
 * rule's tool or a null result sits among other results of its tool
 * (ASSERT's scenario steps take no null).  header: comment lines put
 * before the YAML (each starting "# "), or NULL.
 */
enum lf_err cassette_build(const json_t *rows, const char *case_id,
			   const char *header, struct cassette_set *out,
			   struct lf_why *why);
void cassette_set_clear(struct cassette_set *s);

/*
 * The replay policy from the case's policy document (borrowed): each
 * rule and default whose mode is a pass becomes mode "mock" (its `exec`
 * dropped), so passed calls are answered from the mocks file; blocks and
 * mocks stay as they were; `cassettes` (the recordings ledgerctl inlined
 * at open) is dropped.  New reference, or NULL with why.
 */
json_t *cassette_replay_policy(const json_t *policy, struct lf_why *why);

/* The first difference between recorded calls and a re-run's. */
struct cassette_diff {
	bool same;
	const char *what;   /* "call", "reply", "missing", "extra", or NULL */
	long long sequence; /* the first differing call's, or 0 */
	size_t expected_calls, actual_calls;
	json_t *expected; /* that call as recorded, or NULL; new ref */
	json_t *actual;	  /* that call in the re-run, or NULL; new ref */
};

/*
 * Compare expected (cassette_calls of the recorded case) with actual
 * (cassette_calls of the re-run) in sequence order: first the tool and
 * args, then the reply (returned, is_error).  Call ids, modes, reasons
 * and mock_source may differ.  Fills d (clear it with
 * cassette_diff_clear).
 */
void cassette_compare(const json_t *expected, const json_t *actual,
		      struct cassette_diff *d);
void cassette_diff_clear(struct cassette_diff *d);

/* One line without newline: "same: ..." or "differs at call N: ...". */
char *cassette_diff_line(const struct cassette_diff *d);

/*
 * v (borrowed) as a YAML flow value that PyYAML's safe_load, ledgerfs's
 * doc_parse and any JSON parser read back as v: double-quoted strings
 * escaping whatever YAML would fold or refuse, floats always with a dot.
 * Appended to f.  0, or -1 on a write error.
 */
int cassette_yaml_value(FILE *f, const json_t *v);

#endif
