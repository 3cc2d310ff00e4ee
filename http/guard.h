/* SPDX-License-Identifier: MIT */
/*
 * guard.h - the checks every HTTP listener of ledgerfs makes before it
 * looks at a request (ledgerctl(1) CONSOLE): the Host guard against DNS
 * rebinding, and the launch token (constant-time compare, cookie and
 * Bearer parsing).  Pure C: no libmicrohttpd, so it is table-tested and
 * fuzzed; the servers hand it the header values they received.
 */
#ifndef LF_HTTP_GUARD_H
#define LF_HTTP_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "listen.h"

/* Longest Host value looked at; a longer one is refused. */
#define HTTP_GUARD_HOST_MAX 255

/* Launch token: 32 random bytes as 64 lower-case hex digits. */
#define HTTP_TOKEN_BYTES 32
#define HTTP_TOKEN_HEX	 (2 * HTTP_TOKEN_BYTES)

/*
 * The Host guard.  l is the listener as given on --listen and port the
 * port it is bound to (the real one when port 0 was asked); hosts[0..n)
 * are the values of every Host header of the request.
 *
 * LF_OK when there is exactly one Host header and it names port (or no
 * port when port is 80) and either
 *   - the host exactly as given on --listen (case-insensitive),
 *   - an IP literal of the bound address as a browser writes it
 *     (dotted-decimal IPv4; any bracketed IPv6 spelling of it; the IPv4
 *     form of a v4-mapped IPv6 address and the reverse), or
 *   - `localhost` when the bound address is loopback.
 * Anything else (a missing, empty or repeated Host, another port, any
 * other name) is LF_BAD_TOKEN with a one-line reason.  A unix: listener
 * is not reachable by a browser: every request passes.
 *
 * For a wildcard listener (0.0.0.0, ::) pass a copy of l whose family
 * and addr are the connection's local address and whose host is empty.
 */
enum lf_err http_guard_host(const struct http_listen *l, unsigned port,
			    const char *const *hosts, size_t n,
			    struct lf_why *why);

/* Compare a presented token with the expected one in constant time. */
bool http_token_equal(const char *given, size_t given_len,
		      const char *expected);

/*
 * Fill hex[HTTP_TOKEN_HEX + 1] with a fresh token from getrandom(2).
 * Returns LF_IO when the kernel gives no randomness.
 */
enum lf_err http_token_new(char *hex, struct lf_why *why);

/*
 * Find cookie name in a Cookie header value ("a=1; b=2").  Sets *val and
 * *len to the (unquoted) value of its first occurrence and returns true;
 * false when absent.  header may be NULL.
 */
bool http_cookie_find(const char *header, const char *name, const char **val,
		      size_t *len);

/*
 * The credential of an Authorization header "Bearer TOKEN" (scheme
 * case-insensitive).  Returns true and sets *val, *len; false otherwise.
 */
bool http_bearer_find(const char *header, const char **val, size_t *len);

#endif
