/* SPDX-License-Identifier: MIT */
/*
 * ctl_tree.h - what pubkey, prove, consistency and verify --pubkey share
 * (ledgerctl(1)): a ledger's leaves after its chain verified, checkpoint
 * files, the verifier key from an argument.
 */
#ifndef LF_CTL_TREE_H
#define LF_CTL_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "checkpoint.h"
#include "merkle.h"

/* A ledger's rows as leaves. */
struct ctl_tree {
	merkle_hash *leaves; /* malloc'd */
	uint64_t n;
	char case_id[129];    /* from row 1; "" when the ledger is empty */
	long long good_bytes; /* the rows' bytes */
	bool sealed;	      /* row 1 has an epoch (ctl_tree_load) */
};

/*
 * Open LEDGER: a ledger file, a backing case folder (its ledger.jsonl)
 * or a mounted case folder (a snapshot of its `ledger`).  The fd, or -1
 * (errno).
 */
int ctl_tree_open(const char *cmd, const char *path);

/*
 * Check fd's chain (no key: MACs are not checked) and read its leaves
 * into t.  0 good, 1 the chain does not verify (said on stdout as
 * "bad: ..."), 2 unreadable (stderr).  cmd names the command in messages.
 * signed_rows: rows of a checkpoint whose root the caller then checks
 * against the tree (their canonical form is not checked: ledger_reader
 * in ledger.h); 0 for none.
 */
int ctl_tree_load(const char *cmd, int fd, unsigned long long signed_rows,
		  struct ctl_tree *t);
/* The same for a ledger whose first good_bytes (rows rows) verified. */
int ctl_tree_load_verified(const char *cmd, int fd, unsigned long long rows,
			   long long good_bytes, struct ctl_tree *t);
void ctl_tree_free(struct ctl_tree *t);

/* Read a whole small file (at most max bytes).  malloc'd, NUL-ended. */
char *ctl_tree_slurp(const char *path, size_t max, size_t *len);
char *ctl_tree_slurp_at(int dirfd, const char *path, size_t max, size_t *len);

/*
 * The verifier key: arg is a vkey, or the path of a file holding one.
 * 0, or 2 said on stderr.
 */
int ctl_tree_vkey(const char *cmd, const char *arg, struct note_key *k);

/* Signing key and name from the host key path (pubkey).  0, or 2. */
int ctl_tree_own_key(const char *cmd, const char *host_key_path,
		     struct note_key *k);

/*
 * The checkpoints kept in a backing case folder's checkpoints/ (dirfd),
 * one after another in increasing size, as export carries them.
 * malloc'd, NULL when there are none.
 */
char *ctl_tree_kept_checkpoints(int dirfd, unsigned long long upto,
				size_t *len);

#endif
