/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_guard.c - fuzz harness for the --listen grammar and the Host
 * guard (http/listen.h, http/guard.h).  An input is lines: a --listen
 * spec, the bound port, then Host header values; every line also goes
 * through the cookie and Bearer parsers.  A broken promise aborts.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_request.h"
#include "guard.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

#define MAX_LINES 8
#define LINE_MAX_ 512

static void check_reason(const struct lf_why *why)
{
	const char *end = memchr(why->msg, '\0', sizeof(why->msg));

	CHECK(end && end != why->msg);
	for (const char *p = why->msg; p < end; p++)
		CHECK(*p != '\n');
}

static void check_value(const char *line, const char *v, size_t n)
{
	size_t len = strlen(line);

	CHECK(v >= line && v + n <= line + len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char lines[MAX_LINES][LINE_MAX_];
	const char *hosts[MAX_LINES];
	size_t nlines = 0, start = 0, i, nhosts;
	struct http_listen l;
	struct lf_why why = {{0}};
	unsigned port = 0;
	const char *v;
	size_t vn;

	for (i = 0; i <= size && nlines < MAX_LINES; i++) {
		size_t n;

		if (i < size && data[i] != '\n')
			continue;
		n = i - start < LINE_MAX_ - 1 ? i - start : LINE_MAX_ - 1;
		memcpy(lines[nlines], data + start, n);
		lines[nlines][n] = '\0';
		nlines++;
		start = i + 1;
	}
	for (i = 0; i < nlines; i++) {
		if (http_cookie_find(lines[i], "ledgerfs_console", &v, &vn))
			check_value(lines[i], v, vn);
		if (http_bearer_find(lines[i], &v, &vn)) {
			check_value(lines[i], v, vn);
			CHECK(vn > 0);
			(void)http_token_equal(v, vn, "0123456789abcdef");
		}
	}
	if (http_listen_parse(lines[0], &l, &why) != LF_OK) {
		check_reason(&why);
		return 0;
	}
	if (l.kind == HTTP_LISTEN_INET) {
		char url[64];

		CHECK(l.family == AF_INET || l.family == AF_INET6);
		CHECK(l.port <= 65535);
		http_addr_url_host(l.family, l.addr, url, sizeof(url));
		CHECK(strlen(url) < 48);
	}
	if (nlines > 1)
		port = (unsigned)strtoul(lines[1], NULL, 10) & 0xffff;
	nhosts = nlines > 2 ? nlines - 2 : 0;
	for (i = 0; i < nhosts; i++)
		hosts[i] = lines[i + 2];
	why.msg[0] = '\0';
	if (http_guard_host(&l, port, hosts, nhosts, &why) == LF_OK) {
		/* Only one Host, and it cannot be a DNS name but localhost. */
		if (l.kind == HTTP_LISTEN_INET) {
			const char *h = hosts[0];

			CHECK(nhosts == 1 && h[0]);
			CHECK(!strstr(h, ".test") && !strstr(h, ".io"));
		}
	} else {
		check_reason(&why);
	}
	return 0;
}
