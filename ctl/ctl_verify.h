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
#include "ratchet.h"

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
	/* Forward-secure seals (ledgerfs-ledger(5) SEALS). */
	bool sealed;			    /* the ledger is sealed */
	enum ratchet_keys_mode seal_mode;   /* the seal keys held */
	unsigned long long seal_epoch;	    /* CURRENT: the key's epoch */
	unsigned long long mac_rows;	    /* rows whose MAC was checked */
	unsigned long long epochs;	    /* epochs the rows span */
	char seal_fp[CHAIN_FP_LEN + 1];	    /* K0's, from row 1 */
	char seal_key_fp[CHAIN_FP_LEN + 1]; /* --seal-key's */
	long long good_bytes;		    /* the rows' bytes */
	/* Signed checkpoints checked with the host's own key; -1: none. */
	long long checkpoints;
	unsigned long long checkpoint_rows; /* the latest one's size */
};

/*
 * Check the ledger read from fd like ctl_verify_fd, printing nothing.
 * A MAC that fails under a key whose fingerprint differs from the one
 * the ledger records is "wrong_key" (status 2), not "bad".  Returns
 * v->status.
 */
int ctl_verify_check(int fd, const unsigned char *key, const char *head_arg,
		     struct ctl_verdict *v);

/* The same with the seal keys held for a sealed ledger (NULL: none). */
int ctl_verify_check_sealed(int fd, const unsigned char *key,
			    const struct ratchet_keys *seal,
			    const char *head_arg, struct ctl_verdict *v);

/*
 * K0 from a --seal-key file (32 raw bytes, or 64 hex digits and an
 * optional newline) as RATCHET_KEYS_ALL.  0, or 2 (said on stderr).
 */
int ctl_seal_read_k0(const char *path, struct ratchet_keys *out);

/*
 * The current K(e) from the seal key file beside LEDGER (a case folder's
 * ledger.jsonl.seal, or FILE.seal), unwrapped with the host key; where
 * gets the file's path.  0 read, 1 there is none, 2 error (said).
 */
int ctl_seal_read_current(const char *ledger,
			  const unsigned char host_key[CHAIN_KEY_BYTES],
			  struct ratchet_keys *out, char *where, size_t size);

struct ledger_report;

/* ctl/ctl_verify_seal.c: what the seal walk found, into the verdict. */
void ctl_verdict_seal(struct ctl_verdict *v, const struct ledger_report *rep,
		      const struct ratchet_keys *seal);

/* A sealed ledger that fails only under a --seal-key whose fingerprint
 * is not row 1's: the wrong seal key (status 2), not a forgery. */
bool ctl_wrong_seal_key(int fd, struct ctl_verdict *v);

/* The seal keys for LEDGER: --seal-key's K0, else the seal key file's
 * current key (needs the host key).  0, or 2 (said). */
int ctl_pick_seal(const char *ledger, const char *seal_path,
		  const unsigned char *key, struct ratchet_keys *seal,
		  char *where, size_t size);

/*
 * The ledger's chain verifies without a key: then the MACs failed under
 * the wrong key (WHAT "key" or "seal key"), not a forgery; v says so
 * (status 2, wrong_key).  false when the chain fails too.
 */
bool ctl_verdict_wrong_key(int fd, struct ctl_verdict *v, const char *what,
			   const char *sealed_fp, const char *checked_fp);

/* What a sealed ledger's check covered, on stderr. */
void ctl_say_seal(const struct ctl_verdict *v, const char *where);

/*
 * An open case's backing folder keeps its seal key file: a sealed ledger
 * in a case folder (ledger) that does not end in case_closed, checked
 * with the host key but with no seal key file found (where ""), had it
 * removed, and its current epoch's MACs went unchecked.  Marks v bad.
 */
void ctl_seal_file_required(const char *ledger, int fd, const char *where,
			    struct ctl_verdict *v);

/* The verdict as ledgerfs-ledger(5) LEDGERCTL VERIFY prints it; its
 * status. */
int ctl_verdict_print(const struct ctl_verdict *v, const char *label);

/*
 * `ledgerctl verify DIR` of a mounted case folder (ctl_verify_mount.c):
 * a snapshot of its ledger checked against the daemon's status, with
 * head_arg (ROWS:HEX or NULL) and the seal keys (may be empty).  0, 1
 * or 2, printed as text or JSON.
 */
int ctl_verify_mounted(const char *dir, const char *head_arg, bool json,
		       const struct ratchet_keys *seal);

/*
 * `verify --key`: the signed checkpoints that travel with a ledger (a
 * backing case folder's `checkpoint` and checkpoints/, when dir is not
 * NULL, else text, an export's members one after another, NULL or empty
 * when it has none), checked
 * against fd's tree with the verifier key of the signing key beside
 * host_key_path (ctl/ctl_verify_pub.c).  Into v: the count, or status 1
 * and the reason.  Without a signing key to read they are not checked
 * (said on stderr; v->checkpoints stays -1).  Returns v->status.
 */
int ctl_verify_own_checkpoints(const char *dir, const char *text, size_t len,
			       const char *label, int fd,
			       const char *host_key_path,
			       struct ctl_verdict *v);

/*
 * --require-mac: a verdict of ok that checked no MAC (no key reached a
 * row: a sealed ledger's closed epochs without --seal-key) becomes
 * status 2, said on stderr.  Returns v->status.
 */
int ctl_verify_require_mac(struct ctl_verdict *v);

/* The verdict as the JSON object of `verify --json` (a new reference). */
json_t *ctl_verdict_json(const struct ctl_verdict *v, const char *ledger,
			 const char *key_path, const char *key_source);

/* Print o (taken) as `verify --json` prints its one object. */
void ctl_verify_json_print(json_t *o);
extern bool ctl_verify_json_printed;

/* FILE.tar from `ledgerctl export` (ctl/ctl_export_read.c)? */
bool ctl_is_tar(const char *path);

/*
 * An export's ledger and checkpoints, for `verify --pubkey` (ledgerctl(1)
 * PUBLIC VERIFICATION), once every member matches SHA256SUMS (else
 * "bad: NAME: mismatch" and the like are printed): *ledger_fd a memfd of
 * ledger.jsonl's bytes; *ckpts the `checkpoint` and `checkpoints`
 * members' text one after the other (malloc'd; NULL when neither).
 * 0, 1 (bad) or 2 (unreadable; said on standard error).
 */
int ctl_export_public(const char *path, int *ledger_fd, char **ckpts,
		      size_t *ckpts_len);

/* `ledgerctl verify FILE.tar` (ctl/ctl_export_read.c): 0, 1 or 2.  seal_path:
 * --seal-key's K0 file, or NULL. */
int ctl_verify_tar(const char *path, const char *key_path,
		   const char *seal_path, bool json, bool require_mac);

/* A mounted case's `ledger` (dirfd: its folder) copied whole into a new
 * memfd: one snapshot.  The descriptor, or -1. */
int ctl_snapshot_ledger(int dirfd);

/* rows and head from a mounted case's `status` (dirfd: the case folder),
 * and in fault the reason when the daemon failed the case at load ("at
 * load: ..."; else empty).  0, or -1 when it cannot be read. */
#define CTL_FAULT_MAX 400
int ctl_read_status(int dirfd, unsigned long long *rows,
		    char head[CHAIN_HEX_LEN + 1], char fault[CTL_FAULT_MAX]);

#endif
