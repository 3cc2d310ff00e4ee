/* SPDX-License-Identifier: MIT */
/*
 * err.h - the core's error codes and the one-line reason that goes with them.
 *
 * The core never speaks errno: it returns an enum lf_err and fills a
 * struct lf_why.  Only fs/ops.c turns these into errno (ledgerfs(8)
 * PROTOCOL, Errors of the target folder), so the errno table stays one
 * table in code and the core is testable unmounted.
 */
#ifndef LF_ERR_H
#define LF_ERR_H

#include <stddef.h>

enum lf_err {
	LF_OK = 0,
	LF_EINVAL_JSON,	 /* malformed line, wrong shape, unknown/host field */
	LF_TOO_BIG,	 /* request line over the limit (EFBIG) */
	LF_UNREGISTERED, /* request/result before registration (EACCES) */
	LF_BAD_TOKEN,	 /* registration with wrong case id or token (EACCES) */
	LF_DUPLICATE,	 /* duplicate call id (EEXIST) */
	LF_CLOSED,	 /* case closed or failed (EPIPE) */
	LF_UNKNOWN_CALL, /* result for a call that was never made (ENOENT) */
	LF_NOT_PASS,	 /* result for mock/block or a missing call (EINVAL) */
	LF_CONFLICT,	 /* conflicting repeat of a result (EEXIST) */
	LF_FROZEN,	 /* policy/mocks after registration (EBUSY) */
	LF_EINVAL_DOC,	 /* malformed policy or mocks document (EINVAL) */
	LF_BAD_NAME,	 /* case name or call id outside the allowed set */
	LF_EXISTS,	 /* a case of that name exists (EEXIST) */
	LF_NOT_FOUND,	 /* no such case / call (ENOENT) */
	LF_NOT_READY,	 /* case has no valid policy yet (EACCES on register) */
	LF_BAD_COMMAND,	 /* unknown ctl command (EINVAL) */
	LF_VERIFY,	 /* a ledger does not verify */
	LF_IO,		 /* read/write/fdatasync failed (EIO) */
	LF_NOMEM,	 /* allocation failed (ENOMEM) */
	LF_PATTERN_LIMIT, /* a call's matching ran out of budget (a reply) */
	LF_LEDGER_FULL,	  /* a row would pass the case's --max-ledger (EFBIG) */
	LF_PENDING_FULL,  /* partial lines past --max-pending (ENOBUFS) */
	LF_MATCH_HEAP_FULL, /* matching's shared heap in use now (ENOBUFS) */
	LF_EXEC_PENDING,    /* the call waits for its host executor (case.h) */
	LF_ERR_COUNT
};

/* A one-line reason, always NUL-terminated, never containing a newline. */
struct lf_why {
	char msg[256];
};

/* printf into why (may be NULL); newlines are replaced by spaces. Returns code. */
enum lf_err lf_fail(struct lf_why *why, enum lf_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Stable name of a code, e.g. "LF_DUPLICATE" (for tests and ledger rows). */
const char *lf_err_name(enum lf_err code);

#endif
