/* SPDX-License-Identifier: MIT */
/*
 * test_request.c - the rules of the target line parser (ledgerfs(8) THE
 * VIEW and PROTOCOL): one test per rule, and a table of hostile lines
 * across calls, results and registrations.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_LSAN 1
#endif
#endif
#ifdef HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#define MIB (1024 * 1024)

/*
 * Criterion's test processes do not reliably reach LeakSanitizer's exit
 * hook, so a sanitizer build checks for leaks after every test and aborts
 * on one: criterion names the test ("crashed during its setup or
 * teardown") and the run exits non-zero.
 */
static void leak_check(void)
{
#ifdef HAVE_LSAN
	if (__lsan_do_recoverable_leak_check())
		abort();
#endif
}

TestSuite(request, .fini = leak_check);

enum parser { P_CALL, P_RESULT, P_REGISTER };

static const char *const parser_name[] = {"call", "result", "register"};

/*
 * Run one parser on line[0..len).  The out struct starts as garbage: the
 * parser must reset it, and on error it must hold no references.
 */
static enum lf_err parse(enum parser p, const char *line, size_t len,
			 size_t max_line, struct lf_why *why)
{
	struct request_call c;
	struct request_result r;
	struct request_register g;
	enum lf_err rc;

	memset(why, 0, sizeof(*why));
	switch (p) {
	case P_CALL:
		memset(&c, 0xa5, sizeof(c));
		rc = request_parse_call(line, len, max_line, &c, why);
		if (rc) {
			cr_expect_null(c.args, "call error left args set");
			cr_expect_eq(c.call_id[0], '\0');
			cr_expect_eq(c.tool[0], '\0');
		} else {
			cr_expect(json_is_object(c.args));
		}
		request_call_clear(&c);
		break;
	case P_RESULT:
		memset(&r, 0xa5, sizeof(r));
		rc = request_parse_result(line, len, max_line, &r, why);
		if (rc) {
			cr_expect_null(r.returned,
				       "result error left returned");
			cr_expect_eq(r.call_id[0], '\0');
		} else {
			cr_expect_not_null(r.returned);
		}
		request_result_clear(&r);
		break;
	default:
		memset(&g, 0xa5, sizeof(g));
		rc = request_parse_register(line, len, max_line, &g, why);
		if (rc) {
			cr_expect_eq(g.case_id[0], '\0');
			cr_expect_eq(g.token[0], '\0');
		}
		break;
	}
	return rc;
}

/* Parse a NUL-terminated call line with the default limit. */
static enum lf_err call(const char *s, struct request_call *c,
			struct lf_why *why)
{
	return request_parse_call(s, strlen(s), 0, c, why);
}

/* Generated inputs (malloc'd; *len set). */

static char *repeat(const char *head, const char *unit, size_t times,
		    const char *tail, size_t *len)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), i;
	char *b = malloc(hl + ul * times + tl + 1);

	cr_assert_not_null(b);
	memcpy(b, head, hl);
	for (i = 0; i < times; i++)
		memcpy(b + hl + i * ul, unit, ul);
	memcpy(b + hl + ul * times, tail, tl + 1);
	*len = hl + ul * times + tl;
	return b;
}

/* A valid call line of exactly total bytes (padding inside a string). */
static char *call_of_size(size_t total, size_t *len)
{
	static const char head[] = "{\"call_id\":\"c1\",\"tool\":\"t\","
				   "\"args\":{\"pad\":\"";
	static const char tail[] = "\"}}";

	return repeat(head, "A",
		      total - (sizeof(head) - 1) - (sizeof(tail) - 1), tail,
		      len);
}

static char *gen_deep100(size_t *len)
{
	return repeat("", "[", 100, "", len);
}

static char *gen_deep10000(size_t *len)
{
	return repeat("{\"call_id\":\"c\",\"tool\":\"t\",\"args\":", "{\"a\":",
		      10000, "", len);
}

static char *gen_2mib(size_t *len)
{
	return call_of_size(2 * MIB, len);
}

static char *gen_at_limit(size_t *len)
{
	return call_of_size(REQUEST_MAX_LINE_DEFAULT, len);
}

static char *gen_over_limit(size_t *len)
{
	return call_of_size(REQUEST_MAX_LINE_DEFAULT + 1, len);
}

static char *gen_id256(size_t *len)
{
	return repeat("{\"call_id\":\"", "a", 256, "\",\"tool\":\"t\"}", len);
}

static char *gen_id257(size_t *len)
{
	return repeat("{\"call_id\":\"", "a", 257, "\",\"tool\":\"t\"}", len);
}

static char *gen_tool256(size_t *len)
{
	return repeat("{\"call_id\":\"c\",\"tool\":\"", "t", 256, "\"}", len);
}

static char *gen_tool257(size_t *len)
{
	return repeat("{\"call_id\":\"c\",\"tool\":\"", "t", 257, "\"}", len);
}

static char *gen_token128(size_t *len)
{
	return repeat("{\"case_id\":\"C1\",\"token\":\"", "f", 128, "\"}", len);
}

static char *gen_token129(size_t *len)
{
	return repeat("{\"case_id\":\"C1\",\"token\":\"", "f", 129, "\"}", len);
}

static char *gen_register_deep(size_t *len)
{
	return repeat("{\"case_id\":", "[", 64, "", len);
}

struct row {
	const char *name;
	const char *in;
	size_t len;
	char *(*make)(size_t *len);
	enum parser p;
	enum lf_err want;
	const char *sub; /* the reason must contain this (errors only) */
};

#define ROW(name, s, p, want, sub)                                             \
	{                                                                      \
		name, s, sizeof(s) - 1, NULL, p, want, sub                     \
	}
#define GEN(name, fn, p, want, sub)                                            \
	{                                                                      \
		name, NULL, 0, fn, p, want, sub                                \
	}

static const struct row hostile[] = {
	ROW("empty line", "", P_CALL, LF_EINVAL_JSON, "empty line"),
	ROW("spaces only", "   \t ", P_CALL, LF_EINVAL_JSON, "empty line"),
	ROW("array", "[]", P_CALL, LF_EINVAL_JSON, "not a JSON object"),
	ROW("null", "null", P_CALL, LF_EINVAL_JSON, "not a JSON object"),
	ROW("number", "42", P_CALL, LF_EINVAL_JSON, "not a JSON object"),
	ROW("string", "\"str\"", P_CALL, LF_EINVAL_JSON, "not a JSON object"),
	ROW("open brace", "{", P_CALL, LF_EINVAL_JSON, "malformed JSON"),
	ROW("empty object", "{}", P_CALL, LF_EINVAL_JSON, "missing call_id"),
	GEN("100-deep [", gen_deep100, P_CALL, LF_EINVAL_JSON,
	    "nesting deeper than 64"),
	GEN("10000-deep objects", gen_deep10000, P_CALL, LF_EINVAL_JSON,
	    "nesting deeper than 64"),
	GEN("2 MiB line", gen_2mib, P_CALL, LF_TOO_BIG, "limit of 1048576"),
	GEN("line at the limit", gen_at_limit, P_CALL, LF_OK, NULL),
	GEN("line one over the limit", gen_over_limit, P_CALL, LF_TOO_BIG,
	    "limit of 1048576"),
	ROW("NUL inside a string", "{\"call_id\":\"c\0\",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON, "NUL byte at byte 13"),
	ROW("\\u0000 escape", "{\"call_id\":\"c\",\"tool\":\"t\\u0000\"}",
	    P_CALL, LF_EINVAL_JSON, "\\u0000"),
	ROW("lone 0xff", "{\"call_id\":\"c\",\"tool\":\"\xff\"}", P_CALL,
	    LF_EINVAL_JSON, "invalid UTF-8 at byte 23"),
	ROW("overlong NUL", "{\"call_id\":\"c\xc0\x80\",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON, "invalid UTF-8 at byte 13"),
	ROW("surrogate",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"s\":\"\xed\xa0\x80\"}}",
	    P_CALL, LF_EINVAL_JSON, "invalid UTF-8"),
	ROW("above U+10FFFF",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"s\":\"\xf4\x90\x80\x80\"}}",
	    P_CALL, LF_EINVAL_JSON, "invalid UTF-8"),
	ROW("truncated sequence at the end", "{\"call_id\":\"c\"\xe2\x82",
	    P_CALL, LF_EINVAL_JSON, "invalid UTF-8 at byte 14"),
	/* ledgerfs(8) PROTOCOL: call ids are what ASSERT takes. */
	ROW("call_id ../x", "{\"call_id\":\"../x\",\"tool\":\"t\"}", P_CALL,
	    LF_OK, NULL),
	ROW("call_id .", "{\"call_id\":\".\",\"tool\":\"t\"}", P_CALL, LF_OK,
	    NULL),
	ROW("call_id ..", "{\"call_id\":\"..\",\"tool\":\"t\"}", P_CALL, LF_OK,
	    NULL),
	ROW("call_id a/b with blank and UTF-8",
	    "{\"call_id\":\"a/b c\u00e9\",\"tool\":\"t\"}", P_CALL, LF_OK,
	    NULL),
	ROW("call_id with tab", "{\"call_id\":\"a\\tb\",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON,
	    "call_id must be 1-256 bytes without control characters"),
	ROW("call_id with NUL", "{\"call_id\":\"a\\u0000b\",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON, "\\u0000 escape"),
	ROW("call_id with C1 control",
	    "{\"call_id\":\"a\\u0085\",\"tool\":\"t\"}", P_CALL, LF_EINVAL_JSON,
	    "call_id must be"),
	ROW("call_id only blanks", "{\"call_id\":\"  \",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON, "call_id must not be only blanks"),
	ROW("call_id empty", "{\"call_id\":\"\",\"tool\":\"t\"}", P_CALL,
	    LF_EINVAL_JSON, "call_id must be"),
	GEN("call_id of 257", gen_id257, P_CALL, LF_EINVAL_JSON,
	    "call_id must be"),
	GEN("call_id of 256", gen_id256, P_CALL, LF_OK, NULL),
	ROW("call_id number", "{\"call_id\":7,\"tool\":\"t\"}", P_CALL,
	    LF_EINVAL_JSON, "call_id must be a string"),
	ROW("tool missing", "{\"call_id\":\"c\"}", P_CALL, LF_EINVAL_JSON,
	    "missing tool"),
	ROW("tool empty", "{\"call_id\":\"c\",\"tool\":\"\"}", P_CALL,
	    LF_EINVAL_JSON, "tool must be"),
	ROW("tool newline", "{\"call_id\":\"c\",\"tool\":\"a\\nb\"}", P_CALL,
	    LF_EINVAL_JSON, "tool must be"),
	ROW("tool space (ASSERT takes any text)",
	    "{\"call_id\":\"c\",\"tool\":\"a b\"}", P_CALL, LF_OK, NULL),
	ROW("tool star, quote, UTF-8",
	    "{\"call_id\":\"c\",\"tool\":\"a*'\\\"\xc3\xbc\"}", P_CALL, LF_OK,
	    NULL),
	ROW("tool only blanks", "{\"call_id\":\"c\",\"tool\":\"  \"}", P_CALL,
	    LF_EINVAL_JSON, "tool must not be only blanks"),
	ROW("tool DEL", "{\"call_id\":\"c\",\"tool\":\"a\x7f\"}", P_CALL,
	    LF_EINVAL_JSON, "tool must be"),
	ROW("tool number", "{\"call_id\":\"c\",\"tool\":1}", P_CALL,
	    LF_EINVAL_JSON, "tool must be a string"),
	GEN("tool of 256", gen_tool256, P_CALL, LF_OK, NULL),
	GEN("tool of 257", gen_tool257, P_CALL, LF_EINVAL_JSON, "tool must be"),
	ROW("args string", "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":\"x\"}",
	    P_CALL, LF_EINVAL_JSON, "args must be an object"),
	ROW("args array", "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":[]}",
	    P_CALL, LF_EINVAL_JSON, "args must be an object"),
	ROW("args null", "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":null}",
	    P_CALL, LF_EINVAL_JSON, "args must be an object"),
	ROW("host-owned mode",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"mode\":\"pass\"}", P_CALL,
	    LF_EINVAL_JSON, "unknown key 'mode' (host-owned)"),
	ROW("host-owned sequence",
	    "{\"sequence\":1,\"call_id\":\"c\",\"tool\":\"t\"}", P_CALL,
	    LF_EINVAL_JSON, "unknown key 'sequence' (host-owned)"),
	ROW("host-owned result_source",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"result_source\":\"host_mediator\"}",
	    P_CALL, LF_EINVAL_JSON, "unknown key 'result_source' (host-owned)"),
	ROW("host-owned case_id in a call",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"case_id\":\"C1\"}", P_CALL,
	    LF_EINVAL_JSON, "unknown key 'case_id' (host-owned)"),
	ROW("result field in a call",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"returned\":1}", P_CALL,
	    LF_EINVAL_JSON, "unknown key 'returned'"),
	ROW("unknown key", "{\"call_id\":\"c\",\"tool\":\"t\",\"extra\":1}",
	    P_CALL, LF_EINVAL_JSON, "unknown key 'extra'"),
	ROW("duplicate key",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"tool\":\"u\"}", P_CALL,
	    LF_EINVAL_JSON, "duplicate key"),
	ROW("duplicate key inside args",
	    "{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"a\":1,\"a\":2}}",
	    P_CALL, LF_EINVAL_JSON, "duplicate key"),
	ROW("trailing garbage", "{\"call_id\":\"a\",\"tool\":\"t\"} x", P_CALL,
	    LF_EINVAL_JSON, "trailing data"),
	ROW("two objects",
	    "{\"call_id\":\"a\",\"tool\":\"t\"}{\"call_id\":\"b\",\"tool\":\"t\"}",
	    P_CALL, LF_EINVAL_JSON, "trailing data"),
	ROW("result is_error yes", "{\"call_id\":\"c\",\"is_error\":\"yes\"}",
	    P_RESULT, LF_EINVAL_JSON, "is_error must be a boolean"),
	ROW("result real_executed 1", "{\"call_id\":\"c\",\"real_executed\":1}",
	    P_RESULT, LF_EINVAL_JSON, "real_executed must be a boolean"),
	ROW("result unknown key", "{\"call_id\":\"c\",\"tool\":\"t\"}",
	    P_RESULT, LF_EINVAL_JSON, "unknown key 'tool'"),
	ROW("result host-owned",
	    "{\"call_id\":\"c\",\"result_authoritative\":true}", P_RESULT,
	    LF_EINVAL_JSON, "'result_authoritative' (host-owned)"),
	ROW("result without call_id", "{\"returned\":1}", P_RESULT,
	    LF_EINVAL_JSON, "missing call_id"),
	ROW("result call_id blank", "{\"call_id\":\" \"}", P_RESULT,
	    LF_EINVAL_JSON, "call_id must not be only blanks"),
	ROW("result array", "[1]", P_RESULT, LF_EINVAL_JSON,
	    "not a JSON object"),
	ROW("result with NUL", "\0", P_RESULT, LF_EINVAL_JSON,
	    "NUL byte at byte 0"),
	ROW("result ok",
	    "{\"call_id\":\"c\",\"returned\":[1,{\"a\":null}],\"is_error\":true}",
	    P_RESULT, LF_OK, NULL),
	ROW("register without token", "{\"case_id\":\"C1\"}", P_REGISTER,
	    LF_EINVAL_JSON, "missing token"),
	ROW("register without case_id", "{\"token\":\"ab\"}", P_REGISTER,
	    LF_EINVAL_JSON, "missing case_id"),
	ROW("register non-hex token", "{\"case_id\":\"C1\",\"token\":\"xyz\"}",
	    P_REGISTER, LF_EINVAL_JSON,
	    "token must be 1-128 characters of [0-9a-f]"),
	ROW("register upper-case token",
	    "{\"case_id\":\"C1\",\"token\":\"ABCD\"}", P_REGISTER,
	    LF_EINVAL_JSON, "token must be"),
	ROW("register empty token", "{\"case_id\":\"C1\",\"token\":\"\"}",
	    P_REGISTER, LF_EINVAL_JSON, "token must be"),
	ROW("register token number", "{\"case_id\":\"C1\",\"token\":12}",
	    P_REGISTER, LF_EINVAL_JSON, "token must be a string"),
	GEN("register token of 128", gen_token128, P_REGISTER, LF_OK, NULL),
	GEN("register token of 129", gen_token129, P_REGISTER, LF_EINVAL_JSON,
	    "token must be"),
	ROW("register bad case id", "{\"case_id\":\"../C1\",\"token\":\"ab\"}",
	    P_REGISTER, LF_EINVAL_JSON, "case_id must be"),
	ROW("register extra key",
	    "{\"case_id\":\"C1\",\"token\":\"ab\",\"call_id\":\"c\"}",
	    P_REGISTER, LF_EINVAL_JSON, "unknown key 'call_id'"),
	ROW("register host-owned",
	    "{\"case_id\":\"C1\",\"token\":\"ab\",\"state\":\"registered\"}",
	    P_REGISTER, LF_EINVAL_JSON, "unknown key 'state' (host-owned)"),
	GEN("register too deep", gen_register_deep, P_REGISTER, LF_EINVAL_JSON,
	    "nesting deeper than 64"),
	ROW("register ok", "{\"case_id\":\"C1\",\"token\":\"00ff\"}",
	    P_REGISTER, LF_OK, NULL),
};

Test(request, hostile_lines_table)
{
	size_t i, n = sizeof(hostile) / sizeof(hostile[0]);

	cr_assert_geq(n, 30);
	for (i = 0; i < n; i++) {
		const struct row *r = &hostile[i];
		const char *in = r->in;
		char *buf = NULL;
		size_t len = r->len;
		struct lf_why why;
		enum lf_err rc;

		if (r->make) {
			buf = r->make(&len);
			in = buf;
		}
		rc = parse(r->p, in, len, 0, &why);
		cr_expect_eq(rc, r->want, "%s (%s): got %s '%s', want %s",
			     r->name, parser_name[r->p], lf_err_name(rc),
			     why.msg, lf_err_name(r->want));
		if (r->want != LF_OK && r->sub)
			cr_expect(strstr(why.msg, r->sub) != NULL,
				  "%s (%s): reason '%s' lacks '%s'", r->name,
				  parser_name[r->p], why.msg, r->sub);
		free(buf);
	}
	cr_log_info("%zu hostile lines checked", n);
}

Test(request, line_over_limit_is_too_big)
{
	struct lf_why why;
	size_t len;
	char *b = call_of_size(200, &len);

	cr_assert_eq(parse(P_CALL, b, len, 199, &why), LF_TOO_BIG);
	cr_assert(strstr(why.msg, "limit of 199 bytes"), "%s", why.msg);
	cr_assert_eq(parse(P_RESULT, b, len, 199, &why), LF_TOO_BIG);
	cr_assert_eq(parse(P_REGISTER, b, len, 199, &why), LF_TOO_BIG);
	free(b);
}

Test(request, line_exactly_at_limit_is_accepted)
{
	struct lf_why why;
	size_t len;
	char *b = call_of_size(200, &len);

	cr_assert_eq(parse(P_CALL, b, len, 200, &why), LF_OK, "%s", why.msg);
	free(b);
}

Test(request, limit_zero_means_the_default)
{
	struct lf_why why;
	size_t len;
	char *b = call_of_size(REQUEST_MAX_LINE_DEFAULT, &len);

	cr_assert_eq(parse(P_CALL, b, len, 0, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(parse(P_CALL, b, len + 1, 0, &why), LF_TOO_BIG);
	free(b);
}

Test(request, size_is_checked_before_any_parsing)
{
	/* NULs and bad UTF-8 beyond the limit are not even looked at. */
	static const char junk[] = "\0\xff{{{{";
	struct lf_why why;

	cr_assert_eq(parse(P_CALL, junk, sizeof(junk) - 1, 3, &why),
		     LF_TOO_BIG);
}

Test(request, empty_line_is_refused)
{
	struct lf_why why;

	cr_assert_eq(parse(P_CALL, "", 0, 0, &why), LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "empty line");
	cr_assert_eq(parse(P_CALL, NULL, 0, 0, &why), LF_EINVAL_JSON);
	cr_assert_eq(parse(P_RESULT, " \r\t", 3, 0, &why), LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "empty line");
}

Test(request, nul_byte_is_refused_with_its_offset)
{
	struct lf_why why;

	cr_assert_eq(parse(P_CALL, "{\"a\0", 4, 0, &why), LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "NUL byte at byte 3");
}

Test(request, invalid_utf8_is_refused_with_its_offset)
{
	static const char *const bad[] = {
		"\x80",		"\xc1\xbf",	    "\xe0\x9f\xbf",
		"\xed\xbf\xbf", "\xf0\x8f\xbf\xbf", "\xf5\x80\x80\x80",
		"\xc3",		"\xe2\x28\xa1",
	};
	struct lf_why why;
	char line[64];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = snprintf(line, sizeof(line), "{\"s\":\"%s\"}", bad[i]);

		cr_expect_eq(parse(P_CALL, line, (size_t)n, 0, &why),
			     LF_EINVAL_JSON, "row %zu", i);
		cr_expect_str_eq(why.msg, "invalid UTF-8 at byte 6", "row %zu",
				 i);
	}
}

Test(request, valid_utf8_is_accepted)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"s\":"
			  "\"\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80"
			  "\xf4\x8f\xbf\xbf\"}}",
			  &c, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_str_eq(json_string_value(json_object_get(c.args, "s")),
			 "\xc3\xa9\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80"
			 "\xf4\x8f\xbf\xbf");
	request_call_clear(&c);
}

Test(request, nesting_deeper_than_64_is_refused)
{
	struct lf_why why;
	size_t len;
	/* { + args { + 63 [ = 65 levels */
	char *b = repeat("{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"a\":",
			 "[", 63, "", &len);

	cr_assert_eq(parse(P_CALL, b, len, 0, &why), LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "nesting deeper than 64"), "%s", why.msg);
	free(b);
}

Test(request, nesting_of_64_is_accepted)
{
	struct lf_why why;
	char line[512];
	int n;

	/* { + args { + 62 [ = 64 levels */
	n = snprintf(
		line, sizeof(line),
		"{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"a\":%.62s%.62s}}",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
	cr_assert_eq(parse(P_CALL, line, (size_t)n, 0, &why), LF_OK, "%s",
		     why.msg);
}

Test(request, million_deep_nesting_is_refused_without_recursion)
{
	struct lf_why why;
	size_t len;
	char *b = repeat("", "[", REQUEST_MAX_LINE_DEFAULT, "", &len);

	cr_assert_eq(parse(P_CALL, b, len, 0, &why), LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "nesting deeper than 64 at byte 64"), "%s",
		  why.msg);
	free(b);
}

Test(request, brackets_inside_strings_do_not_count_as_nesting)
{
	struct request_call c;
	struct lf_why why;
	size_t len;
	/* 100 [ and an escaped quote inside a string value */
	char *b = repeat(
		"{\"call_id\":\"c\",\"tool\":\"t\",\"args\":{\"s\":\"\\\"",
		"[{", 100, "\"}}", &len);

	cr_assert_eq(request_parse_call(b, len, 0, &c, &why), LF_OK, "%s",
		     why.msg);
	request_call_clear(&c);
	free(b);
}

Test(request, not_an_object_is_refused)
{
	static const char *const lines[] = {"[]",    "null", "42",
					    "\"s\"", "true", " [{}]"};
	struct lf_why why;
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		cr_expect_eq(parse(P_CALL, lines[i], strlen(lines[i]), 0, &why),
			     LF_EINVAL_JSON);
		cr_expect_str_eq(why.msg, "not a JSON object");
	}
}

Test(request, trailing_garbage_is_refused)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"call_id\":\"a\",\"tool\":\"t\"} x", &c, &why),
		     LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "trailing data"), "%s", why.msg);
	/* Whitespace after the object (a CRLF writer) is not garbage. */
	cr_assert_eq(call("{\"call_id\":\"a\",\"tool\":\"t\"} \r", &c, &why),
		     LF_OK, "%s", why.msg);
	request_call_clear(&c);
}

Test(request, duplicate_keys_are_refused)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(
		call("{\"call_id\":\"a\",\"call_id\":\"b\",\"tool\":\"t\"}", &c,
		     &why),
		LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "duplicate key '\"call_id\"'"), "%s",
		  why.msg);
	cr_assert_null(c.args);
}

Test(request, nul_escape_is_refused)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(
		call("{\"call_id\":\"a\",\"tool\":\"t\",\"args\":{\"k\\u0000\":1}}",
		     &c, &why),
		LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "\\u0000"), "%s", why.msg);
}

Test(request, host_owned_field_is_refused_and_named)
{
	static const char *const keys[] = {
		"sequence",
		"mode",
		"matched",
		"reason",
		"result_source",
		"result_authoritative",
		"decision_source",
		"row",
		"phase",
		"prev",
		"mac",
		"time",
		"case_id",
		"completion_status",
		"execution_status",
		"mock_source",
	};
	struct request_call c;
	struct lf_why why;
	char line[160], want[80];
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"call_id\":\"a\",\"tool\":\"t\",\"%s\":\"x\"}",
			 keys[i]);
		snprintf(want, sizeof(want), "unknown key '%s' (host-owned)",
			 keys[i]);
		cr_expect_eq(call(line, &c, &why), LF_EINVAL_JSON, "%s",
			     keys[i]);
		cr_expect_str_eq(why.msg, want);
	}
}

Test(request, unknown_key_is_refused_and_named)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"call_id\":\"a\",\"tool\":\"t\",\"argz\":{}}", &c,
			  &why),
		     LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "unknown key 'argz' in a call line");
}

Test(request, reason_is_one_printable_ascii_line)
{
	struct request_call c;
	struct lf_why why;
	const char *p;

	/* A key with a newline, a quote and non-ASCII, and a long one. */
	cr_assert_eq(
		call("{\"call_id\":\"a\",\"tool\":\"t\",\"x\\n'\xc3\xa9\":1}",
		     &c, &why),
		LF_EINVAL_JSON);
	for (p = why.msg; *p; p++)
		cr_assert(*p >= 0x20 && *p <= 0x7e, "byte %d in '%s'", *p,
			  why.msg);
	cr_assert(strstr(why.msg, "unknown key 'x??"), "%s", why.msg);
	cr_assert_eq(
		call("{\"call_id\":\"a\",\"tool\":\"t\",\"kkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
		     "\":1}",
		     &c, &why),
		LF_EINVAL_JSON);
	cr_assert(strstr(why.msg, "...' in a call line"), "%s", why.msg);
	/* jansson's own text quotes raw bytes; those are masked too. */
	cr_assert_eq(
		call("{\"call_id\":\"a\",\"tool\":\"t\",\"args\":{\"\xc3\xa9\" 1}}",
		     &c, &why),
		LF_EINVAL_JSON);
	for (p = why.msg; *p; p++)
		cr_assert(*p >= 0x20 && *p <= 0x7e, "byte %d in '%s'", *p,
			  why.msg);
}

Test(request, call_id_and_tool_are_required)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"tool\":\"t\"}", &c, &why), LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "missing call_id");
	cr_assert_eq(call("{\"call_id\":\"a\"}", &c, &why), LF_EINVAL_JSON);
	cr_assert_str_eq(why.msg, "missing tool");
}

Test(request, valid_id_rule)
{
	static const struct {
		const char *s;
		bool ok;
	} ids[] = {
		{"c1", true},	     {"A-Z.a_z:0-9", true}, {"...", true},
		{".x", true},	     {"x..", true},	    {".", false},
		{"..", false},	     {"", false},	    {"a/b", false},
		{"../x", false},     {"a b", false},	    {"a\n", false},
		{"\xc3\xa9", false}, {"a*", false},	    {"a\\b", false},
	};
	char long_id[REQUEST_ID_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		cr_expect_eq(request_valid_id(ids[i].s, strlen(ids[i].s)),
			     ids[i].ok, "'%s'", ids[i].s);
	memset(long_id, 'a', sizeof(long_id));
	cr_expect(request_valid_id(long_id, REQUEST_ID_MAX));
	cr_expect_not(request_valid_id(long_id, REQUEST_ID_MAX + 1));
	cr_expect_not(request_valid_id(NULL, 0));
	/* The length decides, not a NUL: an embedded NUL is refused. */
	cr_expect_not(request_valid_id("a\0b", 3));
}

Test(request, tool_names_are_any_text_without_control_characters)
{
	static const struct {
		const char *tool;
		bool ok;
	} tools[] = {
		{"lookup_customer", true},
		{"mcp:srv/tool@v2", true},
		{"a.b-c", true},
		{"a b", true},
		{"a\\tb", false},
		{"a*", true},
		{"a\\\"b", true},
		{"caf\xc3\xa9", true},
		{"a,b", true},
		{"\\u007f", false},
		{"\\u0085", false},
		{" ", false},
	};
	struct request_call c;
	struct lf_why why;
	char line[128];
	size_t i;

	for (i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"call_id\":\"a\",\"tool\":\"%s\"}", tools[i].tool);
		cr_expect_eq(call(line, &c, &why) == LF_OK, tools[i].ok,
			     "'%s': %s", tools[i].tool, why.msg);
		request_call_clear(&c);
	}
}

Test(request, call_is_parsed)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"call_id\":\"c1\",\"tool\":\"lookup_customer\","
			  "\"args\":{\"id\":42}}",
			  &c, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_str_eq(c.call_id, "c1");
	cr_assert_str_eq(c.tool, "lookup_customer");
	cr_assert_eq(json_integer_value(json_object_get(c.args, "id")), 42);
	/* The struct holds the only reference: the line's object is gone. */
	cr_assert_eq(c.args->refcount, 1);
	request_call_clear(&c);
	cr_assert_null(c.args);
	request_call_clear(&c); /* twice is harmless */
}

Test(request, args_missing_becomes_empty_object)
{
	struct request_call c;
	struct lf_why why;

	cr_assert_eq(call("{\"call_id\":\"c1\",\"tool\":\"t\"}", &c, &why),
		     LF_OK, "%s", why.msg);
	cr_assert(json_is_object(c.args));
	cr_assert_eq(json_object_size(c.args), 0);
	request_call_clear(&c);
}

Test(request, args_must_be_an_object)
{
	static const char *const vals[] = {"\"x\"", "[]", "null", "1", "true"};
	struct request_call c;
	struct lf_why why;
	char line[96];
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"call_id\":\"a\",\"tool\":\"t\",\"args\":%s}",
			 vals[i]);
		cr_expect_eq(call(line, &c, &why), LF_EINVAL_JSON, "%s",
			     vals[i]);
		cr_expect_str_eq(why.msg, "args must be an object");
		cr_expect_null(c.args);
	}
}

Test(request, result_without_real_executed_is_recorded_as_not_executed)
{
	struct request_result r;
	struct lf_why why;
	static const char line[] = "{\"call_id\":\"c1\"}";

	cr_assert_eq(request_parse_result(line, sizeof(line) - 1, 0, &r, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_str_eq(r.call_id, "c1");
	cr_assert(json_is_null(r.returned));
	cr_assert_not(r.is_error);
	cr_assert_not(r.real_executed);
	request_result_clear(&r);
	cr_assert_null(r.returned);
}

Test(request, result_fields_are_parsed)
{
	struct request_result r;
	struct lf_why why;
	static const char line[] = "{\"call_id\":\"c1\",\"returned\":{\"name\":"
				   "\"Ada\"},\"is_error\":true,"
				   "\"real_executed\":false}";

	cr_assert_eq(request_parse_result(line, sizeof(line) - 1, 0, &r, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_str_eq(json_string_value(json_object_get(r.returned, "name")),
			 "Ada");
	cr_assert(r.is_error);
	cr_assert_not(r.real_executed);
	cr_assert_eq(r.returned->refcount, 1);
	request_result_clear(&r);
}

Test(request, result_booleans_must_be_booleans)
{
	static const char *const lines[] = {
		"{\"call_id\":\"c\",\"is_error\":\"yes\"}",
		"{\"call_id\":\"c\",\"is_error\":0}",
		"{\"call_id\":\"c\",\"real_executed\":null}",
	};
	struct lf_why why;
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		cr_expect_eq(
			parse(P_RESULT, lines[i], strlen(lines[i]), 0, &why),
			LF_EINVAL_JSON, "%s", lines[i]);
		cr_expect(strstr(why.msg, "must be a boolean"), "%s", why.msg);
	}
}

Test(request, registration_is_parsed)
{
	struct request_register g;
	struct lf_why why;
	static const char line[] = "{\"token\":\"00ab\",\"case_id\":\"C1\"}";

	cr_assert_eq(
		request_parse_register(line, sizeof(line) - 1, 0, &g, &why),
		LF_OK, "%s", why.msg);
	cr_assert_str_eq(g.case_id, "C1");
	cr_assert_str_eq(g.token, "00ab");
}

Test(request, registration_needs_case_id_and_hex_token)
{
	static const char *const lines[] = {
		"{\"case_id\":\"C1\"}",
		"{\"token\":\"ab\"}",
		"{\"case_id\":\"C1\",\"token\":\"0x1\"}",
		"{\"case_id\":\".\",\"token\":\"ab\"}",
		"{\"case_id\":1,\"token\":\"ab\"}",
	};
	struct lf_why why;
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		cr_expect_eq(
			parse(P_REGISTER, lines[i], strlen(lines[i]), 0, &why),
			LF_EINVAL_JSON, "%s", lines[i]);
}

/* Threads parse the same lines at once; each must get its own answer. */
static void *parse_loop(void *arg)
{
	static const char ok[] = "{\"call_id\":\"c1\",\"tool\":\"t\","
				 "\"args\":{\"a\":[1,2,{\"b\":\"c\"}]}}";
	static const char bad[] = "{\"call_id\":\"c1\",\"tool\":\"t\","
				  "\"mode\":\"pass\"}";
	struct request_call c;
	struct lf_why why;
	long failures = 0;
	int i;

	(void)arg;
	for (i = 0; i < 5000; i++) {
		if (request_parse_call(ok, sizeof(ok) - 1, 0, &c, &why) !=
			    LF_OK ||
		    strcmp(c.call_id, "c1") != 0)
			failures++;
		request_call_clear(&c);
		if (request_parse_call(bad, sizeof(bad) - 1, 0, &c, &why) !=
			    LF_EINVAL_JSON ||
		    !strstr(why.msg, "'mode' (host-owned)"))
			failures++;
	}
	return (void *)failures;
}

Test(request, parsers_are_thread_safe)
{
	pthread_t t[8];
	void *res;
	size_t i;

	for (i = 0; i < 8; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, parse_loop, NULL), 0);
	for (i = 0; i < 8; i++) {
		cr_assert_eq(pthread_join(t[i], &res), 0);
		cr_expect_eq((long)res, 0, "thread %zu had failures", i);
	}
}

/* ledgerfs(8) THE VIEW: call id -> file name, and back. */
static const struct {
	const char *id, *name;
} id_names[] = {
	{"c1", "c1"},	      {"toolu_01:A-b.c", "toolu_01:A-b.c"},
	{"a/b", "a%2Fb"},     {".", "%2E"},
	{"..", "%2E%2E"},     {"...", "..."},
	{"a b%", "a%20b%25"}, {"\xc3\xa9", "%C3%A9"},
};

Test(request, call_id_names_are_percent_encoded_both_ways)
{
	char name[REQUEST_NAME_MAX + 1], id[REQUEST_CALL_ID_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(id_names) / sizeof(id_names[0]); i++) {
		cr_expect_eq(
			request_id_to_name(id_names[i].id, name, sizeof(name)),
			strlen(id_names[i].name), "%s", id_names[i].id);
		cr_expect_str_eq(name, id_names[i].name);
		cr_expect(
			request_id_from_name(id_names[i].name, id, sizeof(id)),
			"%s", id_names[i].name);
		cr_expect_str_eq(id, id_names[i].id);
	}
}

Test(request, only_the_one_encoding_of_a_call_id_is_a_name)
{
	static const char *const bad[] = {"%41", "a%2f", "a/b", "%2",
					  "%",	 "%00",	 "%09", "a%ZZ",
					  ".",	 "..",	 "%20", ""};
	char id[REQUEST_CALL_ID_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_not(request_id_from_name(bad[i], id, sizeof(id)),
			      "'%s' accepted", bad[i]);
}

Test(request, a_long_encoding_is_cut_between_units)
{
	char id[REQUEST_CALL_ID_MAX + 1], name[8];

	memset(id, '/', 200);
	id[200] = '\0';
	cr_expect_eq(request_id_to_name(id, name, sizeof(name)), 600);
	cr_expect_str_eq(name, "%2F%2F");
}
