/* SPDX-License-Identifier: MIT */
/*
 * request.h - strict parsing of what a target writes: calls, results and
 * registrations (ledgerfs(8) THE VIEW and PROTOCOL).  Everything here is
 * untrusted input: sizes, nesting depth and character sets are bounded
 * before jansson builds anything.
 */
#ifndef LF_REQUEST_H
#define LF_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define REQUEST_MAX_LINE_DEFAULT (1024 * 1024) /* bytes, without newline */
#define REQUEST_MAX_DEPTH	 64	       /* nesting of [] and {} */
#define REQUEST_ID_MAX		 128	       /* case names */
#define REQUEST_CALL_ID_MAX	 256	       /* call ids, bytes */
#define REQUEST_TOOL_MAX	 256	       /* tool names, bytes */
#define REQUEST_NAME_MAX	 255	       /* a file name in the view */

/*
 * A parsed call line {"call_id":..,"tool":..,"args":{..}}.
 * args is a new reference owned by the struct (an empty object when the
 * line had none); release with request_call_clear().
 */
struct request_call {
	char call_id[REQUEST_CALL_ID_MAX + 1];
	char tool[REQUEST_TOOL_MAX + 1];
	json_t *args;
};

/*
 * A parsed result line
 * {"call_id":..,"returned":..,"is_error":bool,"real_executed":bool}.
 * returned is a new reference (json null when absent); is_error defaults
 * to false, real_executed to true.
 */
struct request_result {
	char call_id[REQUEST_CALL_ID_MAX + 1];
	json_t *returned;
	bool is_error;
	bool real_executed;
};

/* A parsed registration {"case_id":..,"token":..}. */
struct request_register {
	char case_id[REQUEST_ID_MAX + 1];
	char token[129];
};

/*
 * True when s[0..len) is a valid case name:
 * 1-128 characters of [A-Za-z0-9._:-], and not "." or "..".
 */
bool request_valid_id(const char *s, size_t len);

/*
 * True when s is a valid call id: 1-256 bytes of UTF-8 without control
 * characters (C0, DEL, C1) and not only blanks (ledgerfs(8) PROTOCOL).
 */
bool request_valid_call_id(const char *s);

/*
 * A call id as a file name in the view (ledgerfs(8) THE VIEW): bytes of
 * [A-Za-z0-9._:-] stay, every other byte is %XX (upper-case hex), and the
 * ids "." and ".." are written %2E and %2E%2E.  Writes at most size - 1
 * bytes and a NUL; returns the length of the whole encoding (which may
 * be more than was written, as snprintf does).
 */
size_t request_id_to_name(const char *id, char *out, size_t size);

/*
 * The call id a view file name stands for, into out (size bytes).  Only
 * the one encoding request_id_to_name() gives is accepted, so one call
 * has one name.  Returns false for any other name.
 */
bool request_id_from_name(const char *name, char *out, size_t size);

/*
 * Parse one line (without its newline; len bytes, need not be
 * NUL-terminated).  max_line: the size limit in bytes (0 means the
 * default).  Errors: LF_TOO_BIG when len > max_line, LF_EINVAL_JSON for
 * everything else that is wrong (empty line, NUL byte, invalid UTF-8,
 * too deep, not an object, unknown or host-owned key, wrong types, bad
 * call id).  why names the problem in one line.  On error *out holds no
 * references.
 */
enum lf_err request_parse_call(const char *line, size_t len, size_t max_line,
			       struct request_call *out, struct lf_why *why);
enum lf_err request_parse_result(const char *line, size_t len, size_t max_line,
				 struct request_result *out,
				 struct lf_why *why);
enum lf_err request_parse_register(const char *line, size_t len,
				   size_t max_line,
				   struct request_register *out,
				   struct lf_why *why);

void request_call_clear(struct request_call *c);
void request_result_clear(struct request_result *r);

#endif
