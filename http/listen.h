/* SPDX-License-Identifier: MIT */
/*
 * listen.h - the one --listen grammar of every HTTP listener (the console,
 * the relay): HOST:PORT, [IPV6]:PORT, a bare address (port 0, a free
 * port), or unix:PATH.  Pure C and libc, so it is unit-tested and fuzzed.
 *
 * HOST is an IP address literal or the name `localhost` (127.0.0.1);
 * nothing is looked up in DNS, so the address bound is the address given.
 * An IPv4 literal may be spelled as a browser's URL parser accepts it
 * (127.1, 0x7f.0.0.1, 2130706433); the spelling is kept for the Host
 * guard (guard.h), the address for bind(2).
 */
#ifndef LF_HTTP_LISTEN_H
#define LF_HTTP_LISTEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "err.h"

/* Longest HOST accepted on --listen (an IPv6 literal is at most 45). */
#define HTTP_LISTEN_HOST_MAX 63
/* Longest unix:PATH (sun_path less its NUL). */
#define HTTP_LISTEN_PATH_MAX 107

enum http_listen_kind {
	HTTP_LISTEN_INET, /* TCP on an IPv4 or IPv6 address */
	HTTP_LISTEN_UNIX, /* a Unix stream socket */
};

struct http_listen {
	enum http_listen_kind kind;
	int family;		/* AF_INET or AF_INET6 (HTTP_LISTEN_INET) */
	unsigned char addr[16]; /* network order; 4 bytes used for AF_INET */
	unsigned port;		/* 0: the kernel picks a free port */
	/* The host as given, without brackets ("127.1", "localhost", "::1"). */
	char host[HTTP_LISTEN_HOST_MAX + 1];
	char path[HTTP_LISTEN_PATH_MAX + 1]; /* HTTP_LISTEN_UNIX */
};

/*
 * lf_fail (err.h) for the http module, which links no core: a program
 * inside the sandbox (the relay) uses it too.
 */
enum lf_err http_fail(struct lf_why *why, enum lf_err code, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

/*
 * Parse spec into *l.  LF_EINVAL_DOC with a one-line reason when spec is
 * not in the grammar (ledgerctl(1) CONSOLE).
 */
enum lf_err http_listen_parse(const char *spec, struct http_listen *l,
			      struct lf_why *why);

/*
 * Parse an IPv4 literal the way a browser's URL parser does (WHATWG URL
 * "IPv4 parser"): one to four dot-separated numbers, each decimal, 0x hex
 * or 0-led octal, the last filling the remaining bytes.  Returns true and
 * fills addr[4] (network order) when s[0..n) is one.
 */
bool http_ipv4_parse(const char *s, size_t n, unsigned char addr[4]);

/* True for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
bool http_addr_is_loopback(int family, const unsigned char *addr);

/* True when l is a TCP listener on a loopback address. */
bool http_listen_is_loopback(const struct http_listen *l);

/* True when l is a TCP listener on 0.0.0.0 or ::. */
bool http_listen_is_wildcard(const struct http_listen *l);

/*
 * The address as a browser serialises it in a URL: dotted decimal for
 * IPv4, bracketed and compressed lower-case hex for IPv6 (RFC 5952 as
 * the WHATWG URL standard writes it: no embedded IPv4, so
 * ::ffff:127.0.0.1 is [::ffff:7f00:1]).  buf needs 48 bytes.
 */
void http_addr_url_host(int family, const unsigned char *addr, char *buf,
			size_t size);

/*
 * Fill ss for bind(2) with l's address and the given port; returns its
 * length (0 for a unix listener whose path does not fit, never here).
 */
socklen_t http_listen_sockaddr(const struct http_listen *l, unsigned port,
			       struct sockaddr_storage *ss);

#endif
