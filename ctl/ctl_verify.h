/*
 * ctl_verify.h - the reusable core of `ledgerctl verify`: check one open
 * ledger, print the verdict, return the exit status.
 */
#ifndef LF_CTL_VERIFY_H
#define LF_CTL_VERIFY_H

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

/* rows and head from a mounted case's `status` (dirfd: the case folder).
 * 0, or -1 when it cannot be read. */
int ctl_read_status(int dirfd, unsigned long long *rows,
		    char head[CHAIN_HEX_LEN + 1]);

#endif
