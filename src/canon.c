/* SPDX-License-Identifier: MIT */
/*
 * canon.c - a JSON value in the ledger's canonical form (ledgerfs-ledger(5)
 * ROWS), written straight into one buffer.
 *
 * Each row is measured before it is taken, written for its MAC, written
 * again with its `mac` as its line, and its call's reply is written too;
 * jansson's json_dumps spent half of the daemon's instructions on it: it
 * calls back per run of characters, decodes every character of every
 * string and records every object and array it enters in a hash table to
 * find loops.  This file writes the same bytes in one pass: runs of plain
 * bytes are copied eight at a time, UTF-8 is checked by jansson's rules,
 * keys are sorted by jansson's comparison; a row's line is its MAC's text
 * with `mac` filled into the place found while writing it.  Whatever
 * jansson itself must decide (a string that is not UTF-8, a real number,
 * a value nested deeper than any row is) goes to jansson, so the output
 * equals json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) for every value
 * (test_canon holds it so, and the ledger fuzzer checks each line it
 * reads).
 */
#include "canon.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CANON_FLAGS (JSON_COMPACT | JSON_SORT_KEYS)
/* Deeper than any row (a target's value is at most REQUEST_MAX_DEPTH):
 * jansson's own walk, which also finds a value that contains itself. */
#define CANON_MAX_DEPTH 256
/* An object of up to this many members sorts its keys on the stack. */
#define CANON_STACK_MEMBERS 32

struct canon_out {
	char *p; /* NULL while only counting */
	size_t n, cap;
	bool counting;
	bool top_in_order; /* the outermost object's members as they stand */
	bool nomem;
	bool to_jansson; /* jansson must decide: start again with it */
	/* canon_dump_slot: where the member named slot_key would go in the
	 * outermost object (CANON_NO_SLOT until found). */
	const struct canon_member *slot_key;
	size_t slot_at;
};

struct canon_member {
	const char *key;
	size_t len;
	json_t *value;
};

/* Room for more bytes and the NUL after them; false once the output is
 * given up (out of memory, or jansson must decide). */
static bool canon_grow(struct canon_out *o, size_t more)
{
	size_t want;
	char *p;

	if (o->nomem || o->to_jansson)
		return false;
	want = o->cap ? o->cap : 4096; /* most rows fit */
	while (want - o->n <= more) {
		if (want > SIZE_MAX / 2) {
			o->nomem = true;
			return false;
		}
		want *= 2;
	}
	p = realloc(o->p, want);
	if (!p) {
		o->nomem = true;
		return false;
	}
	o->p = p;
	o->cap = want;
	return true;
}

static inline void canon_put(struct canon_out *o, const void *s, size_t n)
{
	if (o->counting) {
		o->n += n;
		return;
	}
	if (o->cap - o->n <= n && !canon_grow(o, n))
		return;
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static inline void canon_putc(struct canon_out *o, char c)
{
	if (o->counting) {
		o->n++;
		return;
	}
	if (o->cap - o->n <= 1 && !canon_grow(o, 1))
		return;
	o->p[o->n++] = c;
}

/* The length of the UTF-8 sequence at p, 0 where jansson's utf8_iterate
 * refuses it (a stray continuation, an overlong form, a surrogate, past
 * U+10FFFF, cut short). */
static size_t canon_utf8_len(const unsigned char *p, size_t left)
{
	unsigned char u = p[0];
	uint32_t value;
	size_t count, i;

	if (u >= 0xc2 && u <= 0xdf) {
		count = 2;
		value = u & 0x1f;
	} else if (u >= 0xe0 && u <= 0xef) {
		count = 3;
		value = u & 0x0f;
	} else if (u >= 0xf0 && u <= 0xf4) {
		count = 4;
		value = u & 0x07;
	} else {
		return 0;
	}
	if (count > left)
		return 0;
	for (i = 1; i < count; i++) {
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
		value = (value << 6) + (p[i] & 0x3f);
	}
	if (value > 0x10ffff || (value >= 0xd800 && value <= 0xdfff))
		return 0;
	if ((count == 3 && value < 0x800) || (count == 4 && value < 0x10000))
		return 0;
	return count;
}

/* Whether eight bytes are all plain ASCII, written as they are: none
 * below 0x20, no '"', no '\\', none from 0x80 (the usual bit tricks for
 * "some byte is less than n" and "some byte is zero", which are exact
 * as answers for the whole word). */
static inline bool canon_plain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL;
	const uint64_t high = 0x8080808080808080ULL;
	uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');

	if (w & high)
		return false;
	return !((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) |
		  ((b - ones) & ~b)) &
		 high);
}

/* A string as jansson's dump_string writes it without JSON_ENSURE_ASCII
 * or JSON_ESCAPE_SLASH: '"', '\\' and controls below 0x20 escaped, the
 * rest (DEL and all of UTF-8 too) as is. */
static void canon_string(struct canon_out *o, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	/* The controls jansson writes as a letter; the rest as \u00XX. */
	static const char short_escape[0x20] = {['\b'] = 'b',
						['\f'] = 'f',
						['\n'] = 'n',
						['\r'] = 'r',
						['\t'] = 't'};
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const unsigned char *run = p;
	char esc[6];
	size_t k;

	canon_putc(o, '"');
	while (p < end) {
		unsigned char c;
		uint64_t w;

		if (end - p >= 8) {
			memcpy(&w, p, 8);
			if (canon_plain8(w)) {
				p += 8;
				continue;
			}
		}
		c = *p;
		if (c >= 0x20 && c != '"' && c != '\\') {
			if (c < 0x80) {
				p++;
				continue;
			}
			k = canon_utf8_len(p, (size_t)(end - p));
			if (!k) {
				o->to_jansson = true;
				return;
			}
			p += k;
			continue;
		}
		canon_put(o, run, (size_t)(p - run));
		esc[0] = '\\';
		k = 2;
		if (c == '"' || c == '\\') {
			esc[1] = (char)c;
		} else if (short_escape[c]) {
			esc[1] = short_escape[c];
		} else {
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xf];
			k = 6;
		}
		canon_put(o, esc, k);
		run = ++p;
	}
	canon_put(o, run, (size_t)(p - run));
	canon_putc(o, '"');
}

static void canon_integer(struct canon_out *o, json_int_t v)
{
	char b[24], *e = b + sizeof(b), *q = e;
	unsigned long long u =
		v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		*--q = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--q = '-';
	canon_put(o, q, (size_t)(e - q));
}

/* jansson's key order (dump.c compare_keys): bytes, then length. */
static int canon_key_cmp(const void *a, const void *b)
{
	const struct canon_member *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int r;

	/* Most keys of a row differ in their first byte. */
	if (n && x->key[0] != y->key[0])
		return (unsigned char)x->key[0] < (unsigned char)y->key[0] ? -1
									   : 1;
	r = memcmp(x->key, y->key, n);
	if (r)
		return r;
	return x->len < y->len ? -1 : x->len > y->len;
}

static void canon_sort(struct canon_member *m, size_t n)
{
	struct canon_member t;
	size_t i, j;

	if (n > CANON_STACK_MEMBERS) {
		qsort(m, n, sizeof(*m), canon_key_cmp);
		return;
	}
	for (i = 1; i < n; i++) {
		t = m[i];
		for (j = i; j && canon_key_cmp(&m[j - 1], &t) > 0; j--)
			m[j] = m[j - 1];
		m[j] = t;
	}
}

static void canon_value(struct canon_out *o, const json_t *v, int depth);

static void canon_object(struct canon_out *o, const json_t *v, int depth)
{
	struct canon_member stack[CANON_STACK_MEMBERS], *m = stack;
	size_t n = json_object_size(v), i = 0;
	void *it;

	if (n > CANON_STACK_MEMBERS) {
		m = malloc(n * sizeof(*m));
		if (!m) {
			o->nomem = true;
			return;
		}
	}
	for (it = json_object_iter((json_t *)v); it && i < n;
	     it = json_object_iter_next((json_t *)v, it), i++) {
		m[i].key = json_object_iter_key(it);
		m[i].len = json_object_iter_key_len(it);
		m[i].value = json_object_iter_value(it);
	}
	n = i;
	if (!o->top_in_order || depth)
		canon_sort(m, n);
	canon_putc(o, '{');
	for (i = 0; i < n && !o->nomem && !o->to_jansson; i++) {
		if (i)
			canon_putc(o, ',');
		if (!depth && o->slot_key && o->slot_at == CANON_NO_SLOT) {
			int c = canon_key_cmp(&m[i], o->slot_key);

			if (c == 0)
				o->slot_key = NULL; /* held already: no slot */
			else if (c > 0)
				o->slot_at = o->n; /* before this member */
		}
		canon_string(o, m[i].key, m[i].len);
		canon_putc(o, ':');
		canon_value(o, m[i].value, depth + 1);
	}
	if (!depth && o->slot_key && o->slot_at == CANON_NO_SLOT)
		o->slot_at = o->n; /* last, before the brace */
	canon_putc(o, '}');
	if (m != stack)
		free(m);
}

static void canon_value(struct canon_out *o, const json_t *v, int depth)
{
	char real[64];
	size_t i, n;

	if (depth > CANON_MAX_DEPTH || !v) {
		o->to_jansson = true;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		canon_object(o, v, depth);
		break;
	case JSON_ARRAY:
		canon_putc(o, '[');
		n = json_array_size(v);
		for (i = 0; i < n && !o->nomem && !o->to_jansson; i++) {
			if (i)
				canon_putc(o, ',');
			canon_value(o, json_array_get(v, i), depth + 1);
		}
		canon_putc(o, ']');
		break;
	case JSON_STRING:
		canon_string(o, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		canon_integer(o, json_integer_value(v));
		break;
	case JSON_REAL:
		/* Rare in a row, and jansson's %.17g rules are its own. */
		n = json_dumpb(v, real, sizeof(real),
			       JSON_ENCODE_ANY | CANON_FLAGS);
		if (!n || n > sizeof(real))
			o->to_jansson = true;
		else
			canon_put(o, real, n);
		break;
	case JSON_TRUE:
		canon_put(o, "true", 4);
		break;
	case JSON_FALSE:
		canon_put(o, "false", 5);
		break;
	case JSON_NULL:
		canon_put(o, "null", 4);
		break;
	}
}

/* The text written, NUL-terminated, its length in *len (may be NULL);
 * NULL, the buffer freed, where it was given up. */
static char *canon_finish(struct canon_out *o, size_t *len)
{
	if (o->nomem || o->to_jansson || !(o->cap > o->n || canon_grow(o, 0))) {
		free(o->p);
		return NULL;
	}
	o->p[o->n] = '\0';
	if (len)
		*len = o->n;
	return o->p;
}

char *canon_dump(const json_t *v, size_t *len)
{
	struct canon_out o = {0};
	char *s;

	if (json_is_object(v) || json_is_array(v))
		canon_value(&o, v, 0);
	else
		o.to_jansson = true; /* json_dumps wants a container */
	s = canon_finish(&o, len);
	if (s || o.nomem)
		return s;
	s = json_dumps(v, CANON_FLAGS);
	if (s && len)
		*len = strlen(s);
	return s;
}

size_t canon_size(const json_t *v)
{
	struct canon_out o = {.counting = true};

	if (json_is_object(v) || json_is_array(v))
		canon_value(&o, v, 0);
	else
		o.to_jansson = true;
	/* Out of memory the count stopped short: jansson's answer, as said. */
	if (!o.to_jansson && !o.nomem)
		return o.n;
	return json_dumpb(v, NULL, 0, CANON_FLAGS);
}

char *canon_dump_in_order(const json_t *obj, size_t *len)
{
	struct canon_out o = {.top_in_order = true};

	if (!json_is_object(obj))
		return NULL;
	canon_value(&o, obj, 0);
	return canon_finish(&o, len);
}

char *canon_dump_slot(const json_t *obj, const char *key, size_t *len,
		      size_t *slot)
{
	struct canon_member k = {.key = key, .len = strlen(key)};
	struct canon_out o = {.slot_key = &k, .slot_at = CANON_NO_SLOT};
	char *s;

	*slot = CANON_NO_SLOT;
	if (!json_is_object(obj))
		return canon_dump(obj, len);
	canon_value(&o, obj, 0);
	s = canon_finish(&o, len);
	if (!s)
		return o.nomem ? NULL : canon_dump(obj, len);
	if (o.slot_key)
		*slot = o.slot_at;
	return s;
}

char *canon_fill_slot(const char *text, size_t len, size_t slot,
		      const char *key, const char *value, size_t *out_len)
{
	struct canon_out o = {0};
	bool last, empty;

	if (slot == CANON_NO_SLOT || slot < 1 || slot >= len)
		return NULL;
	last = text[slot] == '}';
	empty = text[slot - 1] == '{';
	canon_put(&o, text, slot);
	if (last && !empty)
		canon_putc(&o, ',');
	canon_string(&o, key, strlen(key));
	canon_putc(&o, ':');
	canon_string(&o, value, strlen(value));
	if (!last)
		canon_putc(&o, ',');
	canon_put(&o, text + slot, len - slot);
	return canon_finish(&o, out_len);
}
