/* SPDX-License-Identifier: MIT */
/*
 * test_canon.c - the canonical form (ledgerfs-ledger(5) ROWS) is exactly
 * what jansson's json_dumps gives with JSON_COMPACT | JSON_SORT_KEYS: a
 * table of edges (every escape, UTF-8 good and bad, key order, numbers,
 * nesting) and random values, each compared byte for byte with jansson.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "canon.h"

#define FLAGS (JSON_COMPACT | JSON_SORT_KEYS)

/* canon_dump and canon_size against jansson for v; v is consumed. */
static void same_as_jansson(json_t *v, const char *what)
{
	char *want = json_dumps(v, FLAGS), *got;
	size_t n = 12345;

	got = canon_dump(v, &n);
	if (!want) {
		cr_assert_null(got, "%s: jansson refuses, canon_dump gave %s",
			       what, got);
		cr_assert_eq(canon_size(v), 0, "%s", what);
	} else {
		cr_assert_not_null(got, "%s: canon_dump refused", what);
		cr_assert_str_eq(got, want, "%s", what);
		cr_assert_eq(n, strlen(want), "%s: length", what);
		cr_assert_eq(canon_size(v), strlen(want), "%s: size", what);
	}
	free(want);
	free(got);
	json_decref(v);
}

/* An object {"k": <string of n bytes>} made without jansson's UTF-8
 * check, so bad bytes reach the dump. */
static json_t *with_bytes(const char *s, size_t n)
{
	json_t *o = json_object();

	json_object_set_new(o, "k", json_stringn_nocheck(s, n));
	return o;
}

Test(canon, every_control_character_is_escaped_as_jansson_does)
{
	char s[0x21];
	int c;

	for (c = 0; c <= 0x20; c++)
		s[c] = (char)c;
	same_as_jansson(with_bytes(s, sizeof(s)), "C0 controls and space");
	same_as_jansson(with_bytes("\"\\/\x7f", 4),
			"quote, backslash, slash, DEL");
	same_as_jansson(with_bytes("", 0), "empty string");
	same_as_jansson(with_bytes("a\0b", 3), "a NUL inside a string");
}

Test(canon, a_byte_to_escape_is_found_at_every_place_in_a_long_string)
{
	/* Each next to plain bytes of neighbouring values, so a test of
	 * eight bytes at a time that misses one shows here. */
	static const char *const odd[] = {
		"\x00", "\x1f", " ", "!",    "\"",	 "#",
		"[",	"\\",	"]", "\x7f", "\xc3\xa9", "\xe2\x82\xac",
		"\x80", "\xff"};
	char s[40], what[64];
	size_t i, at, k;

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		for (at = 0; at < 24; at++) {
			memset(s, 'a', sizeof(s));
			k = strlen(odd[i]) ? strlen(odd[i]) : 1;
			memcpy(s + at, odd[i], k);
			snprintf(what, sizeof(what), "piece %zu at %zu", i, at);
			same_as_jansson(with_bytes(s, 32), what);
		}
}

Test(canon, utf8_is_kept_as_is_and_bad_utf8_is_refused_as_jansson_does)
{
	static const struct {
		const char *bytes;
		const char *what;
	} table[] = {
		{"\xc3\xa9", "two bytes"},
		{"\xe2\x82\xac", "three bytes"},
		{"\xf0\x9f\x98\x80", "four bytes"},
		{"\xf4\x8f\xbf\xbf", "U+10FFFF"},
		{"\xef\xbf\xbf", "U+FFFF"},
		{"\xc2\x80", "U+0080"},
		{"\xc2\x9f", "a C1 control"},
		{"\x80", "a stray continuation byte"},
		{"\xbf", "another stray continuation byte"},
		{"\xc0\xaf", "an overlong slash"},
		{"\xc1\xbf", "overlong, C1"},
		{"\xe0\x80\xaf", "an overlong three-byte form"},
		{"\xf0\x80\x80\xaf", "an overlong four-byte form"},
		{"\xed\xa0\x80", "a UTF-16 surrogate"},
		{"\xed\xbf\xbf", "the last surrogate"},
		{"\xf4\x90\x80\x80", "past U+10FFFF"},
		{"\xf5\x80\x80\x80", "a lead byte past F4"},
		{"\xff", "0xff"},
		{"\xc3", "cut after its lead byte"},
		{"\xe2\x82", "three bytes cut short"},
		{"\xc3\x28", "a lead byte then ASCII"},
		{"ok\xe2\x82\xac\"then\x01", "mixed, with escapes after"},
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		same_as_jansson(
			with_bytes(table[i].bytes, strlen(table[i].bytes)),
			table[i].what);
}

Test(canon, keys_are_sorted_bytewise_then_by_length)
{
	static const char *const keys[] = {
		"mac", "ma",   "mab",	"mac0",	    "maca",    "m",    "",  "Z",
		"z",   "_",    "a b",	"\xc3\xa9", "e",       "\x7f", "A", "0",
		"row", "prev", "phase", "time",	    "case_id", "tool",
	};
	json_t *o = json_object();
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(o, keys[i], json_integer((json_int_t)i));
	/* A key holding a NUL sorts by its bytes, then its length. */
	json_object_setn_new(o, "ma\0c", 4, json_true());
	json_object_setn_new(o, "ma\0", 3, json_false());
	same_as_jansson(o, "key order");
}

Test(canon, objects_of_every_size_sort_alike)
{
	char key[16];
	json_t *o;
	int n, i;

	/* Both sides of the point where sorting leaves the stack. */
	for (n = 0; n <= 40; n++) {
		o = json_object();
		for (i = n; i > 0; i--) {
			snprintf(key, sizeof(key), "k%d", (i * 7919) % 101);
			json_object_set_new(o, key, json_integer(i));
		}
		same_as_jansson(o, "object of n members");
	}
}

Test(canon, numbers_and_constants_are_written_as_jansson_does)
{
	static const json_int_t ints[] = {
		0,   1,		-1,	   9,	      10,
		-10, 123456789, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
	static const double reals[] = {0.0,
				       -0.0,
				       1.0,
				       0.1,
				       -2.5,
				       1e300,
				       5e-324,
				       1e22,
				       123456.789,
				       1e-7,
				       3.0e15,
				       2.0e16,
				       1.7976931348623157e308};
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		json_array_append_new(a, json_integer(ints[i]));
	for (i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
		json_array_append_new(a, json_real(reals[i]));
	json_array_append_new(a, json_true());
	json_array_append_new(a, json_false());
	json_array_append_new(a, json_null());
	json_array_append_new(a, json_array());
	json_array_append_new(a, json_object());
	same_as_jansson(a, "numbers and constants");
}

Test(canon, a_scalar_alone_is_refused_as_json_dumps_refuses_it)
{
	same_as_jansson(json_string("x"), "a string alone");
	same_as_jansson(json_integer(1), "an integer alone");
	same_as_jansson(json_null(), "null alone");
}

Test(canon, deep_values_and_a_value_holding_itself_go_as_jansson_says)
{
	json_t *top = json_array(), *cur = top, *next, *loop;
	int i;

	for (i = 0; i < 600; i++) {
		next = i % 2 ? json_array() : json_object();
		if (json_is_array(cur))
			json_array_append_new(cur, next);
		else
			json_object_set_new(cur, "d", next);
		cur = next;
	}
	same_as_jansson(top, "600 levels");

	/* [[...]] whose inner array holds the outer: jansson refuses it. */
	loop = json_array();
	next = json_array();
	cr_assert_eq(json_array_append(loop, next), 0);
	cr_assert_eq(json_array_append(next, loop), 0);
	cr_assert_null(json_dumps(loop, FLAGS));
	cr_assert_null(canon_dump(loop, NULL));
	cr_assert_eq(canon_size(loop), 0);
	json_array_clear(next);
	json_decref(next);
	json_decref(loop);
}

/* A small PRNG so a failure names a seed that repeats. */
static uint64_t rnd_state;
/* Strings jansson's own constructor would take, only. */
static bool rnd_utf8_only;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rnd_state >> 33) % n;
}

static json_t *random_value(int depth);

static json_t *random_string(void)
{
	static const char *const pieces[] = {"a",
					     "Z",
					     " ",
					     "\"",
					     "\\",
					     "/",
					     "\n",
					     "\t",
					     "\x01",
					     "\x1f",
					     "\x7f",
					     "\xc3\xa9",
					     "\xe2\x82\xac",
					     "\xf0\x9f\x98\x80",
					     "tool",
					     "mac",
					     "\x80",
					     "\xc0\xaf",
					     "\xed\xa0\x80",
					     "\xff"};
	char buf[64];
	size_t n = 0, k;
	uint32_t parts = rnd(8), i;
	/* Now and then a string jansson's own constructor would refuse. */
	bool allow_bad = rnd(10) == 0 && !rnd_utf8_only;

	for (i = 0; i < parts; i++) {
		const char *p = pieces[rnd(allow_bad ? 20 : 16)];

		k = strlen(p);
		if (n + k > sizeof(buf))
			break;
		memcpy(buf + n, p, k);
		n += k;
	}
	return json_stringn_nocheck(buf, n);
}

static json_t *random_value(int depth)
{
	json_t *v, *k;
	uint32_t n, i;

	switch (depth > 5 ? rnd(5) : rnd(7)) {
	case 0:
		return json_integer((json_int_t)rnd(1u << 31) - (1 << 30));
	case 1:
		return random_string();
	case 2:
		return rnd(2) ? json_true() : json_null();
	case 3:
		return json_real((double)rnd(100000) / (rnd(1000) + 1));
	case 4:
		return json_false();
	case 5:
		v = json_array();
		n = rnd(6);
		for (i = 0; i < n; i++)
			json_array_append_new(v, random_value(depth + 1));
		return v;
	default:
		v = json_object();
		n = rnd(20);
		for (i = 0; i < n; i++) {
			k = random_string();
			json_object_setn_new_nocheck(v, json_string_value(k),
						     json_string_length(k),
						     random_value(depth + 1));
			json_decref(k);
		}
		return v;
	}
}

Test(canon, random_values_equal_jansson_byte_for_byte)
{
	char what[64];
	json_t *o;
	int seed;

	for (seed = 1; seed <= 3000; seed++) {
		rnd_state = (uint64_t)seed;
		o = json_object();
		json_object_set_new(o, "v", random_value(0));
		json_object_set_new(o, "w", random_value(0));
		snprintf(what, sizeof(what), "seed %d", seed);
		same_as_jansson(o, what);
	}
}

static int key_order(const void *a, const void *b)
{
	const json_t *const *x = a, *const *y = b;
	size_t lx = json_string_length(*x), ly = json_string_length(*y);
	int r = memcmp(json_string_value(*x), json_string_value(*y),
		       lx < ly ? lx : ly);

	return r ? r : (lx > ly) - (lx < ly);
}

/* v with every object's keys inserted in jansson's sorted order. */
static json_t *sorted_deep_copy(const json_t *v)
{
	json_t *out, **keys, *e;
	const char *k;
	size_t i, n, kl;
	void *tmp;

	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, e)
		{
			json_array_append_new(out, sorted_deep_copy(e));
		}
		return out;
	}
	if (!json_is_object(v))
		return json_incref((json_t *)v);
	n = json_object_size(v);
	keys = calloc(n + 1, sizeof(*keys));
	i = 0;
	json_object_keylen_foreach_safe((json_t *)v, tmp, k, kl, e)
	{
		keys[i++] = json_stringn_nocheck(k, kl);
	}
	qsort(keys, n, sizeof(*keys), key_order);
	out = json_object();
	for (i = 0; i < n; i++) {
		json_object_setn_new_nocheck(
			out, json_string_value(keys[i]),
			json_string_length(keys[i]),
			sorted_deep_copy(
				json_object_getn(v, json_string_value(keys[i]),
						 json_string_length(keys[i]))));
		json_decref(keys[i]);
	}
	free(keys);
	return out;
}

Test(canon, in_order_keeps_the_outer_members_order_and_sorts_within)
{
	json_t *o, *copy;
	char *got, *want, key[8];
	int seed, i, n;

	rnd_utf8_only = true;
	for (seed = 1; seed <= 1000; seed++) {
		rnd_state = (uint64_t)seed;
		o = json_object();
		n = (int)rnd(12);
		/* Keys in no sorted order: z9, a8, m7, ... */
		for (i = 0; i < n; i++) {
			snprintf(key, sizeof(key), "%c%d", "zamyb"[i % 5],
				 n - i);
			json_object_set_new(o, key, random_value(1));
		}
		/* The outer object keeps its order; all within it sorted. */
		copy = json_object();
		{
			const char *k;
			json_t *v;

			json_object_foreach(o, k, v)
			{
				json_object_set_new(copy, k,
						    sorted_deep_copy(v));
			}
		}
		want = json_dumps(copy, JSON_COMPACT | JSON_PRESERVE_ORDER);
		got = canon_dump_in_order(o, NULL);
		cr_assert_not_null(want, "seed %d", seed);
		cr_assert_not_null(got, "seed %d", seed);
		cr_assert_str_eq(got, want, "seed %d", seed);
		free(got);
		free(want);
		json_decref(copy);
		json_decref(o);
	}
}

Test(canon, in_order_leaves_to_jansson_what_jansson_must_decide)
{
	json_t *o = json_object();

	json_object_set_new(o, "b", json_stringn_nocheck("\xff", 1));
	cr_assert_null(canon_dump_in_order(o, NULL));
	json_decref(o);
	cr_assert_null(canon_dump_in_order(json_true(), NULL));
}

Test(canon, a_member_filled_into_its_slot_equals_the_whole_written_again)
{
	static const char *const keys[] = {"mac",  "a",	  "m", "ma", "mab",
					   "mac0", "mad", "z", "",   "\x7f"};
	char *text, *filled, *want, what[64];
	size_t len, slot, n, k;
	json_t *o;
	int seed;

	rnd_utf8_only = true;
	for (seed = 1; seed <= 2000; seed++) {
		rnd_state = (uint64_t)seed;
		o = json_object();
		/* Keys on both sides of the slot, or none at all. */
		for (k = rnd(6); k > 0; k--)
			json_object_set_new(o, keys[1 + rnd(9)],
					    random_value(1));
		text = canon_dump_slot(o, "mac", &len, &slot);
		cr_assert_not_null(text);
		cr_assert_neq(slot, CANON_NO_SLOT, "seed %d", seed);
		filled = canon_fill_slot(text, len, slot, "mac", "e3\"b0", &n);
		json_object_set_new(o, "mac", json_string("e3\"b0"));
		want = json_dumps(o, FLAGS);
		snprintf(what, sizeof(what), "seed %d", seed);
		cr_assert_str_eq(filled, want, "%s", what);
		cr_assert_eq(n, strlen(want), "%s", what);
		/* Held already: no slot, and the text is the object's. */
		free(text);
		text = canon_dump_slot(o, "mac", &len, &slot);
		cr_assert_eq(slot, CANON_NO_SLOT, "%s", what);
		cr_assert_str_eq(text, want, "%s", what);
		cr_assert_null(
			canon_fill_slot(text, len, slot, "mac", "x", NULL));
		free(text);
		free(filled);
		free(want);
		json_decref(o);
	}
}
