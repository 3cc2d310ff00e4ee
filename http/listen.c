/* SPDX-License-Identifier: MIT */
/*
 * listen.c - the --listen grammar (listen.h) and the address helpers the
 * Host guard shares with it.  No DNS, no libmicrohttpd: the address
 * bound is the address written, and the parser is fuzzed.
 */
#include "listen.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

enum lf_err http_fail(struct lf_why *why, enum lf_err code, const char *fmt,
		      ...)
{
	va_list ap;
	char *p;

	if (!why)
		return code;
	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
	for (p = why->msg; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	return code;
}

/* One IPv4 part: decimal, 0x hex (possibly empty) or 0-led octal. */
static bool ipv4_part(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	size_t i = 0;

	if (n == 0)
		return false;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		unsigned d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		if (d >= base)
			return false;
		v = v * base + d;
		if (v > 0xffffffffULL)
			return false;
	}
	*out = v;
	return true;
}

bool http_ipv4_parse(const char *s, size_t n, unsigned char addr[4])
{
	uint64_t parts[4];
	size_t count = 0, start = 0, i;
	uint64_t v;

	if (n == 0 || n > 64)
		return false;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (count == 4 ||
		    !ipv4_part(s + start, i - start, &parts[count]))
			return false;
		count++;
		start = i + 1;
	}
	for (i = 0; i + 1 < count; i++)
		if (parts[i] > 255)
			return false;
	if (parts[count - 1] >= (1ULL << (8 * (5 - count))))
		return false;
	v = parts[count - 1];
	for (i = 0; i + 1 < count; i++)
		v += parts[i] << (8 * (3 - i));
	addr[0] = (unsigned char)(v >> 24);
	addr[1] = (unsigned char)(v >> 16);
	addr[2] = (unsigned char)(v >> 8);
	addr[3] = (unsigned char)v;
	return true;
}

bool http_addr_is_loopback(int family, const unsigned char *addr)
{
	static const unsigned char one[16] = {[15] = 1};
	static const unsigned char mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (family == AF_INET)
		return addr[0] == 127;
	if (family != AF_INET6)
		return false;
	if (memcmp(addr, one, 16) == 0)
		return true;
	return memcmp(addr, mapped, 12) == 0 && addr[12] == 127;
}

bool http_listen_is_loopback(const struct http_listen *l)
{
	return l->kind == HTTP_LISTEN_INET &&
	       http_addr_is_loopback(l->family, l->addr);
}

bool http_listen_is_wildcard(const struct http_listen *l)
{
	static const unsigned char zero[16];

	return l->kind == HTTP_LISTEN_INET &&
	       memcmp(l->addr, zero, l->family == AF_INET ? 4 : 16) == 0;
}

void http_addr_url_host(int family, const unsigned char *addr, char *buf,
			size_t size)
{
	unsigned piece[8];
	int best = -1, best_len = 0, run = -1, i;
	size_t off = 0;

	if (family == AF_INET) {
		snprintf(buf, size, "%u.%u.%u.%u", addr[0], addr[1], addr[2],
			 addr[3]);
		return;
	}
	for (i = 0; i < 8; i++) {
		piece[i] = (unsigned)addr[2 * i] << 8 | addr[2 * i + 1];
		if (piece[i] != 0) {
			run = -1;
			continue;
		}
		if (run < 0)
			run = i;
		if (i - run + 1 > best_len) {
			best = run;
			best_len = i - run + 1;
		}
	}
	if (best_len < 2)
		best = -1;
	off += (size_t)snprintf(buf + off, size - off, "[");
	for (i = 0; i < 8 && off < size; i++) {
		if (i == best) {
			off += (size_t)snprintf(buf + off, size - off,
						i == 0 ? "::" : ":");
			i += best_len - 1;
			continue;
		}
		off += (size_t)snprintf(buf + off, size - off, "%x%s", piece[i],
					i < 7 ? ":" : "");
	}
	if (off < size)
		snprintf(buf + off, size - off, "]");
}

static bool parse_port(const char *s, unsigned *port)
{
	unsigned v = 0;
	size_t i, n = strlen(s);

	if (n == 0 || n > 5)
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

/* host[0..n) as an IPv4 literal or `localhost` into l. */
static bool parse_host4(const char *host, size_t n, struct http_listen *l)
{
	if (n > HTTP_LISTEN_HOST_MAX)
		return false;
	if (n == 9 && memcmp(host, "localhost", 9) == 0) {
		static const unsigned char lo[4] = {127, 0, 0, 1};

		memcpy(l->addr, lo, 4);
	} else if (!http_ipv4_parse(host, n, l->addr)) {
		return false;
	}
	l->family = AF_INET;
	memcpy(l->host, host, n);
	l->host[n] = '\0';
	return true;
}

static bool parse_host6(const char *host, size_t n, struct http_listen *l)
{
	char tmp[HTTP_LISTEN_HOST_MAX + 1];

	if (n == 0 || n > HTTP_LISTEN_HOST_MAX)
		return false;
	memcpy(tmp, host, n);
	tmp[n] = '\0';
	/* inet_pton takes no zone (%eth0): a link-local bind is not ours. */
	if (inet_pton(AF_INET6, tmp, l->addr) != 1)
		return false;
	l->family = AF_INET6;
	memcpy(l->host, tmp, n + 1);
	return true;
}

enum lf_err http_listen_parse(const char *spec, struct http_listen *l,
			      struct lf_why *why)
{
	const char *colon, *close;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (!spec || !*spec)
		return http_fail(why, LF_EINVAL_DOC, "--listen: empty address");
	n = strlen(spec);
	if (strncmp(spec, "unix:", 5) == 0) {
		if (n == 5 || n - 5 > HTTP_LISTEN_PATH_MAX)
			return http_fail(
				why, LF_EINVAL_DOC,
				"--listen: unix:PATH needs a path of 1 "
				"to %d bytes",
				HTTP_LISTEN_PATH_MAX);
		l->kind = HTTP_LISTEN_UNIX;
		memcpy(l->path, spec + 5, n - 5 + 1);
		return LF_OK;
	}
	l->kind = HTTP_LISTEN_INET;
	if (spec[0] == '[') {
		close = strchr(spec, ']');
		if (!close ||
		    !parse_host6(spec + 1, (size_t)(close - spec - 1), l))
			goto bad;
		if (close[1] == '\0')
			return LF_OK;
		if (close[1] != ':' || !parse_port(close + 2, &l->port))
			goto bad;
		return LF_OK;
	}
	colon = strchr(spec, ':');
	if (colon && strchr(colon + 1, ':')) { /* a bare IPv6 address */
		if (!parse_host6(spec, n, l))
			goto bad;
		return LF_OK;
	}
	if (!colon) {
		if (!parse_host4(spec, n, l))
			goto bad;
		return LF_OK;
	}
	if (!parse_host4(spec, (size_t)(colon - spec), l) ||
	    !parse_port(colon + 1, &l->port))
		goto bad;
	return LF_OK;
bad:
	memset(l, 0, sizeof(*l));
	return http_fail(why, LF_EINVAL_DOC,
			 "--listen: '%.80s' is not HOST:PORT, [IPV6]:PORT, an "
			 "address or unix:PATH",
			 spec);
}

socklen_t http_listen_sockaddr(const struct http_listen *l, unsigned port,
			       struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (l->kind == HTTP_LISTEN_UNIX) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, l->path, strlen(l->path) + 1);
		return sizeof(*un);
	}
	if (l->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		memcpy(&in->sin_addr, l->addr, 4);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		memcpy(&in6->sin6_addr, l->addr, 16);
		return sizeof(*in6);
	}
}
