/* SPDX-License-Identifier: MIT */
/*
 * fuzz_console_request.c - fuzz harness for the console's request handler
 * (ctl/console/console_http.h) as the server runs it, over a view laid
 * out like a mount (a folder with cases/C/status and cases/C/ledger).
 * An input is lines: method, path, Host values up to an empty line, then
 * Cookie, Authorization, token, offset, limit, case.  Promises checked:
 * a 2xx or 303 only after the Host guard passed, a 2xx only with the
 * token, a 303 only for the token, only GET and HEAD served.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "console_http.h"
#include "fuzz_request.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

#define MAX_LINES 24
#define LINE_LEN  512
#define TOKEN	  "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

#ifndef FUZZ_LEDGER
#define FUZZ_LEDGER "tests/data/ledger/v1.jsonl"
#endif

static struct console_srv srv;

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A view-shaped folder, made once, removed at exit. */
static char view[64];

static void remove_view(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", view);
	if (system(cmd) != 0)
		return;
}

static void setup(void)
{
	char path[256], cmd[512];

	strcpy(view, "/tmp/fuzzconsole.XXXXXX");
	CHECK(mkdtemp(view));
	atexit(remove_view);
	snprintf(path, sizeof(path), "%s/cases", view);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cases/C", view);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/cases/C/status", view);
	put(path, "{\"state\":\"registered\",\"rows\":3,\"head\":\"00\","
		  "\"counts\":{\"pass\":1}}");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/cases/C/ledger' 2>/dev/null",
		 FUZZ_LEDGER, view);
	if (system(cmd) != 0) {
		snprintf(path, sizeof(path), "%s/cases/C/ledger", view);
		put(path, "{\"row\":1}\n");
	}
	chain_init();
	CHECK(http_listen_parse("127.0.0.1:8080", &srv.listen, NULL) == LF_OK);
	srv.port = 8080;
	strcpy(srv.token, TOKEN);
	srv.index = cx_new(view, NULL);
	CHECK(srv.index);
}

static const char *opt(char lines[][LINE_LEN], size_t n, size_t i)
{
	return i < n && lines[i][0] ? lines[i] : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char lines[MAX_LINES][LINE_LEN];
	const char *hosts[MAX_LINES];
	struct console_req q = {0};
	struct console_resp r;
	size_t n = 0, start = 0, i, h;
	const char *v;
	size_t vn;
	bool authed;

	if (!srv.index)
		setup();
	for (i = 0; i <= size && n < MAX_LINES; i++) {
		size_t len;

		if (i < size && data[i] != '\n')
			continue;
		len = i - start < LINE_LEN - 1 ? i - start : LINE_LEN - 1;
		memcpy(lines[n], data + start, len);
		lines[n][len] = '\0';
		n++;
		start = i + 1;
	}
	q.method = opt(lines, n, 0);
	q.path = opt(lines, n, 1);
	for (i = 2, h = 0; i < n && lines[i][0]; i++)
		hosts[h++] = lines[i];
	q.hosts = hosts;
	q.nhosts = h;
	i++;
	q.cookie = opt(lines, n, i);
	q.authorization = opt(lines, n, i + 1);
	q.arg_token = opt(lines, n, i + 2);
	q.arg_offset = opt(lines, n, i + 3);
	q.arg_limit = opt(lines, n, i + 4);
	q.arg_case = opt(lines, n, i + 5);

	console_handle(&srv, &srv.listen, &q, &r);
	authed = (http_cookie_find(q.cookie, CONSOLE_COOKIE, &v, &vn) &&
		  vn == strlen(TOKEN) && !memcmp(v, TOKEN, vn)) ||
		 (http_bearer_find(q.authorization, &v, &vn) &&
		  vn == strlen(TOKEN) && !memcmp(v, TOKEN, vn));
	if (r.status != 403)
		CHECK(http_guard_host(&srv.listen, srv.port, q.hosts, q.nhosts,
				      NULL) == LF_OK);
	if (r.status >= 200 && r.status < 300) {
		CHECK(authed);
		CHECK(!strcmp(q.method, "GET") || !strcmp(q.method, "HEAD"));
	}
	if (r.status == 303)
		CHECK(q.arg_token && !strcmp(q.arg_token, TOKEN));
	CHECK(r.type && (r.len == 0 || r.body));
	console_resp_free(&r);
	return 0;
}
