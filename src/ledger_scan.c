/* SPDX-License-Identifier: MIT */
/*
 * ledger_scan.c - one ledger line read alone, without a full JSON parse:
 * the top-level members a check needs, found lexically in a compact
 * object; the shape of its tokens; and whether it is in canonical form
 * (ledgerfs-ledger(5) ROWS).  Pure functions of the line, so helper
 * threads call them too (ledger_hashes.h).
 */
#include "ledger_scan.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ledger.h"

/*
 * Skip a JSON string starting at *p == '"'.  End past the quote or NULL.
 * Sixteen bytes at a time where the line has them (SSE2 is part of every
 * x86-64), else a byte at a time: a row's long strings (its hashes, MAC,
 * time and reason) are most of its bytes.
 */
static inline __attribute__((always_inline)) const char *
ledger_skip_string(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i quote = _mm_set1_epi8('"'), esc = _mm_set1_epi8('\\');
	__m128i v;
	unsigned hit;

	for (p++; end - p >= 16;) {
		v = _mm_loadu_si128((const __m128i *)(const void *)p);
		hit = (unsigned)_mm_movemask_epi8(_mm_or_si128(
			_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, esc)));
		if (!hit) {
			p += 16;
			continue;
		}
		p += __builtin_ctz(hit);
		if (*p == '"')
			return p + 1;
		/* An escape: the next byte is data, whatever it is. */
		if (++p == end)
			return NULL;
		p++;
	}
	p--; /* the byte loop starts by stepping over one byte */
#endif
	for (p++; p < end; p++) {
		if (*p == '"')
			return p + 1;
		/* An escape: the next byte is data, whatever it is. */
		if (*p == '\\' && ++p == end)
			return NULL;
	}
	return NULL;
}

/* Skip one value (lexically; the MAC or the parse judges its insides). */
static const char *ledger_skip_value(const char *p, const char *end)
{
	int depth = 0;

	if (p >= end)
		return NULL;
	if (*p == '"')
		return ledger_skip_string(p, end);
	if (*p == '{' || *p == '[') {
		for (; p < end; p++) {
			if (*p == '"') {
				p = ledger_skip_string(p, end);
				if (!p)
					return NULL;
				p--;
			} else if (*p == '{' || *p == '[') {
				depth++;
			} else if (*p == '}' || *p == ']') {
				if (--depth == 0)
					return p + 1;
			}
		}
		return NULL;
	}
	/* A scalar: runs to the member separator. */
	while (p < end && *p != ',' && *p != '}' && *p != '"' && *p != '{' &&
	       *p != '[' && *p != ']')
		p++;
	return p;
}

static bool ledger_key_is(const char *k, size_t kn, const char *name)
{
	size_t n = strlen(name);

	return kn == n + 2 && memcmp(k + 1, name, n) == 0;
}

/*
 * Pick the members out of a compact top-level object.  0, or -1 with
 * *err saying what is wrong with the shape.
 */
int ledger_scan_fields(const char *s, size_t n, struct ledger_fields *f,
		       const char **err)
{
	const char *p = s, *end = s + n, *k, *v, *member;
	struct ledger_tok *slot;
	size_t kn;

	memset(f, 0, sizeof(*f));
	if (n < 2 || *p != '{' || end[-1] != '}') {
		*err = "not a JSON object";
		return -1;
	}
	p++;
	for (;;) {
		member = p;
		if (p >= end || *p != '"') {
			*err = "malformed member";
			return -1;
		}
		k = p;
		p = ledger_skip_string(p, end);
		if (!p || p >= end || *p != ':') {
			*err = "malformed member";
			return -1;
		}
		kn = (size_t)(p - k);
		v = ++p;
		p = ledger_skip_value(p, end);
		if (!p || p == v || p >= end) {
			*err = "malformed value";
			return -1;
		}
		slot = NULL;
		if (ledger_key_is(k, kn, "case_id"))
			slot = &f->case_id;
		else if (ledger_key_is(k, kn, "row"))
			slot = &f->row;
		else if (ledger_key_is(k, kn, "prev"))
			slot = &f->prev;
		else if (ledger_key_is(k, kn, "mac"))
			slot = &f->mac;
		else if (ledger_key_is(k, kn, "time"))
			slot = &f->time;
		else if (ledger_key_is(k, kn, "phase"))
			slot = &f->phase;
		else if (ledger_key_is(k, kn, "epoch"))
			slot = &f->epoch;
		if (slot) {
			if (slot->p) {
				*err = "duplicate member";
				return -1;
			}
			slot->p = v;
			slot->n = (size_t)(p - v);
			if (slot == &f->mac) {
				f->mac_member = member - 1;
				f->mac_end = p;
			}
		}
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '}' && p + 1 == end)
			return 0;
		*err = "malformed object";
		return -1;
	}
}

bool ledger_tok_is(const struct ledger_tok *t, const char *s)
{
	size_t n = strlen(s);

	return t->p && t->n == n + 2 && t->p[0] == '"' &&
	       !memcmp(t->p + 1, s, n) && t->p[n + 1] == '"';
}

bool ledger_is_str(const struct ledger_tok *t)
{
	return t->p && t->n >= 2 && t->p[0] == '"' && t->p[t->n - 1] == '"';
}

bool ledger_is_hex_tok(const struct ledger_tok *t)
{
	unsigned bad = 0;
	size_t i;

	if (!ledger_is_str(t) || t->n != CHAIN_HEX_LEN + 2)
		return false;
	/* Branch-free: lower-case hex digits only. */
	for (i = 1; i <= CHAIN_HEX_LEN; i++) {
		unsigned char c = (unsigned char)t->p[i];

		bad |= (unsigned)((unsigned char)(c - '0') > 9 &&
				  (unsigned char)(c - 'a') > 5);
	}
	return !bad;
}

/* A canonical row number: digits, no leading zero.  0 if not one. */
unsigned long long ledger_row_number(const struct ledger_tok *t)
{
	unsigned long long v = 0;
	size_t i;

	if (!t->p || t->n == 0 || t->n > 19 || (t->p[0] == '0'))
		return 0;
	for (i = 0; i < t->n; i++) {
		if (t->p[i] < '0' || t->p[i] > '9')
			return 0;
		v = v * 10 + (unsigned long long)(t->p[i] - '0');
	}
	return v;
}

/* Is the member key (its token, quotes kept) one of members? */
static bool ledger_key_wanted(const char *k, size_t kn,
			      const char *const *members)
{
	/* Most keys differ from a name at its first byte: no strlen then. */
	for (; *members; members++)
		if (k[1] == (*members)[0] && ledger_key_is(k, kn, *members))
			return true;
	return false;
}

/*
 * One member's value alone.  A string without escapes, an integer and
 * the literals are made directly; anything else (an object, an array, a
 * string with escapes, a real) is parsed by jansson.  NULL if it is not
 * one JSON value.
 */
static json_t *ledger_member_value(const char *v, size_t n)
{
	size_t i;

	if (n >= 2 && v[0] == '"' && !memchr(v + 1, '\\', n - 2))
		return json_stringn(v + 1, n - 2);
	if (n == 4 && !memcmp(v, "true", 4))
		return json_true();
	if (n == 5 && !memcmp(v, "false", 5))
		return json_false();
	if (n == 4 && !memcmp(v, "null", 4))
		return json_null();
	if (n >= 1 && n <= 18 &&
	    (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))) {
		long long x = 0;
		bool neg = v[0] == '-';

		for (i = neg; i < n && v[i] >= '0' && v[i] <= '9'; i++)
			x = x * 10 + (v[i] - '0');
		/* JSON's integers: no leading zero (jansson judges those). */
		if (i == n && i > (size_t)neg &&
		    (v[neg] != '0' || n == (size_t)neg + 1))
			return json_integer(neg ? -x : x);
	}
	return json_loadb(v, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

json_t *ledger_scan_members(const char *s, size_t n, const char *const *members)
{
	const char *p = s, *end = s + n, *k, *v;
	json_t *obj, *val;
	size_t kn;

	if (n < 2 || *p != '{' || end[-1] != '}')
		return NULL;
	obj = json_object();
	if (!obj)
		return NULL;
	for (p++; p < end && *p == '"';) {
		k = p;
		p = ledger_skip_string(p, end);
		if (!p || p >= end || *p != ':')
			break;
		kn = (size_t)(p - k);
		v = ++p;
		p = ledger_skip_value(p, end);
		if (!p || p == v || p >= end)
			break;
		if (ledger_key_wanted(k, kn, members)) {
			char key[64];

			/* Row keys are short and never escaped. */
			if (kn - 2 >= sizeof(key) ||
			    memchr(k + 1, '\\', kn - 2))
				break;
			memcpy(key, k + 1, kn - 2);
			key[kn - 2] = '\0';
			if (json_object_get(obj, key))
				break; /* a member twice */
			val = ledger_member_value(v, (size_t)(p - v));
			/* set_new takes val, and frees it when it fails. */
			if (!val || json_object_set_new(obj, key, val))
				break;
		}
		if (*p == '}' && p + 1 == end)
			return obj;
		if (*p != ',')
			break;
		p++;
	}
	json_decref(obj);
	return NULL;
}

/* Is the line one JSON object that serializes back to the same bytes? */
bool ledger_is_canonical(const char *s, size_t n)
{
	json_t *row =
		json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	char *again = row ? ledger_canonical(row) : NULL;
	bool ok = again && strlen(again) == n && memcmp(again, s, n) == 0;

	free(again);
	json_decref(row);
	return ok;
}
