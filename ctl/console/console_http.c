/* SPDX-License-Identifier: MIT */
/*
 * console_http.c - the console's request handler (console_http.h), in
 * the order ledgerctl(1) CONSOLE gives: the Host guard on every request,
 * then GET/HEAD only, then the launch token (the one URL that takes it,
 * or the cookie it set, or a Bearer header), then the routes.  Nothing
 * here writes anywhere.
 */
#include "console_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const console_security_headers[][2] = {
	{"Content-Security-Policy",
	 "default-src 'self'; base-uri 'none'; form-action 'none'; "
	 "frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-store"},
	{"X-Frame-Options", "DENY"},
	{"Cross-Origin-Resource-Policy", "same-origin"},
};
const size_t console_security_header_count =
	sizeof(console_security_headers) / sizeof(console_security_headers[0]);

#define TEXT_TYPE "text/plain; charset=utf-8"
#define JSON_TYPE "application/json; charset=utf-8"

static void text(struct console_resp *r, unsigned status, const char *msg)
{
	r->status = status;
	r->type = TEXT_TYPE;
	r->body = (char *)msg;
	r->len = strlen(msg);
	r->body_static = true;
}

static void json_body(struct console_resp *r, json_t *v)
{
	if (!v) {
		text(r, 404, "no such case\n");
		return;
	}
	r->body = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(v);
	if (!r->body) {
		text(r, 500, "out of memory\n");
		return;
	}
	r->status = 200;
	r->type = JSON_TYPE;
	r->len = strlen(r->body);
	r->body_static = false;
}

/* A query number: digits only, at most 9 of them; else dflt. */
static size_t arg_num(const char *s, size_t dflt, bool *bad)
{
	size_t v = 0, i;

	if (!s)
		return dflt;
	for (i = 0; s[i]; i++) {
		if (i >= 9 || s[i] < '0' || s[i] > '9') {
			*bad = true;
			return dflt;
		}
		v = v * 10 + (size_t)(s[i] - '0');
	}
	if (i == 0)
		*bad = true;
	return i ? v : dflt;
}

static bool authorized(const struct console_srv *s, const struct console_req *q)
{
	const char *v;
	size_t n;

	if (http_cookie_find(q->cookie, CONSOLE_COOKIE, &v, &n) &&
	    http_token_equal(v, n, s->token))
		return true;
	return http_bearer_find(q->authorization, &v, &n) &&
	       http_token_equal(v, n, s->token);
}

static const struct console_asset *asset(const char *path)
{
	size_t i;

	for (i = 0; i < console_asset_count; i++)
		if (!strcmp(console_assets[i].path, path))
			return &console_assets[i];
	return NULL;
}

/* /api/cases/NAME[/calls|/series] */
static void route_case(struct console_srv *s, const char *rest, size_t offset,
		       size_t limit, struct console_resp *r)
{
	char name[130];
	const char *slash = strchr(rest, '/');
	size_t n = slash ? (size_t)(slash - rest) : strlen(rest);

	if (n >= sizeof(name)) {
		text(r, 404, "no such case\n");
		return;
	}
	memcpy(name, rest, n);
	name[n] = '\0';
	if (!cx_name_ok(name)) {
		text(r, 404, "no such case\n");
		return;
	}
	if (!slash)
		json_body(r, cx_case_json(s->index, name, offset, limit));
	else if (!strcmp(slash, "/calls"))
		json_body(r, cx_calls_json(s->index, name, offset, limit));
	else if (!strcmp(slash, "/series"))
		json_body(r, cx_series_json(s->index, name));
	else
		text(r, 404, "not found\n");
}

void console_handle(struct console_srv *s, const struct http_listen *guard,
		    const struct console_req *q, struct console_resp *r)
{
	const struct console_asset *a;
	struct lf_why why = {{0}};
	size_t offset, limit;
	bool bad = false;

	memset(r, 0, sizeof(*r));
	/*
	 * A wildcard listener is named by the address connected to, or by
	 * the wildcard as given on --listen (the printed URL): IP literals
	 * both, which no rebinding name can be.
	 */
	if (http_guard_host(guard, s->port, q->hosts, q->nhosts, &why) !=
		    LF_OK &&
	    (guard == &s->listen ||
	     http_guard_host(&s->listen, s->port, q->hosts, q->nhosts, NULL) !=
		     LF_OK)) {
		snprintf(r->reason, sizeof(r->reason), "Host guard: %s",
			 why.msg);
		text(r, 403,
		     "forbidden: the Host header does not name this "
		     "console\n");
		return;
	}
	if (!q->method ||
	    (strcmp(q->method, "GET") && strcmp(q->method, "HEAD"))) {
		r->allow = true;
		text(r, 405, "only GET and HEAD\n");
		return;
	}
	if (!q->path || q->path[0] != '/') {
		text(r, 404, "not found\n");
		return;
	}
	if (!strcmp(q->path, "/") && q->arg_token) {
		if (!http_token_equal(q->arg_token, strlen(q->arg_token),
				      s->token)) {
			snprintf(r->reason, sizeof(r->reason), "wrong token");
			text(r, 403, "forbidden: wrong token\n");
			return;
		}
		snprintf(r->set_cookie, sizeof(r->set_cookie),
			 "%s=%s; HttpOnly; SameSite=Strict; Path=/",
			 CONSOLE_COOKIE, s->token);
		r->location = "/";
		text(r, 303, "see /\n");
		return;
	}
	if (!authorized(s, q)) {
		snprintf(r->reason, sizeof(r->reason), "no token");
		text(r, 403, "forbidden: open the URL the console printed\n");
		return;
	}
	offset = arg_num(q->arg_offset, 0, &bad);
	limit = arg_num(q->arg_limit, 100, &bad);
	if (bad) {
		text(r, 400, "offset and limit are decimal numbers\n");
		return;
	}
	if (!strcmp(q->path, "/"))
		a = asset("/index.html");
	else
		a = asset(q->path);
	if (a) {
		r->status = 200;
		r->type = a->type;
		r->body = (char *)a->data;
		r->len = a->len;
		r->body_static = true;
	} else if (!strcmp(q->path, "/api/cases")) {
		json_t *v = cx_cases_json(s->index, offset, limit);

		if (v)
			json_body(r, v);
		else
			text(r, 503, "the mount's cases/ cannot be read\n");
	} else if (!strncmp(q->path, "/api/cases/", 11)) {
		route_case(s, q->path + 11, offset, limit, r);
	} else if (!strcmp(q->path, "/api/events")) {
		if (q->arg_case && !cx_case_exists(s->index, q->arg_case)) {
			text(r, 404, "no such case\n");
			return;
		}
		r->events = true;
		snprintf(r->events_case, sizeof(r->events_case), "%s",
			 q->arg_case ? q->arg_case : "");
		r->events_offset = offset;
		r->events_limit = limit > CX_PAGE_MAX ? CX_PAGE_MAX : limit;
		r->status = 200;
		r->type = "text/event-stream";
		r->body = "";
		r->body_static = true;
	} else {
		text(r, 404, "not found\n");
	}
}

void console_resp_free(struct console_resp *r)
{
	if (!r->body_static)
		free(r->body);
	r->body = NULL;
}
