/* SPDX-License-Identifier: MIT */
/*
 * test_pattern.c - patterns mean what Python's re.search means (a table
 * checked against CPython 3.11), refuse what Python refuses where PCRE2
 * would read something else, and stay inside their bounds: compile size,
 * nesting, length, and the per-call matching budget.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pattern.h"

/* want: 1 match, 0 no match, -1 refused at compile. */
struct search_case {
	const char *re;
	const char *subject;
	int want;
};

static int search(const char *re, const char *subject, size_t len)
{
	struct pattern *p = NULL;
	struct pattern_budget b;
	struct lf_why why = {{0}};
	bool found = false;
	enum lf_err e;

	e = pattern_compile(re, strlen(re), &p, &why);
	if (e == LF_EINVAL_DOC)
		return -1;
	cr_assert_eq(e, LF_OK, "%s: %s", re, why.msg);
	pattern_budget_init(&b, PATTERN_CALL_MS);
	e = pattern_search(p, subject, len, &b, &found, &why);
	cr_assert_eq(e, LF_OK, "%s: %s", re, why.msg);
	pattern_free(p);
	return found;
}

static enum lf_err compile_only(const char *re, struct lf_why *why)
{
	struct pattern *p = NULL;
	enum lf_err e = pattern_compile(re, strlen(re), &p, why);

	pattern_free(p);
	return e;
}

static void run_table(const struct search_case *tab, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = search(tab[i].re, tab[i].subject,
				 strlen(tab[i].subject));

		cr_expect_eq(got, tab[i].want,
			     "re.search(%s, %s): want %d, got %d", tab[i].re,
			     tab[i].subject, tab[i].want, got);
	}
}

Test(pattern, search_is_python_re_search)
{
	static const struct search_case tab[] = {
		{".*@example\\.com", "bob@example.com", 1},
		{"@example\\.com", "bob@example.org", 0},
		{"^ab", "xab", 0},
		{"ab", "xab", 1},
		{"", "", 1},
		{"^$", "", 1},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, dollar_matches_before_a_final_newline_and_backslash_Z_does_not)
{
	static const struct search_case tab[] = {
		{"a$", "a\n", 1},  {"a$", "a\n\n", 0}, {"a\\Z", "a\n", 0},
		{"a\\Z", "a", 1},  {"a\\z", "a\n", 0}, {"(?m)a$", "a\nb", 1},
		{"a$", "a\nb", 0},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, classes_are_unicode_on_code_points)
{
	static const struct search_case tab[] = {
		{"^\\d$", "\xd9\xa3", 1},     /* ARABIC-INDIC DIGIT THREE */
		{"(?a)^\\d$", "\xd9\xa3", 0}, /* ASCII flag */
		{"^\\w$", "\xc3\xa9", 1},     /* é */
		{"^.$", "\xc3\xa9", 1},	      /* one code point, two bytes */
		{"^..$", "\xc3\xa9", 0},
		{"\\bcaf\xc3\xa9\\b", "un caf\xc3\xa9.", 1},
		{"(?i)\xc3\x89", "\xc3\xa9", 1}, /* É vs é */
		{"^\\s$", "\xe2\x80\x83", 1},	 /* EM SPACE */
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, python_escapes_mean_what_python_means)
{
	static const struct search_case tab[] = {
		{"^\\v$", "\x0b", 1},
		{"^\\v$", "\n", 0},
		{"^\\101$", "A", 1},
		{"^\\0$", "", 0},
		{"^\\x41$", "A", 1},
		{"^\\u00e9$", "\xc3\xa9", 1},
		{"^\\U0001F600$", "\xf0\x9f\x98\x80", 1},
		{"(a)\\1", "aa", 1},
		{"(a)\\1", "ab", 0},
		{"^[\\101]$", "A", 1},
		{"^\\.$", ".", 1},
		{"^\\-$", "-", 1},
		{"^[\\b]$", "\b", 1},
		{"^\\t$", "\t", 1},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, python_repeats_and_braces)
{
	static const struct search_case tab[] = {
		{"^a{,3}$", "aaa", 1},	 {"^a{,3}$", "aaaa", 0},
		{"^a{,}$", "aaaaa", 1},	 {"^a{}$", "a{}", 1},
		{"^a{x}$", "a{x}", 1},	 {"^a{2,}$", "aa", 1},
		{"^a*{x}$", "aa{x}", 1}, {"^a*+$", "aaa", 1},
		{"^(?>a+)b$", "aab", 1}, {"^a+?$", "aa", 1},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, sets_read_brackets_as_python_does)
{
	/* Python: [[:alpha:]] is the set "[:alph" then a literal ']'. */
	static const struct search_case tab[] = {
		{"[[:alpha:]]", ":]", 1},
		{"[[:alpha:]]", "x", 0},
		{"^[]a]$", "]", 1},
		{"^[^]a]$", "b", 1},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, groups_flags_and_conditionals_as_python)
{
	static const struct search_case tab[] = {
		{"(?P<n>a)(?P=n)", "aa", 1},
		{"(?P<n>a)?(?(n)b|c)", "ab", 1},
		{"^(a)?(?(1)b|c)$", "c", 1},
		{"(?i)ABC", "abc", 1},
		{"(?i:A)b", "aB", 0},
		{"(?s)a.b", "a\nb", 1},
		{"a.b", "a\nb", 0},
		{"(?x) a b # comment [ with a bracket\n c", "abc", 1},
		{"(?x)a[ ]b", "a b", 1},
		{"a(?#comment)b", "ab", 1},
		{"(?<=a)b", "ab", 1},
		{"(?<!a)b", "ab", 0},
		{"(?i)(?x) A", "a", 1},
	};
	run_table(tab, sizeof(tab) / sizeof(tab[0]));
}

Test(pattern, syntax_python_refuses_is_refused)
{
	static const char *const tab[] = {
		"a**",	      "a{2}{3}", "x(?i)y",    "\\p{L}", "(?<n>a)",
		"(*ACCEPT)a", "(?R)",	 "\\N{DASH}", "(?L)a",	"\\8",
		"(a)\\2",     "\\400",	 "[a",	      "(a",	"a)",
		"*a",	      "\\b*",	 "^*",	      "\\K",	"\\Qa\\E",
		"(?C1)a",     "(?|a)",	 "(?'n'a)",   "\\x4",	"\\",
		"(?-i)a",     "[\\A]",	 "\\z*",      "\\G",	"\\h",
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct pattern *p = NULL;
		struct lf_why why = {{0}};
		enum lf_err e =
			pattern_compile(tab[i], strlen(tab[i]), &p, &why);

		cr_expect_eq(e, LF_EINVAL_DOC, "%s: accepted", tab[i]);
		cr_expect_null(p);
		cr_expect_null(strchr(why.msg, '\n'));
		pattern_free(p);
	}
}

/* Python takes these; ledgerfs-policy(5) DIFFERENCES FROM ASSERT. */
Test(pattern, lone_surrogates_and_scoped_ascii_are_refused)
{
	struct lf_why why = {{0}};

	cr_expect_eq(compile_only("\\ud800", &why), LF_EINVAL_DOC);
	cr_expect_eq(compile_only("(?a:a)", &why), LF_EINVAL_DOC);
}

Test(pattern, nested_counted_repeats_are_refused_at_compile)
{
	struct lf_why why = {{0}};

	cr_assert_eq(compile_only("((a{1,100}){1,100}){1,100}", &why),
		     LF_EINVAL_DOC);
	cr_assert(strstr(why.msg, "bound"), "%s", why.msg);
	cr_assert_eq(compile_only("(?:a|b){1,1500}", &why), LF_EINVAL_DOC);
	cr_assert(strstr(why.msg, "bound"), "%s", why.msg);
	cr_assert_eq(compile_only("(a{1,100}){1,100}", &why), LF_OK);
}

Test(pattern, nesting_beyond_the_bound_is_refused)
{
	char deep[2 * (PATTERN_MAX_NEST + 1) + 2], ok[2 * PATTERN_MAX_NEST + 2];
	struct lf_why why = {{0}};
	int i;

	for (i = 0; i <= PATTERN_MAX_NEST; i++) {
		deep[i] = '(';
		deep[2 * (PATTERN_MAX_NEST + 1) - i] = ')';
	}
	deep[PATTERN_MAX_NEST + 1] = 'a';
	deep[2 * (PATTERN_MAX_NEST + 1) + 1] = '\0';
	cr_assert_eq(compile_only(deep, &why), LF_EINVAL_DOC, "%s", deep);
	for (i = 0; i < PATTERN_MAX_NEST; i++) {
		ok[i] = '(';
		ok[2 * PATTERN_MAX_NEST - i] = ')';
	}
	ok[PATTERN_MAX_NEST] = 'a';
	ok[2 * PATTERN_MAX_NEST + 1] = '\0';
	cr_assert_eq(compile_only(ok, &why), LF_OK, "%s: %s", ok, why.msg);
}

Test(pattern, source_over_the_length_bound_is_refused)
{
	char *long_re = malloc(PATTERN_MAX_SOURCE + 2);
	struct lf_why why = {{0}};

	memset(long_re, 'a', PATTERN_MAX_SOURCE + 1);
	long_re[PATTERN_MAX_SOURCE + 1] = '\0';
	cr_assert_eq(compile_only(long_re, &why), LF_EINVAL_DOC);
	long_re[PATTERN_MAX_SOURCE] = '\0';
	cr_assert_eq(compile_only(long_re, &why), LF_OK, "%s", why.msg);
	free(long_re);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 +
	       (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static enum lf_err limited(const char *re, size_t n, char fill,
			   struct pattern_budget *b, struct lf_why *why)
{
	struct pattern *p = NULL;
	char *subject = malloc(n);
	bool found;
	enum lf_err e;

	memset(subject, fill, n);
	cr_assert_eq(pattern_compile(re, strlen(re), &p, why), LF_OK);
	e = pattern_search(p, subject, n, b, &found, why);
	pattern_free(p);
	free(subject);
	return e;
}

Test(pattern, back_reference_on_30000_chars_hits_a_limit_not_the_stack)
{
	struct pattern_budget b;
	struct lf_why why = {{0}};

	pattern_budget_init(&b, PATTERN_CALL_MS);
	cr_assert_eq(limited("(a*)+\\1\\d", 30000, 'a', &b, &why),
		     LF_PATTERN_LIMIT);
	cr_assert(b.spent);
	cr_assert_neq(why.msg[0], '\0');
}

Test(pattern, quadratic_scan_of_100k_stops_at_the_cpu_budget)
{
	struct pattern_budget b;
	struct lf_why why = {{0}};
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pattern_budget_init(&b, PATTERN_CALL_MS);
	/* Within the step limit, yet seconds without the CPU budget. */
	cr_assert_eq(limited("[a-y]*+[^a-y]", 100000, 'a', &b, &why),
		     LF_PATTERN_LIMIT);
	cr_assert(strstr(why.msg, "budget"), "%s", why.msg);
	/* Generous: the budget is CPU time; a loaded machine stretches it. */
	cr_assert_lt(ms_since(&t0), 5000.0);
}

Test(pattern, budget_is_shared_by_the_patterns_of_one_call)
{
	struct pattern_budget b;
	struct lf_why why = {{0}};
	struct pattern *p = NULL;
	bool found = true;

	pattern_budget_init(&b, PATTERN_CALL_MS);
	cr_assert_eq(limited("[a-y]*+[^a-y]", 100000, 'a', &b, &why),
		     LF_PATTERN_LIMIT);
	/* The next pattern of the same call, however cheap, is refused. */
	cr_assert_eq(pattern_compile("a", 1, &p, &why), LF_OK);
	cr_assert_eq(pattern_search(p, "a", 1, &b, &found, &why),
		     LF_PATTERN_LIMIT);
	cr_assert_not(found);
	/* A fresh call has a fresh budget. */
	pattern_budget_init(&b, PATTERN_CALL_MS);
	cr_assert_eq(pattern_search(p, "a", 1, &b, &found, &why), LF_OK);
	cr_assert(found);
	pattern_free(p);
}

Test(pattern, a_linear_pattern_on_100k_is_well_inside_the_budget)
{
	struct pattern_budget b;
	struct lf_why why = {{0}};

	pattern_budget_init(&b, PATTERN_CALL_MS);
	cr_assert_eq(limited("^[a-z]+$", 100000, 'a', &b, &why), LF_OK, "%s",
		     why.msg);
	/* One backtracking frame a character: 10 KB, not 100 KB. */
	cr_assert_eq(limited("^(\\w|-)*$", 10000, 'a', &b, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_not(b.spent);
}

Test(pattern, subject_with_nul_bytes_is_matched_whole)
{
	struct pattern *p = NULL;
	struct pattern_budget b;
	struct lf_why why = {{0}};
	bool found = false;

	cr_assert_eq(pattern_compile("b$", 2, &p, &why), LF_OK);
	pattern_budget_init(&b, PATTERN_CALL_MS);
	cr_assert_eq(pattern_search(p, "a\0b", 3, &b, &found, &why), LF_OK);
	cr_assert(found);
	pattern_free(p);
}
