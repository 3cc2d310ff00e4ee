/* SPDX-License-Identifier: MIT */
/*
 * console_http.h - the console's request handler, apart from the HTTP
 * server: a request in (method, path, the headers that matter, the query
 * arguments), a response out.  libmicrohttpd only carries it
 * (console.c), so the whole policy - Host guard first, then method,
 * token and routes - is unit-tested and fuzzed as it runs.
 */
#ifndef LF_CONSOLE_HTTP_H
#define LF_CONSOLE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "console_index.h"
#include "guard.h"

#define CONSOLE_COOKIE "ledgerfs_console"

struct console_srv {
	struct http_listen listen; /* as given on --listen */
	unsigned port;		   /* the port bound */
	char token[HTTP_TOKEN_HEX + 1];
	struct cx *index;
};

struct console_req {
	const char *method;
	const char *path; /* without the query */
	const char *const *hosts;
	size_t nhosts;
	const char *cookie;	   /* Cookie header, or NULL */
	const char *authorization; /* Authorization header, or NULL */
	/* Query arguments, decoded, or NULL when absent. */
	const char *arg_token, *arg_offset, *arg_limit, *arg_case;
};

struct console_resp {
	unsigned status;
	const char *type; /* Content-Type */
	char *body;	  /* malloc'd unless body_static */
	size_t len;
	bool body_static;
	char set_cookie[200]; /* "" for none */
	const char *location; /* a 303's target, or NULL */
	bool allow;	      /* a 405: send Allow: GET, HEAD */
	char reason[160];     /* why a 403 (for the console's log) */
	/* GET /api/events: the server streams what this names. */
	bool events;
	char events_case[130]; /* "" for the case list */
	size_t events_offset, events_limit;
};

/*
 * Handle q.  guard: the listener the Host guard compares with (s->listen,
 * or for a wildcard listen the connection's local address).  Fills *r;
 * free it with console_resp_free.
 */
void console_handle(struct console_srv *s, const struct http_listen *guard,
		    const struct console_req *q, struct console_resp *r);

void console_resp_free(struct console_resp *r);

/* The headers every response carries (CSP and the rest), name/value. */
extern const char *const console_security_headers[][2];
extern const size_t console_security_header_count;

/* Files served from the binary (console_assets.c, generated). */
struct console_asset {
	const char *path, *type;
	const unsigned char *data;
	size_t len;
};
extern const struct console_asset console_assets[];
extern const size_t console_asset_count;

#endif
