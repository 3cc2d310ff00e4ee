/* SPDX-License-Identifier: MIT */
/*
 * test_relay.c - ledgerfs-relay's request handler (ledgerfs-relay(1))
 * against a backend that answers as the daemon would: the rules the real
 * mount cannot show on demand (a host-executed reply, Python's reading of
 * a request, ASSERT's repr in details).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "relay_handler.h"
#include "relay_py.h"

#define BEARER "Bearer t0ken"

static struct {
	const char *reply; /* what a call gets back */
	int err;	   /* or this errno */
	char sent_args[256], sent_id[256], sent_case[64];
	int calls, regs, is_error, real_executed;
} fk;

static int fk_reg(void *ctx, const char *case_id, const char *token)
{
	(void)ctx;
	(void)token;
	fk.regs++;
	snprintf(fk.sent_case, sizeof(fk.sent_case), "%s", case_id);
	return 0;
}

static int fk_call(void *ctx, const char *id, const char *tool,
		   const char *args, char **reply)
{
	(void)ctx;
	(void)tool;
	fk.calls++;
	snprintf(fk.sent_id, sizeof(fk.sent_id), "%s", id);
	snprintf(fk.sent_args, sizeof(fk.sent_args), "%s", args);
	*reply = fk.err ? NULL : strdup(fk.reply);
	return fk.err;
}

static int fk_result(void *ctx, const char *id, const char *returned,
		     int is_error, int real_executed)
{
	(void)ctx;
	(void)returned;
	snprintf(fk.sent_id, sizeof(fk.sent_id), "%s", id);
	fk.is_error = is_error;
	fk.real_executed = real_executed;
	return fk.err;
}

static void fk_reason(void *ctx, int err, char *buf, size_t size)
{
	(void)ctx;
	(void)err;
	snprintf(buf, size, "EINVAL '<' not supported between 'str' and 'int'");
}

static const struct relay_backend fake = {NULL, fk_reg, fk_call, fk_result,
					  fk_reason};
static struct relay r;

static void setup(void)
{
	memset(&fk, 0, sizeof(fk));
	fk.reply =
		"{\"call_id\":\"c1\",\"sequence\":1,\"mode\":\"pass\","
		"\"real_executed\":false,\"flagged\":false,\"reason\":\"ok\","
		"\"decision_reason\":\"ok\",\"matched\":\"*\",\"returned\":"
		"null,\"is_error\":false,\"result_source\":"
		"\"target_reported\",\"result_authoritative\":false}\n";
	cr_assert_eq(relay_init(&r, &fake, BEARER, "C", "tok"), 0);
}

static void teardown(void)
{
	relay_fini(&r);
}

TestSuite(relay, .init = setup, .fini = teardown);

/* POST path body -> the answer, parsed; *status set.  New reference. */
static json_t *post(const char *path, const char *body, unsigned *status)
{
	char cl[32];
	struct relay_request q = {.method = "POST",
				  .path = path,
				  .authorization = BEARER,
				  .content_length = cl,
				  .body = body,
				  .body_len = strlen(body)};
	struct relay_response res;
	json_t *v;

	snprintf(cl, sizeof(cl), "%zu", strlen(body));
	relay_handle(&r, &q, &res);
	*status = res.status;
	v = json_loads(res.body, 0, NULL);
	cr_assert_not_null(v, "%s", res.body);
	free(res.body);
	return v;
}

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

#define MEDIATE(tc)                                                            \
	"{\"pre_context\":{\"interception_point\":\"pre_tool_call\","        \
	"\"session\":{\"case_id\":\"C\"},\"tool_call\":" tc "}}"

Test(relay, host_executed_call_is_shown_as_a_mock_of_source_host_executed)
{
	unsigned st;
	json_t *v, *d;

	fk.reply = "{\"call_id\":\"c1\",\"sequence\":1,\"mode\":\"pass\","
		   "\"real_executed\":true,\"flagged\":false,\"reason\":\"r\","
		   "\"decision_reason\":\"r\",\"matched\":\"m\",\"returned\":"
		   "{\"n\":1},\"is_error\":false,\"result_source\":"
		   "\"host_executed\",\"result_authoritative\":true}\n";
	v = post("/mediate", MEDIATE("{\"id\":\"c1\",\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 200);
	d = json_object_get(v, "decision");
	cr_assert_str_eq(str(d, "mode"), "mock");
	cr_assert_str_eq(str(d, "mock_source"), "host_executed");
	cr_assert(json_is_true(json_object_get(d, "flagged")));
	cr_assert(json_is_true(json_object_get(d, "real_executed")));
	cr_assert_eq(json_integer_value(json_object_get(
			     json_object_get(d, "returned"), "n")),
		     1);
	cr_assert_null(json_object_get(d, "result_source"));
	json_decref(v);
}

Test(relay, decision_keeps_asserts_keys_in_asserts_order)
{
	static const char *const want[] = {
		"mode",	    "real_executed",   "flagged",
		"reason",   "decision_reason", "matched",
		"returned", "policy_note",     "mock_source",
		"replay",   "is_error",
	};
	const char *key;
	unsigned st;
	json_t *v, *d, *val;
	size_t i = 0;

	fk.reply = "{\"call_id\":\"c1\",\"sequence\":1,\"mode\":\"mock\","
		   "\"real_executed\":false,\"flagged\":true,\"reason\":\"r\","
		   "\"decision_reason\":\"r\",\"matched\":\"m\",\"returned\":1,"
		   "\"policy_note\":\"n\",\"mock_source\":\"replay\","
		   "\"replay\":{\"cassette\":\"a\"},\"is_error\":false,"
		   "\"result_source\":\"host_mediator\","
		   "\"result_authoritative\":true,\"over_limit\":true}\n";
	v = post("/mediate", MEDIATE("{\"id\":\"c1\",\"name\":\"t\"}"), &st);
	d = json_object_get(v, "decision");
	json_object_foreach(d, key, val)
	{
		cr_assert_lt(i, 11, "extra key %s", key);
		cr_assert_str_eq(key, want[i]);
		i++;
	}
	cr_assert_eq(i, 11);
	json_decref(v);
}

Test(relay, ids_and_names_are_read_as_python_str_then_stripped)
{
	unsigned st;
	json_t *v;

	v = post("/mediate",
		 MEDIATE("{\"id\":\"  c7\\t\",\"name\":\" t \",\"args\":[]}"),
		 &st);
	cr_assert_eq(st, 200, "an empty list of args counts as {}");
	cr_assert_str_eq(fk.sent_id, "c7");
	cr_assert_str_eq(fk.sent_args, "{}");
	json_decref(v);
	v = post("/mediate", MEDIATE("{\"id\":5,\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 200);
	cr_assert_str_eq(fk.sent_id, "5");
	json_decref(v);
	v = post("/mediate", MEDIATE("{\"id\":1.5,\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 400, "a real is refused, not guessed");
	json_decref(v);
}

Test(relay, a_refusal_of_the_view_is_400_with_its_reason)
{
	unsigned st;
	json_t *v;

	fk.err = EINVAL;
	v = post("/mediate", MEDIATE("{\"id\":\"c1\",\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 400);
	cr_assert_str_eq(str(v, "detail"),
			 "'<' not supported between 'str' and 'int'");
	json_decref(v);
}

Test(relay, a_missing_target_folder_is_502_not_the_calls_fault)
{
	unsigned st;
	json_t *v;

	fk.err = ENOENT;
	v = post("/mediate", MEDIATE("{\"id\":\"c1\",\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 502);
	cr_assert_str_eq(str(v, "error"), "mediator_unavailable");
	json_decref(v);
}

Test(relay, complete_reads_flags_by_python_truth_and_defaults_to_false)
{
	unsigned st;
	json_t *v;

	v = post("/complete",
		 "{\"call_id\":\"a\",\"is_error\":\"no\",\"real_executed\":0}",
		 &st);
	cr_assert_eq(st, 200);
	cr_assert_eq(fk.is_error, 1, "a non-empty string is true");
	cr_assert_eq(fk.real_executed, 0);
	json_decref(v);
	v = post("/complete", "{\"call_id\":\"b\"}", &st);
	cr_assert_eq(fk.real_executed, 0, "not claimed: not executed");
	json_decref(v);
}

Test(relay, a_call_before_register_registers_the_environments_case)
{
	unsigned st;
	json_t *v;

	v = post("/mediate", MEDIATE("{\"id\":\"c1\",\"name\":\"t\"}"), &st);
	cr_assert_eq(st, 200);
	cr_assert_eq(fk.regs, 1);
	cr_assert_str_eq(fk.sent_case, "C");
	json_decref(v);
}

Test(relay, details_quote_ids_as_python_repr)
{
	static const char *const rows[][2] = {
		{"p1", "x 'p1'"},	  {"it's", "x \"it's\""},
		{"a'\"b", "x 'a\\'\"b'"}, {"t\tn\n\\", "x 't\\tn\\n\\\\'"},
		{"\x01", "x '\\x01'"},	  {"", "x ''"},
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		py_repr(rows[i][0], buf, sizeof(buf), "x ");
		cr_assert_str_eq(buf, rows[i][1]);
	}
	py_repr("abcdefghijklmnopqrstuvwxyz", buf, 12, "x ");
	cr_assert_lt(strlen(buf), 12, "cut to the buffer");
	cr_assert_eq(buf[strlen(buf) - 1], '\'', "still quoted: %s", buf);
}

Test(relay, the_size_check_comes_before_the_body_is_read)
{
	struct relay_request q = {.method = "POST",
				  .path = "/mediate",
				  .authorization = BEARER,
				  .content_length = "1048577"};
	struct relay_response res;

	relay_handle(&r, &q, &res);
	cr_assert_eq(res.status, 400);
	free(res.body);
	q.content_length = "1048576";
	relay_handle(&r, &q, &res);
	cr_assert_eq(res.status, 0, "1 MiB exactly: read the body");
	q.content_length = "10";
	q.authorization = "Bearer t0ke";
	relay_handle(&r, &q, &res);
	cr_assert_eq(res.status, 401, "the token first");
	free(res.body);
}

/*
 * ASSERT reads a body with Python's json.loads of bytes, which takes
 * UTF-8 after a byte-order mark; one alone, or one before other text, is
 * still no JSON.
 */
Test(relay, a_body_after_a_utf8_byte_order_mark_is_read_as_python_reads_it)
{
	unsigned status;
	json_t *v;

	v = post("/mediate",
		 "\xef\xbb\xbf" MEDIATE(
			 "{\"id\":\"c1\",\"name\":\"t\",\"arguments\":{}}"),
		 &status);
	cr_assert_eq(status, 200, "%u", status);
	cr_assert_eq(fk.calls, 1);
	json_decref(v);
	v = post("/mediate", "\xef\xbb\xbf", &status);
	cr_assert_eq(status, 400);
	json_decref(v);
	v = post("/mediate", "\xef\xbb\xbf\xef\xbb\xbf{}", &status);
	cr_assert_eq(status, 400);
	json_decref(v);
}
