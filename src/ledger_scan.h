/* SPDX-License-Identifier: MIT */
/*
 * ledger_scan.h - a ledger line's members found without a full parse
 * (ledger_scan.c); for the ledger's own reading, not for other modules.
 */
#ifndef LF_LEDGER_SCAN_H
#define LF_LEDGER_SCAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* One top-level member's value as it appears in the line (quotes kept). */
struct ledger_tok {
	const char *p;
	size_t n;
};

/* The members the scanner picks out of a line. */
struct ledger_fields {
	struct ledger_tok case_id, row, prev, mac, time, phase, epoch;
	const char *mac_member; /* the ',' in front of "mac" */
	const char *mac_end;	/* one past the mac value */
};

/*
 * Pick the members out of a compact top-level object.  0, or -1 with
 * *err saying what is wrong with the shape.
 */
int ledger_scan_fields(const char *s, size_t n, struct ledger_fields *f,
		       const char **err);
/* A JSON string token ("..."). */
bool ledger_is_str(const struct ledger_tok *t);
/* Is the token exactly the string s, quoted ("case_closed" for s)? */
bool ledger_tok_is(const struct ledger_tok *t, const char *s);
/* A string token of 64 lower-case hex digits. */
bool ledger_is_hex_tok(const struct ledger_tok *t);
/* A canonical row number: digits, no leading zero.  0 if not one. */
unsigned long long ledger_row_number(const struct ledger_tok *t);
/*
 * Only the named top-level members (a NULL-terminated list) of a compact
 * object, each value parsed alone, as a new object; NULL when the line
 * is not such an object (or a value not JSON, a member twice, no memory).
 * For rows whose authenticity is settled (ledger_reader in ledger.h): it
 * does not judge the members it skips.
 */
json_t *ledger_scan_members(const char *s, size_t n,
			    const char *const *members);
/* Is the line one JSON object that serializes back to the same bytes? */
bool ledger_is_canonical(const char *s, size_t n);

#endif
