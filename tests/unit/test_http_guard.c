/* SPDX-License-Identifier: MIT */
/*
 * test_http_guard.c - the Host guard (http/guard.h) as one table: every
 * loopback form a listener may be given on --listen, times the Host
 * values a browser, a script or a DNS-rebinding page can send; plus the
 * token compare, cookie and Bearer parsing.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "guard.h"

#define PORT 8080

/* The Host values: one column of the verdict table each. */
static const char *const host_values[] = {
	"127.0.0.1:8080",	    /*  0 */
	"127.0.0.2:8080",	    /*  1 */
	"127.1:8080",		    /*  2 the spelling, not a browser's */
	"[::1]:8080",		    /*  3 */
	"[::ffff:7f00:1]:8080",	    /*  4 a browser's [::ffff:127.0.0.1] */
	"[::ffff:127.0.0.1]:8080",  /*  5 */
	"localhost:8080",	    /*  6 */
	"LocalHost:8080",	    /*  7 */
	"localhost.evil.test:8080", /*  8 DNS rebinding */
	"127.0.0.1.nip.io:8080",    /*  9 DNS rebinding */
	"localhost:8081",	    /* 10 another port */
	"127.0.0.1:8081",	    /* 11 another port */
	"",			    /* 12 empty */
	"localhost",		    /* 13 no port: 80 */
	"127.0.0.1:08080",	    /* 14 not a browser's port */
	"evil.test:8080",	    /* 15 */
	"[::1]",		    /* 16 no port */
	"localhost.:8080",	    /* 17 */
	"127.0.0.1:8080:8080",	    /* 18 */
	"0x7f.1:8080",		    /* 19 */
	"[::2]:8080",		    /* 20 */
	"2130706433:8080",	    /* 21 */
	"[::1]:8080x",		    /* 22 */
	"[::1%lo]:8080",	    /* 23 */
	"127.0.0.01:8080",	    /* 24 */
	"[localhost]:8080",	    /* 25 */
	"::1:8080",		    /* 26 unbracketed */
	"127.0.0.1:",		    /* 27 */
	"127.0.0.1:+8080",	    /* 28 */
};
#define NHOST (sizeof(host_values) / sizeof(host_values[0]))

struct guard_row {
	const char *listen;
	const char *accept; /* one char per Host value: A accept, . refuse */
};

/* Every loopback form of --listen against every Host value. */
static const struct guard_row loopback_table[] = {
	/*                                   0         1         2       */
	/*                                   012345678901234567890123456789 */
	{"[::1]:8080", /*                 */ "...A..AA....................."},
	{"127.0.0.2:8080", /*             */ ".A....AA....................."},
	{"127.1:8080", /*                 */ "A.A.AAAA....................."},
	{"[::ffff:127.0.0.1]:8080", /*    */ "A...AAAA....................."},
	{"127.0.0.1:8080", /*             */ "A...AAAA....................."},
	{"localhost:8080", /*             */ "A...AAAA....................."},
	/* Non-loopback (--allow-remote): its literal only, never localhost. */
	{"192.0.2.7:8080", /*             */ "............................."},
};

Test(http_guard, host_table_of_loopback_forms_times_host_values)
{
	for (size_t r = 0; r < sizeof(loopback_table) / sizeof(*loopback_table);
	     r++) {
		struct http_listen l;
		struct lf_why why = {{0}};

		cr_assert_eq(strlen(loopback_table[r].accept), NHOST);
		cr_assert_eq(
			http_listen_parse(loopback_table[r].listen, &l, &why),
			LF_OK, "%s: %s", loopback_table[r].listen, why.msg);
		for (size_t c = 0; c < NHOST; c++) {
			const char *hosts[1] = {host_values[c]};
			enum lf_err rc;

			why.msg[0] = '\0';
			rc = http_guard_host(&l, PORT, hosts, 1, &why);
			cr_expect_eq(rc == LF_OK,
				     loopback_table[r].accept[c] == 'A',
				     "listen %s, Host '%s': %s",
				     loopback_table[r].listen, host_values[c],
				     rc == LF_OK ? "accepted" : why.msg);
			if (rc != LF_OK)
				cr_expect(why.msg[0], "a reason");
		}
	}
}

Test(http_guard, remote_listener_accepts_its_literal_only)
{
	struct http_listen l;
	const char *ok[1] = {"192.0.2.7:8080"};
	const char *lo[1] = {"localhost:8080"};

	cr_assert_eq(http_listen_parse("192.0.2.7:8080", &l, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, PORT, ok, 1, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, PORT, lo, 1, NULL), LF_BAD_TOKEN);
}

Test(http_guard, missing_or_repeated_host_header_is_refused)
{
	static const char *const forms[] = {
		"[::1]:8080",	  "127.0.0.2:8080",
		"127.1:8080",	  "[::ffff:127.0.0.1]:8080",
		"127.0.0.1:8080", "localhost:8080"};
	const char *two[2] = {"127.0.0.1:8080", "127.0.0.1:8080"};

	for (size_t i = 0; i < sizeof(forms) / sizeof(*forms); i++) {
		struct http_listen l;

		cr_assert_eq(http_listen_parse(forms[i], &l, NULL), LF_OK);
		cr_expect_eq(http_guard_host(&l, PORT, NULL, 0, NULL),
			     LF_BAD_TOKEN, "%s: none", forms[i]);
		cr_expect_eq(http_guard_host(&l, PORT, two, 2, NULL),
			     LF_BAD_TOKEN, "%s: two", forms[i]);
	}
}

Test(http_guard, port_80_may_go_unnamed)
{
	struct http_listen l;
	const char *bare[1] = {"localhost"};
	const char *named[1] = {"127.0.0.1:80"};

	cr_assert_eq(http_listen_parse("127.0.0.1:80", &l, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, 80, bare, 1, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, 80, named, 1, NULL), LF_OK);
}

Test(http_guard, bound_port_is_the_real_one_not_zero)
{
	struct http_listen l;
	const char *h[1] = {"127.0.0.1:41234"};
	const char *zero[1] = {"127.0.0.1:0"};

	cr_assert_eq(http_listen_parse("127.0.0.1", &l, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, 41234, h, 1, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, 41234, zero, 1, NULL), LF_BAD_TOKEN);
}

Test(http_guard, unix_listener_is_not_host_guarded)
{
	struct http_listen l;
	const char *h[1] = {"anything"};

	cr_assert_eq(http_listen_parse("unix:/tmp/x.sock", &l, NULL), LF_OK);
	cr_expect_eq(http_guard_host(&l, 0, h, 1, NULL), LF_OK);
}

Test(http_guard, token_compare_needs_every_byte_and_the_length)
{
	const char *t = "00112233445566778899aabbccddeeff";

	cr_expect(http_token_equal(t, strlen(t), t));
	cr_expect_not(http_token_equal(t, strlen(t) - 1, t));
	cr_expect_not(
		http_token_equal("00112233445566778899aabbccddeefe", 32, t));
	cr_expect_not(http_token_equal("", 0, t));
	cr_expect_not(
		http_token_equal("00112233445566778899aabbccddeeff00", 34, t));
}

Test(http_guard, tokens_are_fresh_256_bit_hex)
{
	char a[HTTP_TOKEN_HEX + 1], b[HTTP_TOKEN_HEX + 1];

	cr_assert_eq(http_token_new(a, NULL), LF_OK);
	cr_assert_eq(http_token_new(b, NULL), LF_OK);
	cr_expect_eq(strlen(a), 64);
	cr_expect_eq(strspn(a, "0123456789abcdef"), 64);
	cr_expect_neq(strcmp(a, b), 0);
}

Test(http_guard, cookie_found_by_exact_name)
{
	const char *v;
	size_t n;

	cr_assert(http_cookie_find("a=1; ledgerfs_console=abc; b=2",
				   "ledgerfs_console", &v, &n));
	cr_expect_eq(n, 3);
	cr_expect_eq(strncmp(v, "abc", 3), 0);
	cr_expect_not(http_cookie_find("xledgerfs_console=abc",
				       "ledgerfs_console", &v, &n));
	cr_expect_not(http_cookie_find(NULL, "ledgerfs_console", &v, &n));
	cr_assert(http_cookie_find("ledgerfs_console=\"q\"", "ledgerfs_console",
				   &v, &n));
	cr_expect_eq(n, 1);
}

Test(http_guard, bearer_scheme_then_credential)
{
	const char *v;
	size_t n;

	cr_assert(http_bearer_find("bearer  tok ", &v, &n));
	cr_expect_eq(n, 3);
	cr_expect_not(http_bearer_find("Basic dG9rOg==", &v, &n));
	cr_expect_not(http_bearer_find("Bearer ", &v, &n));
}
