/* SPDX-License-Identifier: MIT */
/*
 * test_http_listen.c - the --listen grammar (http/listen.h) as a table,
 * and the URL spelling of bound addresses.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <string.h>

#include "listen.h"

struct listen_case {
	const char *spec;
	int ok;
	int kind;
	const char *url_host; /* as a browser writes the address */
	unsigned port;
	int loopback;
};

Test(http_listen, grammar_is_host_port_bracketed_v6_bare_or_unix)
{
	static const struct listen_case tab[] = {
		{"127.0.0.1:8080", 1, HTTP_LISTEN_INET, "127.0.0.1", 8080, 1},
		{"127.0.0.1", 1, HTTP_LISTEN_INET, "127.0.0.1", 0, 1},
		{"127.1", 1, HTTP_LISTEN_INET, "127.0.0.1", 0, 1},
		{"127.1:0", 1, HTTP_LISTEN_INET, "127.0.0.1", 0, 1},
		{"0x7f.0.0.2:1", 1, HTTP_LISTEN_INET, "127.0.0.2", 1, 1},
		{"2130706433:9", 1, HTTP_LISTEN_INET, "127.0.0.1", 9, 1},
		{"localhost:5", 1, HTTP_LISTEN_INET, "127.0.0.1", 5, 1},
		{"[::1]:8080", 1, HTTP_LISTEN_INET, "[::1]", 8080, 1},
		{"[::1]", 1, HTTP_LISTEN_INET, "[::1]", 0, 1},
		{"::1", 1, HTTP_LISTEN_INET, "[::1]", 0, 1},
		{"[::ffff:127.0.0.1]:7", 1, HTTP_LISTEN_INET, "[::ffff:7f00:1]",
		 7, 1},
		{"[2001:db8::1]:7", 1, HTTP_LISTEN_INET, "[2001:db8::1]", 7, 0},
		{"0.0.0.0:7", 1, HTTP_LISTEN_INET, "0.0.0.0", 7, 0},
		{"[::]:7", 1, HTTP_LISTEN_INET, "[::]", 7, 0},
		{"192.0.2.1:65535", 1, HTTP_LISTEN_INET, "192.0.2.1", 65535, 0},
		{"unix:/run/x.sock", 1, HTTP_LISTEN_UNIX, NULL, 0, 0},
		{"", 0, 0, NULL, 0, 0},
		{"unix:", 0, 0, NULL, 0, 0},
		{"127.0.0.1:65536", 0, 0, NULL, 0, 0},
		{"127.0.0.1:", 0, 0, NULL, 0, 0},
		{"127.0.0.1:-1", 0, 0, NULL, 0, 0},
		{"127.0.0.1:80x", 0, 0, NULL, 0, 0},
		{"256.0.0.1", 0, 0, NULL, 0, 0},
		{"127.0.0.1.", 0, 0, NULL, 0, 0},
		{"1.2.3.4.5", 0, 0, NULL, 0, 0},
		{"example.com:80", 0, 0, NULL, 0, 0},
		{"LOCALHOST", 0, 0, NULL, 0, 0},
		{"[::1", 0, 0, NULL, 0, 0},
		{"[::1]8080", 0, 0, NULL, 0, 0},
		{"[127.0.0.1]:80", 0, 0, NULL, 0, 0},
		{"[fe80::1%lo]:80", 0, 0, NULL, 0, 0},
		{"127.0.0.1 :80", 0, 0, NULL, 0, 0},
		{":8080", 0, 0, NULL, 0, 0},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct http_listen l;
		struct lf_why why = {{0}};
		enum lf_err rc = http_listen_parse(tab[i].spec, &l, &why);
		char url[64];

		cr_expect_eq(rc == LF_OK, tab[i].ok, "'%s': %s", tab[i].spec,
			     why.msg);
		if (!tab[i].ok) {
			cr_expect(why.msg[0], "'%s' has a reason", tab[i].spec);
			continue;
		}
		if (rc != LF_OK)
			continue;
		cr_expect_eq(l.kind, tab[i].kind, "%s", tab[i].spec);
		cr_expect_eq(l.port, tab[i].port, "%s", tab[i].spec);
		cr_expect_eq(http_listen_is_loopback(&l), tab[i].loopback, "%s",
			     tab[i].spec);
		if (tab[i].url_host) {
			http_addr_url_host(l.family, l.addr, url, sizeof(url));
			cr_expect_str_eq(url, tab[i].url_host, "%s",
					 tab[i].spec);
		}
	}
}

Test(http_listen, url_host_compresses_the_longest_zero_run)
{
	static const struct {
		const char *in, *out;
	} tab[] = {
		{"1:0:0:2:0:0:0:3", "[1:0:0:2::3]"},
		{"1:0:0:2:3:4:5:6", "[1::2:3:4:5:6]"},
		{"1:2:3:4:5:6:7:0", "[1:2:3:4:5:6:7:0]"},
		{"::", "[::]"},
		{"1::", "[1::]"},
		{"ABCD::EF", "[abcd::ef]"},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(*tab); i++) {
		unsigned char a[16];
		char url[64];

		cr_assert_eq(inet_pton(AF_INET6, tab[i].in, a), 1);
		http_addr_url_host(AF_INET6, a, url, sizeof(url));
		cr_expect_str_eq(url, tab[i].out, "%s", tab[i].in);
	}
}

Test(http_listen, wildcard_is_known)
{
	struct http_listen l;

	cr_assert_eq(http_listen_parse("0.0.0.0", &l, NULL), LF_OK);
	cr_expect(http_listen_is_wildcard(&l));
	cr_assert_eq(http_listen_parse("127.0.0.1", &l, NULL), LF_OK);
	cr_expect_not(http_listen_is_wildcard(&l));
}
