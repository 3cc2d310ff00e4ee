/* SPDX-License-Identifier: MIT */
/*
 * fuzz_request.c - fuzz harness for the request parser: every input goes
 * through the call, result and registration parsers, and each promise of
 * request.h is checked; a broken promise aborts, so the fuzzer reports it.
 */
#include "fuzz_request.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

/* Inputs longer than this are refused by size alone; no need to go on. */
#define FUZZ_MAX_INPUT (REQUEST_MAX_LINE_DEFAULT + 1)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

static void check_reason(enum lf_err rc, const struct lf_why *why)
{
	const char *end;
	const char *p;

	if (rc == LF_OK)
		return;
	CHECK(rc == LF_EINVAL_JSON || rc == LF_TOO_BIG);
	end = memchr(why->msg, '\0', sizeof(why->msg));
	CHECK(end != NULL);
	CHECK(end != why->msg);
	/* One line of printable ASCII: safe in `error` and in a ledger row. */
	for (p = why->msg; p < end; p++)
		CHECK(*p >= 0x20 && *p <= 0x7e);
}

static bool all_in(const char *s, const char *set)
{
	return s[strspn(s, set)] == '\0';
}

/* ledgerfs(8) PROTOCOL: no C0, DEL or C1 control, not only blanks. */
static bool tool_ok(const char *t)
{
	const unsigned char *p = (const unsigned char *)t;

	for (; *p; p++)
		if (*p < 0x20 || *p == 0x7f ||
		    (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return false;
	return t[strspn(t, " ")] != '\0';
}

#define ID_SET                                                                 \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-"

static void check_id(const char *id)
{
	size_t n = strlen(id);

	CHECK(n >= 1 && n <= REQUEST_ID_MAX);
	CHECK(all_in(id, ID_SET));
	CHECK(strcmp(id, ".") != 0 && strcmp(id, "..") != 0);
	CHECK(request_valid_id(id, n));
}

/* A call id: a name as tools are, whose view file name maps back to it. */
static void check_call_id(const char *id)
{
	char name[REQUEST_NAME_MAX + 1], back[REQUEST_CALL_ID_MAX + 1];
	size_t n = strlen(id);

	CHECK(n >= 1 && n <= REQUEST_CALL_ID_MAX);
	CHECK(tool_ok(id));
	CHECK(request_valid_call_id(id));
	if (request_id_to_name(id, name, sizeof(name)) < sizeof(name)) {
		CHECK(request_id_from_name(name, back, sizeof(back)));
		CHECK(strcmp(back, id) == 0);
	}
}

static enum lf_err run_call(const char *line, size_t len, size_t max_line)
{
	struct request_call c;
	struct lf_why why;
	enum lf_err rc;

	/* Garbage in the out struct must not survive either way. */
	memset(&c, 0xa5, sizeof(c));
	memset(&why, 'x', sizeof(why));
	rc = request_parse_call(line, len, max_line, &c, &why);
	check_reason(rc, &why);
	if (rc) {
		CHECK(c.args == NULL);
		CHECK(c.call_id[0] == '\0' && c.tool[0] == '\0');
		return rc;
	}
	check_call_id(c.call_id);
	CHECK(strlen(c.tool) >= 1 && strlen(c.tool) <= REQUEST_TOOL_MAX);
	CHECK(tool_ok(c.tool));
	CHECK(json_is_object(c.args));
	request_call_clear(&c);
	CHECK(c.args == NULL);
	return rc;
}

static enum lf_err run_result(const char *line, size_t len, size_t max_line)
{
	struct request_result r;
	struct lf_why why;
	enum lf_err rc;

	memset(&r, 0xa5, sizeof(r));
	memset(&why, 'x', sizeof(why));
	rc = request_parse_result(line, len, max_line, &r, &why);
	check_reason(rc, &why);
	if (rc) {
		CHECK(r.returned == NULL);
		CHECK(r.call_id[0] == '\0');
		return rc;
	}
	check_call_id(r.call_id);
	CHECK(r.returned != NULL);
	request_result_clear(&r);
	return rc;
}

static enum lf_err run_register(const char *line, size_t len, size_t max_line)
{
	struct request_register g;
	struct lf_why why;
	enum lf_err rc;
	size_t n;

	memset(&g, 0xa5, sizeof(g));
	memset(&why, 'x', sizeof(why));
	rc = request_parse_register(line, len, max_line, &g, &why);
	check_reason(rc, &why);
	if (rc) {
		CHECK(g.case_id[0] == '\0' && g.token[0] == '\0');
		return rc;
	}
	check_id(g.case_id);
	n = strlen(g.token);
	CHECK(n >= 1 && n <= 128 && all_in(g.token, "0123456789abcdef"));
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *line = (const char *)data;
	enum lf_err rc;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	rc = run_call(line, size, 0);
	/* A limit the line fits exactly changes nothing; one byte less
	 * refuses it by size, before anything else (0 means the default,
	 * so the smallest limit tried is 1). */
	CHECK(run_call(line, size, size ? size : 1) == rc);
	if (size > 1)
		CHECK(run_call(line, size, size - 1) == LF_TOO_BIG);
	run_result(line, size, 0);
	run_register(line, size, 0);
	return 0;
}
