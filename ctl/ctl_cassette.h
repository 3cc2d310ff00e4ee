/* SPDX-License-Identifier: MIT */
/*
 * ctl_cassette.h - what the two halves of `ledgerctl cassette` share
 * (ledgerctl(1) CASSETTES): a case of the mount read and verified
 * (ctl/ctl_cassette_case.c, with --compare), and the recorded calls'
 * file name.
 */
#ifndef LF_CTL_CASSETTE_H
#define LF_CTL_CASSETTE_H

#include <jansson.h>
#include <stdbool.h>

#include "chain.h"

#define CALLS_FILE "calls.jsonl"

/* One case of the mount, read and verified. */
struct read_case {
	json_t *rows;	/* every verified row */
	json_t *status; /* the view's status */
	json_t *policy; /* the case's policy document */
	char head[CHAIN_HEX_LEN + 1];
	unsigned long long nrows;
};

/*
 * Read CASE from the mount ($LEDGERFS_MOUNT) and verify its ledger as
 * `export` does (the host key when there is one); a case that is over
 * must end at the daemon's rows and head.  0, 1 (does not verify) or 2
 * (no such case, unreadable key or files), having said why as
 * "ledgerctl CMD: ...".
 */
int ctl_cassette_read(const char *cmd, const char *name, const char *key_path,
		      struct read_case *rc);
void ctl_cassette_case_clear(struct read_case *rc);

/* --compare OUTDIR CASE: 0 same, 1 differs, 2 usage/IO, 3 not verified. */
int ctl_cassette_compare(const char *outdir, const char *name,
			 const char *key_path, bool as_json);

#endif
