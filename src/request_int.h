/* SPDX-License-Identifier: MIT */
/*
 * request_int.h - the character rules request.c (parsing) and
 * request_id.c (names) share.
 */
#ifndef LF_REQUEST_INT_H
#define LF_REQUEST_INT_H

#include <stdbool.h>

/* A byte of a case name or of a call id that names a file as it is. */
bool request_id_char(unsigned char c);

/*
 * A call id or tool name (ledgerfs(8) PROTOCOL): no control character,
 * C0, DEL or C1 (s is valid UTF-8).
 */
bool request_name_chars_ok(const char *s);

/* Only blanks: ASSERT strips a name and refuses what is left empty. */
bool request_name_blank(const char *s);

#endif
