/* SPDX-License-Identifier: MIT */
/*
 * err.c - reasons and names for the core's error codes.
 */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

enum lf_err lf_fail(struct lf_why *why, enum lf_err code, const char *fmt, ...)
{
	va_list ap;
	char *p;

	if (!why)
		return code;
	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	/* The reason is served as one line in `error`; keep it one line. */
	for (p = why->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

const char *lf_err_name(enum lf_err code)
{
	static const char *const names[LF_ERR_COUNT] = {
		[LF_OK] = "LF_OK",
		[LF_EINVAL_JSON] = "LF_EINVAL_JSON",
		[LF_TOO_BIG] = "LF_TOO_BIG",
		[LF_UNREGISTERED] = "LF_UNREGISTERED",
		[LF_BAD_TOKEN] = "LF_BAD_TOKEN",
		[LF_DUPLICATE] = "LF_DUPLICATE",
		[LF_CLOSED] = "LF_CLOSED",
		[LF_UNKNOWN_CALL] = "LF_UNKNOWN_CALL",
		[LF_NOT_PASS] = "LF_NOT_PASS",
		[LF_CONFLICT] = "LF_CONFLICT",
		[LF_FROZEN] = "LF_FROZEN",
		[LF_EINVAL_DOC] = "LF_EINVAL_DOC",
		[LF_BAD_NAME] = "LF_BAD_NAME",
		[LF_EXISTS] = "LF_EXISTS",
		[LF_NOT_FOUND] = "LF_NOT_FOUND",
		[LF_NOT_READY] = "LF_NOT_READY",
		[LF_BAD_COMMAND] = "LF_BAD_COMMAND",
		[LF_VERIFY] = "LF_VERIFY",
		[LF_IO] = "LF_IO",
		[LF_NOMEM] = "LF_NOMEM",
		[LF_PATTERN_LIMIT] = "LF_PATTERN_LIMIT",
		[LF_LEDGER_FULL] = "LF_LEDGER_FULL",
		[LF_PENDING_FULL] = "LF_PENDING_FULL",
		[LF_MATCH_HEAP_FULL] = "LF_MATCH_HEAP_FULL",
		[LF_EXEC_PENDING] = "LF_EXEC_PENDING",
	};

	if ((unsigned)code >= LF_ERR_COUNT || !names[code])
		return "LF_UNKNOWN";
	return names[code];
}
