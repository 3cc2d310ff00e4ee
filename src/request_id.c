/* SPDX-License-Identifier: MIT */
/*
 * request_id.c - the names a target gives (ledgerfs(8) PROTOCOL): case
 * names and call ids, and the one file name each call id has under
 * calls/ and replies/ (ledgerfs(8) THE VIEW).
 */
#include "request.h"
#include "request_int.h"

#include <string.h>

bool request_id_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
	       c == '-';
}

bool request_valid_id(const char *s, size_t len)
{
	size_t i;

	if (!s || len < 1 || len > REQUEST_ID_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!request_id_char((unsigned char)s[i]))
			return false;
	/* They become file names. */
	if ((len == 1 && s[0] == '.') ||
	    (len == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	return true;
}

/*
 * A call id or tool name (ledgerfs(8) PROTOCOL): what ASSERT takes, 1..max
 * bytes of UTF-8 without control characters, not only blanks.  The line
 * is valid UTF-8 already, so a C1 control is the pair C2 80..C2 9F.
 */
bool request_name_chars_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			return false;
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return false;
	}
	return true;
}

/* ASSERT strips a name and refuses what is left empty. */
bool request_name_blank(const char *s)
{
	return s[strspn(s, " ")] == '\0';
}

bool request_valid_call_id(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n >= 1 && n <= REQUEST_CALL_ID_MAX && request_name_chars_ok(s) &&
	       !request_name_blank(s);
}

size_t request_id_to_name(const char *id, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	bool dots = strcmp(id, ".") == 0 || strcmp(id, "..") == 0;
	size_t n = 0, kept = 0;

	for (; *id; id++) {
		unsigned char c = (unsigned char)*id;
		char unit[3] = {(char)c};
		size_t k = 1;

		if (dots || !request_id_char(c)) {
			unit[0] = '%';
			unit[1] = hex[c >> 4];
			unit[2] = hex[c & 15];
			k = 3;
		}
		/* Never split a %XX: a cut name stays a clean prefix. */
		if (n == kept && n + k < size) {
			memcpy(out + n, unit, k);
			kept += k;
		}
		n += k;
	}
	if (size)
		out[kept] = '\0';
	return n;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool request_id_from_name(const char *name, char *out, size_t size)
{
	char again[REQUEST_NAME_MAX + 1];
	const char *p;
	size_t n = 0;

	if (!size)
		return false;
	for (p = name; *p; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			int hi = hex_value(p[1]);
			int lo = hi < 0 ? -1 : hex_value(p[2]);

			if (lo < 0)
				return false;
			c = hi << 4 | lo;
			p += 2;
		}
		if (c == 0 || n + 1 >= size)
			return false;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	if (!request_valid_call_id(out))
		return false;
	/* One call, one name: refuse %41 for A and the like. */
	return request_id_to_name(out, again, sizeof(again)) < sizeof(again) &&
	       strcmp(again, name) == 0;
}
