/* SPDX-License-Identifier: MIT */
/*
 * guard.c - the Host guard and the launch token (guard.h).  A web page
 * can make a browser send requests to a loopback port under a name the
 * page's owner controls (DNS rebinding); only the Host header tells such
 * a request apart, so it must name this listener literally.
 */
#include "guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

static const unsigned char v4_mapped_prefix[12] = {[10] = 0xff, [11] = 0xff};

/* Strict port: 1 to 5 digits, no leading zero, no sign. */
static bool host_port(const char *s, size_t n, unsigned *port)
{
	unsigned v = 0;
	size_t i;

	if (n == 0 || n > 5 || s[0] == '0')
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = v;
	return true;
}

/* Dotted decimal as a browser serialises IPv4: no leading zeros. */
static bool dotted_decimal(const char *s, size_t n, unsigned char addr[4])
{
	size_t i = 0;
	int part;

	for (part = 0; part < 4; part++) {
		unsigned v = 0;
		size_t start = i;

		while (i < n && s[i] >= '0' && s[i] <= '9' && i - start < 3)
			v = v * 10 + (unsigned)(s[i++] - '0');
		if (i == start || v > 255 || (s[start] == '0' && i - start > 1))
			return false;
		addr[part] = (unsigned char)v;
		if (part < 3) {
			if (i >= n || s[i] != '.')
				return false;
			i++;
		}
	}
	return i == n;
}

/* Does the literal (family, addr) name the bound address of l? */
static bool same_address(const struct http_listen *l, int family,
			 const unsigned char *addr)
{
	if (family == l->family)
		return memcmp(addr, l->addr, family == AF_INET ? 4 : 16) == 0;
	if (family == AF_INET) /* 127.0.0.1 for a bound ::ffff:127.0.0.1 */
		return memcmp(l->addr, v4_mapped_prefix, 12) == 0 &&
		       memcmp(l->addr + 12, addr, 4) == 0;
	return memcmp(addr, v4_mapped_prefix, 12) == 0 &&
	       memcmp(addr + 12, l->addr, 4) == 0;
}

/* The host part h[0..n) (brackets stripped for IPv6 by the caller). */
static bool host_names_listener(const struct http_listen *l, const char *h,
				size_t n, bool bracketed)
{
	unsigned char addr[16];
	char tmp[HTTP_GUARD_HOST_MAX + 1];

	if (bracketed) {
		memcpy(tmp, h, n);
		tmp[n] = '\0';
		return inet_pton(AF_INET6, tmp, addr) == 1 &&
		       same_address(l, AF_INET6, addr);
	}
	/* The spelling given on --listen (127.1): an IP literal too. */
	if (l->family == AF_INET && l->host[0] && strlen(l->host) == n &&
	    strncasecmp(l->host, h, n) == 0)
		return true;
	if (dotted_decimal(h, n, addr))
		return same_address(l, AF_INET, addr);
	return n == 9 && strncasecmp(h, "localhost", 9) == 0 &&
	       http_listen_is_loopback(l);
}

enum lf_err http_guard_host(const struct http_listen *l, unsigned port,
			    const char *const *hosts, size_t n,
			    struct lf_why *why)
{
	const char *h, *colon = NULL, *host;
	size_t len, host_len;
	unsigned asked = 80;
	bool bracketed = false;

	if (l->kind == HTTP_LISTEN_UNIX)
		return LF_OK;
	if (n == 0)
		return http_fail(why, LF_BAD_TOKEN, "no Host header");
	if (n > 1)
		return http_fail(why, LF_BAD_TOKEN, "%zu Host headers", n);
	h = hosts[0];
	len = h ? strlen(h) : 0;
	if (len == 0)
		return http_fail(why, LF_BAD_TOKEN, "empty Host header");
	if (len > HTTP_GUARD_HOST_MAX)
		return http_fail(why, LF_BAD_TOKEN, "Host header too long");
	if (h[0] == '[') {
		const char *close = memchr(h, ']', len);

		if (!close)
			goto refuse;
		bracketed = true;
		host = h + 1;
		host_len = (size_t)(close - host);
		if (close + 1 < h + len) {
			if (close[1] != ':')
				goto refuse;
			colon = close + 1;
		}
	} else {
		host = h;
		colon = memchr(h, ':', len);
		host_len = colon ? (size_t)(colon - h) : len;
	}
	if (colon &&
	    !host_port(colon + 1, len - (size_t)(colon + 1 - h), &asked))
		goto refuse;
	if (asked != port)
		return http_fail(why, LF_BAD_TOKEN,
				 "Host names port %u, this listener is on %u",
				 asked, port);
	if (host_len == 0 || !host_names_listener(l, host, host_len, bracketed))
		goto refuse;
	return LF_OK;
refuse:
	return http_fail(why, LF_BAD_TOKEN,
			 "Host header does not name this listener");
}

bool http_token_equal(const char *given, size_t given_len, const char *expected)
{
	size_t n = strlen(expected), i;
	volatile unsigned char diff = given_len != n;

	/* The time depends on the expected length only, never on given. */
	for (i = 0; i < n; i++)
		diff |= (unsigned char)(expected[i] ^
					(i < given_len ? given[i] : 0));
	return diff == 0;
}

enum lf_err http_token_new(char *hex, struct lf_why *why)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char raw[HTTP_TOKEN_BYTES];
	size_t got = 0, i;

	while (got < sizeof(raw)) {
		ssize_t r = getrandom(raw + got, sizeof(raw) - got, 0);

		if (r <= 0)
			return http_fail(why, LF_IO, "getrandom failed");
		got += (size_t)r;
	}
	for (i = 0; i < sizeof(raw); i++) {
		hex[2 * i] = digits[raw[i] >> 4];
		hex[2 * i + 1] = digits[raw[i] & 15];
	}
	hex[HTTP_TOKEN_HEX] = '\0';
	memset(raw, 0, sizeof(raw));
	return LF_OK;
}

bool http_cookie_find(const char *header, const char *name, const char **val,
		      size_t *len)
{
	size_t nlen = strlen(name);
	const char *p = header;

	if (!p)
		return false;
	while (*p) {
		const char *end, *eq;

		while (*p == ' ' || *p == '\t' || *p == ';')
			p++;
		end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq && (size_t)(eq - p) == nlen &&
		    memcmp(p, name, nlen) == 0) {
			const char *v = eq + 1;
			size_t vlen = (size_t)(end - v);

			while (vlen &&
			       (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
				vlen--;
			if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
				v++;
				vlen -= 2;
			}
			*val = v;
			*len = vlen;
			return true;
		}
		p = end;
	}
	return false;
}

bool http_bearer_find(const char *header, const char **val, size_t *len)
{
	const char *v;
	size_t n;

	if (!header || strncasecmp(header, "Bearer ", 7) != 0)
		return false;
	v = header + 7;
	while (*v == ' ')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (n == 0)
		return false;
	*val = v;
	*len = n;
	return true;
}
