/* SPDX-License-Identifier: MIT */
/*
 * ctl_verify.h - the reusable core of `ledgerctl verify`: check one open
 * ledger, print the verdict, return the exit status.
 */
#ifndef LF_CTL_VERIFY_H
#define LF_CTL_VERIFY_H

#include <jansson.h>
#include <stdbool.h>

#include "chain.h"

/*
 * Verify the ledger read from fd (from offset 0; fd is not closed).
 * label names it in messages.  key: the host key, or NULL to check the
 * chain, row numbers and canonical form only.  head_arg: a checkpoint
 * "ROWS:HEX" taken earlier from `status`, or NULL.  Prints "ok: N rows,
 * head HEX, MACs checked|not checked" on stdout, or "bad: WHY" (naming
 * the first bad row or the checkpoint) on stdout.  Returns 0 good, 1 bad,
 * 2 unreadable or a malformed head_arg (reason on stderr).
 */
int ctl_verify_fd(int fd, const char *label, const unsigned char *key,
		  const char *head_arg);

/* What one check of a ledger found (ledgerfs-ledger(5) LEDGERCTL VERIFY). */
struct ctl_verdict {
	int status;	     /* the exit status: 0 ok, 1 bad, 2 not checked */
	const char *verdict; /* "ok", "bad", "wrong_key" or "error" */
	unsigned long long rows, bad_row;
	char head[CHAIN_HEX_LEN + 1];
	bool macs_checked;
	char key_fp[CHAIN_FP_LEN + 1];	  /* the key used; "" for none */
	char sealed_fp[CHAIN_FP_LEN + 1]; /* from case_opened; "" if absent */
	char reason[512];
};

/*
 * Check the ledger read from fd like ctl_verify_fd, printing nothing.
 * A MAC that fails under a key whose fingerprint differs from the one
 * the ledger records is "wrong_key" (status 2), not "bad".  Returns
 * v->status.
 */
int ctl_verify_check(int fd, const unsigned char *key, const char *head_arg,
		     struct ctl_verdict *v);

/* The verdict as the JSON object of `verify --json` (a new reference). */
json_t *ctl_verdict_json(const struct ctl_verdict *v, const char *ledger,
			 const char *key_path, const char *key_source);

/* FILE.tar from `ledgerctl export` (ctl/ctl_export.c)? */
bool ctl_is_tar(const char *path);

/* `ledgerctl verify FILE.tar` (ctl/ctl_export.c): 0, 1 or 2. */
int ctl_verify_tar(const char *path, const char *key_path, bool json,
		   bool require_mac);

/* A mounted case's `ledger` (dirfd: its folder) copied whole into a new
 * memfd: one snapshot.  The descriptor, or -1. */
int ctl_snapshot_ledger(int dirfd);

/* rows and head from a mounted case's `status` (dirfd: the case folder).
 * 0, or -1 when it cannot be read. */
int ctl_read_status(int dirfd, unsigned long long *rows,
		    char head[CHAIN_HEX_LEN + 1]);

#endif
