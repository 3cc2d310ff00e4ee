/* SPDX-License-Identifier: MIT */
/*
 * case_ckpt.h - a case's signed checkpoints (ledgerfs-ledger(5) SIGNED
 * CHECKPOINTS; ledgerfs(8) --key): when they are written, where they are
 * kept, and their check at load.
 */
#ifndef LF_CASE_CKPT_H
#define LF_CASE_CKPT_H

#include <jansson.h>
#include <stdint.h>

#include "checkpoint.h"
#include "sign.h"

struct lf_case;

/* Rows between two checkpoints of an open case, and the longest wait. */
#define CASE_CKPT_EVERY_ROWS 1000
#define CASE_CKPT_EVERY_MS   10000

/* Files in the case's backing folder. */
#define CASE_CKPT_LATEST "checkpoint"
#define CASE_CKPT_DIR	 "checkpoints"

/*
 * The daemon's signing key (seed) and host key fingerprint, set once at
 * start before any case loads.  Process-wide because there is one key per
 * daemon; until it is set no checkpoint is written or checked (unit tests
 * of the case core run without one).
 */
void case_ckpt_set_signer(const unsigned char seed[SIGN_SEED_BYTES],
			  const char *host_fp);

/* The verifier key of the signer, or NULL when none is set. */
const struct note_key *case_ckpt_key(void);

/*
 * After row was appended (under the case lock): a checkpoint when row is
 * a turn or case_closed (kept in checkpoints/ too, flushed) or when the
 * cadence says so.  A checkpoint that cannot be written is said on stderr;
 * the ledger, not the checkpoint, is the record.
 */
void case_ckpt_after_append(struct lf_case *c, const json_t *row);

/*
 * At load, after the ledger verified: rebuild the tree from the rows,
 * then check every stored checkpoint's signature and root.  NULL when all
 * hold, else a malloc'd reason (the case is then loaded failed).
 */
char *case_ckpt_load(struct lf_case *c, int dirfd);

/* The latest checkpoint's text for the view (malloc'd, "" when none). */
char *case_checkpoint_text(struct lf_case *c);

#endif
