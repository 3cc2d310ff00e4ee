/* SPDX-License-Identifier: MIT */
/*
 * test_ledger_scan.c - the member scanner of ledger lines (ledger_scan.h)
 * finds the members after strings of every length with quotes and
 * escapes at every offset, and refuses every cut-short line without
 * reading past it (each line lives in a buffer of exactly its size, so
 * AddressSanitizer sees a byte too far).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ledger_scan.h"

/* A compact row whose "a" member holds text, followed by the members. */
static char *row_with(const char *text)
{
	json_t *row = json_pack(
		"{s:s, s:s, s:i, s:s}", "a", text, "case_id", "c-1", "row", 7,
		"mac",
		"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
	char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);

	json_decref(row);
	cr_assert_not_null(s);
	return s;
}

/* The same bytes in a buffer of exactly n bytes (no terminator). */
static char *exact_copy(const char *s, size_t n)
{
	char *b = malloc(n ? n : 1);

	cr_assert_not_null(b);
	memcpy(b, s, n);
	return b;
}

/* Texts: runs of plain bytes with one special byte at every offset. */
static void text_at(char *out, size_t len, size_t at, char special)
{
	memset(out, 'x', len);
	out[len] = '\0';
	if (at < len)
		out[at] = special;
}

Test(ledger_scan, members_after_strings_with_quotes_and_escapes_at_every_offset)
{
	static const char specials[] = {'"', '\\', 'x', '\n', '{', '}'};
	char text[80];
	size_t len, at, k;

	for (len = 0; len < 70; len++) {
		for (at = 0; at <= len; at++) {
			for (k = 0; k < sizeof(specials); k++) {
				char *s, *b;
				struct ledger_fields f;
				const char *err = NULL;

				text_at(text, len, at, specials[k]);
				s = row_with(text);
				b = exact_copy(s, strlen(s));
				cr_assert_eq(ledger_scan_fields(b, strlen(s),
								&f, &err),
					     0, "len %zu at %zu: %s", len, at,
					     err ? err : "");
				cr_assert(f.row.n == 1 && f.row.p[0] == '7');
				cr_assert(f.mac.n == 66 && f.mac.p[1] == '0',
					  "len %zu at %zu", len, at);
				cr_assert_eq(f.case_id.n, 5);
				cr_assert(*f.mac_member == ',');
				free(b);
				free(s);
			}
		}
	}
}

Test(ledger_scan, every_cut_short_line_is_refused_within_its_bytes)
{
	static const char *const texts[] = {
		"",
		"plain",
		"a \"quoted\" \\ line\n",
		"ends in \\",
		"0123456789abcdef0123456789abcdef\\\"\\\\",
		"\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\"x"};
	size_t i, n;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char *s = row_with(texts[i]);
		size_t len = strlen(s);

		for (n = 0; n < len; n++) {
			struct ledger_fields f;
			const char *err = NULL;
			char *b = exact_copy(s, n);

			cr_assert_eq(ledger_scan_fields(b, n, &f, &err), -1,
				     "text %zu cut at %zu of %zu", i, n, len);
			cr_assert_not_null(err);
			free(b);
		}
		free(s);
	}
}

Test(ledger_scan, string_ending_in_a_lone_escape_is_malformed)
{
	/* "a":"...\" runs to the line's end: no closing quote. */
	static const char *const lines[] = {
		"{\"a\":\"0123456789abcdef0123456789\\\"}",
		"{\"a\":\"0123456789abcdef0123456789abcd\\}", "{\"a\":\"\\\"}",
		"{\"a\":\"x\\\\\\\"}"};
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct ledger_fields f;
		const char *err = NULL;
		char *b = exact_copy(lines[i], strlen(lines[i]));

		cr_assert_eq(ledger_scan_fields(b, strlen(lines[i]), &f, &err),
			     -1, "%s", lines[i]);
		free(b);
	}
}

/*
 * ledger_scan_members: each wanted member comes out as jansson would
 * parse it alone (table: line -> the object of the wanted members, or
 * NULL for a line it must not take).
 */
Test(ledger_scan, only_the_wanted_members_are_taken_each_as_jansson_reads_it)
{
	static const char *const want[] = {"phase", "call_id", "n",
					   "neg",   "obj",     "flag",
					   "nil",   "real",    NULL};
	static const struct {
		const char *line;
		const char *expect; /* compact, sorted keys; NULL: refused */
	} cases[] = {
		{"{\"phase\":\"decision\",\"args\":{\"x\":[1,2]},\"n\":42}",
		 "{\"n\":42,\"phase\":\"decision\"}"},
		{"{\"call_id\":\"a\\\"b\\u00e9\",\"neg\":-7,\"flag\":true,"
		 "\"nil\":null}",
		 "{\"call_id\":\"a\\\"b\\u00E9\",\"flag\":true,\"neg\":-7,"
		 "\"nil\":null}"},
		{"{\"obj\":{\"k\":\"v\",\"l\":[null]},\"real\":1.5,\"n\":0}",
		 "{\"n\":0,\"obj\":{\"k\":\"v\",\"l\":[null]},\"real\":1.5}"},
		{"{\"other\":1}", "{}"},
		{"{\"neg\":-0,\"n\":-12}", "{\"n\":-12,\"neg\":0}"},
		{"{\"n\":12345678901234567890123}", NULL}, /* past an integer */
		{"{\"n\":01}", NULL},			   /* a leading zero */
		{"{\"n\":-}", NULL},
		{"{\"flag\":tru}", NULL},
		{"{\"phase\":\"a\",\"phase\":\"b\"}", NULL}, /* twice */
		{"{\"phase\":\"\\ud800\"}", NULL},	     /* no UTF-8 */
		{"{\"phase\":\"decision\"", NULL},
		{"[\"phase\"]", NULL},
		{"{\"phase\" :\"x\"}", NULL}, /* not compact */
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strlen(cases[i].line);
		char *b = exact_copy(cases[i].line, n);
		json_t *got = ledger_scan_members(b, n, want);
		char *text =
			got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS |
						      JSON_ENSURE_ASCII)
			    : NULL;

		if (!cases[i].expect)
			cr_expect_null(got, "line %zu taken: %s", i, text);
		else
			cr_expect_str_eq(text ? text : "(refused)",
					 cases[i].expect, "line %zu: %s", i,
					 text ? text : "(refused)");
		free(text);
		json_decref(got);
		free(b);
	}
}
