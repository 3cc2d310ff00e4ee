/* SPDX-License-Identifier: MIT */
/*
 * test_case.c - the case rules of ledgerfs(8) THE VIEW, LIFECYCLE and
 * PROTOCOL held by the core alone, no mount: lifecycle, registration,
 * duplicates, results, limits, turns, bounded refusals and restart.  The
 * view adds only errno mapping.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case.h"
#include "case_fixture.h"
#include "case_int.h"
#include "chain.h"
#include "request.h"

static const char *policy =
	"interactions:\n"
	"  - {match: lookup_*, mode: pass, name: lookups}\n"
	"  - {match: resume_line, mode: mock}\n"
	"  - {match: send_message, mode: mock, mock: {status: sent}}\n"
	"default: {mode: block}\n";
static const char *mocks =
	"version: 1\n"
	"mocks:\n"
	"  - tool: resume_line\n"
	"    scenario: restore\n"
	"    responses:\n"
	"      - {response: {status: resumed}, sets_state: resumed}\n"
	"      - {response: {status: already_active}}\n";

static void setup(void)
{
	case_fixture_setup("/tmp", "lfcase", 7);
}

TestSuite(case_rules, .init = setup, .fini = case_fixture_teardown);

static struct case_limits lim(unsigned long calls, unsigned long refused)
{
	struct case_limits l = {0, calls, refused, 0};
	return l;
}

static struct lf_case *registered_case(const char *name, struct case_limits l)
{
	return case_fixture_registered(name, l, NULL, policy, mocks);
}

static enum lf_err call(struct lf_case *c, const char *line, char **reply)
{
	struct lf_why why;
	char *r = NULL;
	enum lf_err e = case_call(c, line, strlen(line), &r, &why);

	if (reply)
		*reply = r;
	else
		free(r);
	return e;
}

static enum lf_err result(struct lf_case *c, const char *line)
{
	struct lf_why why;

	return case_result(c, line, strlen(line), &why);
}

static unsigned long long rows(struct lf_case *c)
{
	struct ledger_head h;

	case_ledger_head(c, &h);
	return h.rows;
}

Test(case_rules, request_before_registration_is_refused_and_recorded)
{
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;

	cr_assert_eq(case_create(backing, key, "C", &l, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why), LF_OK);
	cr_assert_eq(call(c, "{\"call_id\":\"a\",\"tool\":\"lookup_x\"}", NULL),
		     LF_UNREGISTERED);
	cr_assert_eq(rows(c), 2); /* case_opened + refused */
	case_free(c);
}

Test(case_rules, registration_with_wrong_token_or_case_id_is_refused)
{
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256];

	cr_assert_eq(case_create(backing, key, "C", &l, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why), LF_OK);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"D\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_BAD_TOKEN);
	tok[0] = tok[0] == 'a' ? 'b' : 'a';
	snprintf(line, sizeof(line), "{\"case_id\":\"C\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_BAD_TOKEN);
	cr_assert_eq(case_get_state(c), CASE_READY);
	cr_assert_eq(rows(c), 3);
	case_free(c);
}

Test(case_rules, registration_before_a_policy_is_refused)
{
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256];

	cr_assert_eq(case_create(backing, key, "C", &l, &c, &why), LF_OK);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"C\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_NOT_READY);
	case_free(c);
}

Test(case_rules, repeat_of_a_correct_registration_succeeds_without_a_row)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256];
	unsigned long long before = rows(c);

	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"C\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_OK);
	cr_assert_eq(rows(c), before);
	case_free(c);
}

Test(case_rules, policy_is_frozen_after_registration)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct lf_why why;

	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why),
		     LF_FROZEN);
	cr_assert_eq(case_set_mocks(c, mocks, strlen(mocks), &why), LF_FROZEN);
	case_free(c);
}

Test(case_rules, malformed_policy_is_refused_and_nothing_is_kept)
{
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	const char *bad = "interactions:\n  - {match: x, mode: maybe}\n";
	char *st, *text;

	cr_assert_eq(case_create(backing, key, "C", &l, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why), LF_OK);
	cr_assert_eq(case_set_policy(c, bad, strlen(bad), &why), LF_EINVAL_DOC);
	text = case_policy_text(c);
	cr_assert_str_eq(text, policy);
	st = case_status_json(c);
	cr_assert(strstr(st, "maybe"), "status names the error: %s", st);
	free(st);
	free(text);
	case_free(c);
}

Test(case_rules, duplicate_call_id_does_not_advance_scenario)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	char *r;

	cr_assert_eq(
		call(c, "{\"call_id\":\"r1\",\"tool\":\"resume_line\"}", &r),
		LF_OK);
	cr_assert(strstr(r, "\"resumed\""), "%s", r);
	free(r);
	cr_assert_eq(
		call(c, "{\"call_id\":\"r1\",\"tool\":\"resume_line\"}", NULL),
		LF_DUPLICATE);
	cr_assert_eq(
		call(c, "{\"call_id\":\"r2\",\"tool\":\"resume_line\"}", &r),
		LF_OK);
	cr_assert(strstr(r, "already_active"), "%s", r);
	cr_assert(strstr(r, "\"sequence\":2"),
		  "the refused duplicate took no sequence: %s", r);
	free(r);
	case_free(c);
}

/* The first row of phase (for call_id, unless NULL) in case name's ledger.
 * New reference. */
static json_t *find_row(const char *name, const char *phase,
			const char *call_id)
{
	char path[160], line[8192];
	json_t *found = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cases/%s/ledger.jsonl", dir, name);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		json_t *row = json_loads(line, 0, NULL);
		const char *id =
			json_string_value(json_object_get(row, "call_id"));
		const char *ph =
			json_string_value(json_object_get(row, "phase"));

		if (ph && !strcmp(ph, phase) &&
		    (!call_id || (id && !strcmp(id, call_id))))
			found = json_incref(row);
		json_decref(row);
	}
	fclose(f);
	cr_assert_not_null(found, "no %s row for %s", phase,
			   call_id ? call_id : "the case");
	return found;
}

static json_t *decision_row(const char *name, const char *call_id)
{
	return find_row(name, "decision", call_id);
}

/* Row key -> expected compact JSON, keys sorted as rows keep them
 * ("absent": the key is not there). */
static void expect_fields(const json_t *row, const char *const (*t)[2],
			  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(row, t[i][0]);
		char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)
			    : strdup("absent");

		cr_expect_str_eq(s, t[i][1], "%s: %s", t[i][0], s);
		free(s);
	}
}

/*
 * ledgerfs-policy(5) FALLBACK AND PROVENANCE: decision rows record where a
 * mock came from.
 */
Test(case_rules, decision_rows_record_mock_provenance_and_policy_note)
{
	static const char *pol =
		"interactions:\n"
		"  - {match: resume_line, mode: mock, note: restores service}\n"
		"  - {match: send_message, mode: mock, mock: {status: sent}}\n"
		"  - {match: ping, mode: mock}\n"
		"default: {mode: block}\n";
	static const char *const scenario[][2] = {
		{"mock_source", "\"inline\""},
		{"mock_rule", "0"},
		{"mock_step", "0"},
		{"scenario", "\"restore\""},
		{"scenario_state", "\"resumed\""},
		{"policy_note", "\"restores service\""},
	};
	static const char *const policy_payload[][2] = {
		{"mock_source", "\"inline\""}, {"mock_rule", "null"},
		{"mock_step", "absent"},       {"scenario", "absent"},
		{"policy_note", "absent"},
	};
	static const char *const placeholder[][2] = {
		{"mock_source", "\"inline\""},
		{"mock_rule", "null"},
		{"returned",
		 "{\"note\":\"No mock payload configured for ping; sandbox "
		 "returned a placeholder.\",\"status\":\"ok\"}"},
	};
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256];
	json_t *row;

	cr_assert_eq(case_create(backing, key, "P", &l, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, pol, strlen(pol), &why), LF_OK, "%s",
		     why.msg);
	cr_assert_eq(case_set_mocks(c, mocks, strlen(mocks), &why), LF_OK);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"P\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_OK);
	cr_assert_eq(
		call(c,
		     "{\"call_id\":\"r1\",\"tool\":\"resume_line\",\"args\":{}}",
		     NULL),
		LF_OK);
	cr_assert_eq(
		call(c,
		     "{\"call_id\":\"s1\",\"tool\":\"send_message\",\"args\":{}}",
		     NULL),
		LF_OK);
	cr_assert_eq(call(c,
			  "{\"call_id\":\"p1\",\"tool\":\"ping\",\"args\":{}}",
			  NULL),
		     LF_OK);
	row = decision_row("P", "r1");
	expect_fields(row, scenario, sizeof(scenario) / sizeof(scenario[0]));
	json_decref(row);
	row = decision_row("P", "s1");
	expect_fields(row, policy_payload,
		      sizeof(policy_payload) / sizeof(policy_payload[0]));
	json_decref(row);
	row = decision_row("P", "p1");
	expect_fields(row, placeholder,
		      sizeof(placeholder) / sizeof(placeholder[0]));
	json_decref(row);
	case_free(c);
}

Test(case_rules, reply_shapes_follow_the_protocol)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	char *r;

	cr_assert_eq(
		call(c,
		     "{\"call_id\":\"c1\",\"tool\":\"lookup_customer\",\"args\":{\"id\":42}}",
		     &r),
		LF_OK);
	cr_assert_str_eq(
		r,
		"{\"call_id\":\"c1\",\"sequence\":1,\"mode\":\"pass\",\"real_executed\":false,\"flagged\":false,\"reason\":\"allowed by mediation policy rule 'lookup_*'\",\"decision_reason\":\"allowed by mediation policy rule 'lookup_*'\",\"matched\":\"lookup_*\",\"returned\":null,\"is_error\":false,\"result_source\":\"target_reported\",\"result_authoritative\":false}\n");
	free(r);
	cr_assert_eq(
		call(c, "{\"call_id\":\"c3\",\"tool\":\"delete_account\"}", &r),
		LF_OK);
	cr_assert_str_eq(
		r,
		"{\"call_id\":\"c3\",\"sequence\":2,\"mode\":\"block\",\"real_executed\":false,\"flagged\":true,\"reason\":\"blocked by default mediation policy\",\"decision_reason\":\"blocked by default mediation policy\",\"matched\":\"<default>\",\"returned\":{\"message\":\"Tool delete_account was blocked by sandbox mediation policy.\",\"status\":\"blocked\"},\"is_error\":true,\"result_source\":\"host_mediator\",\"result_authoritative\":true}\n");
	free(r);
	case_free(c);
}

Test(case_rules, result_rules_follow_the_errno_table)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	unsigned long long before;

	cr_assert_eq(call(c, "{\"call_id\":\"p\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	cr_assert_eq(
		call(c, "{\"call_id\":\"m\",\"tool\":\"send_message\"}", NULL),
		LF_OK);
	cr_assert_eq(result(c, "{\"call_id\":\"nope\",\"returned\":1}"),
		     LF_UNKNOWN_CALL);
	cr_assert_eq(result(c, "{\"call_id\":\"m\",\"returned\":1}"),
		     LF_NOT_PASS);
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":{\"n\":2}}"),
		     LF_OK);
	before = rows(c);
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":{\"n\":2.0}}"),
		     LF_OK);
	cr_assert_eq(rows(c), before, "an identical repeat adds no row");
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":{\"n\":3}}"),
		     LF_CONFLICT);
	cr_assert_eq(rows(c), before + 1,
		     "a conflicting repeat is refused and recorded");
	case_free(c);
}

Test(case_rules, result_after_turn_marked_it_missing_is_refused)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct lf_why why;
	char *f;

	cr_assert_eq(call(c, "{\"call_id\":\"p\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	cr_assert_eq(case_command(c, "turn", 4, &why), LF_OK, "%s", why.msg);
	f = case_call_file(c, "000001-p", "result");
	cr_assert(strstr(f, "\"completion_status\": \"missing\""), "%s", f);
	free(f);
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":1}"),
		     LF_NOT_PASS);
	case_free(c);
}

Test(case_rules, closed_case_refuses_every_target_write)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct lf_why why;

	cr_assert_eq(call(c, "{\"call_id\":\"p\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	cr_assert_eq(case_command(c, "close", 5, &why), LF_OK);
	cr_assert_eq(case_get_state(c), CASE_CLOSED);
	cr_assert_eq(call(c, "{\"call_id\":\"q\",\"tool\":\"lookup_x\"}", NULL),
		     LF_CLOSED);
	/*
	 * ledgerfs(8) LIFECYCLE: close marks the pending pass missing, then
	 * counts.
	 */
	{
		static const char *const missing[][2] = {
			{"completion_status", "\"missing\""},
			{"result_source", "\"not_reported\""},
		};
		static const char *const closed[][2] = {
			{"state", "\"closed\""},
			{"counts",
			 "{\"block\":0,\"calls\":1,\"completed\":0,"
			 "\"missing\":1,\"mock\":0,\"over_limit\":0,"
			 "\"pass\":1,\"refused\":0,\"refused_unrecorded\":0}"},
		};
		json_t *row = find_row("C", "completion_missing", "p");

		expect_fields(row, missing, 2);
		json_decref(row);
		row = find_row("C", "case_closed", NULL);
		expect_fields(row, closed, 2);
		json_decref(row);
	}
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":1}"),
		     LF_CLOSED);
	cr_assert_eq(case_command(c, "turn", 4, &why), LF_CLOSED);
	case_free(c);
}

/*
 * A refusal whose row cannot be made durable fails the case at once, and
 * its writer learns that (EIO), not the refusal.
 */
Test(case_rules, failed_append_of_a_refusal_fails_the_case_and_answers_EIO)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	int p[2], fd = ledger_fd(c->ledger);

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(dup2(p[1], fd), fd); /* the write lands, the flush fails */
	cr_assert_eq(call(c, "{\"call_id\":\"x\",\"tool\":1}", NULL),
		     LF_IO);
	cr_expect_eq(case_get_state(c), CASE_FAILED);
	close(p[0]);
	close(p[1]);
	case_free(c);
}

/* No row can record it, so case.json does: the case stays failed. */
Test(case_rules, restart_keeps_a_case_failed_by_its_ledger_failed)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct case_limits l = lim(0, 0);
	struct lf_why why;
	int p[2], fd = ledger_fd(c->ledger);
	char *st;

	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(dup2(p[1], fd), fd);
	cr_assert_eq(call(c, "{\"call_id\":\"x\",\"tool\":\"lookup_x\"}", NULL),
		     LF_IO);
	close(p[0]);
	close(p[1]);
	case_free(c);
	cr_assert_eq(case_load(backing, key, "C", &l, &c, &why), LF_OK, "%s",
		     why.msg);
	cr_expect_eq(case_get_state(c), CASE_FAILED);
	st = case_status_json(c);
	cr_expect(strstr(st, "ledger append failed"), "%s", st);
	free(st);
	case_free(c);
}

/* ledgerfs(8) LIFECYCLE: after case_closed no row, only the reason. */
Test(case_rules, closed_case_appends_no_row_after_case_closed)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct lf_why why;
	unsigned long long before;
	enum lf_err code;
	char *err;

	cr_assert_eq(case_command(c, "fail ledger mismatch", 20, &why), LF_OK);
	before = rows(c);
	cr_assert_eq(call(c, "{\"call_id\":\"q\",\"tool\":\"lookup_x\"}", NULL),
		     LF_CLOSED);
	cr_assert_eq(result(c, "{\"call_id\":\"q\",\"returned\":1}"),
		     LF_CLOSED);
	cr_assert_eq(
		case_refuse(c, CASE_IN_REQUEST, LF_TOO_BIG, "too long", "x", 1),
		LF_CLOSED);
	cr_expect_eq(rows(c), before, "no row after case_closed");
	err = case_error_text(c, &code);
	cr_expect_eq(code, LF_CLOSED);
	cr_expect_str_eq(err, "request: case C is failed");
	free(err);
	case_free(c);
}

Test(case_rules, call_limit_blocks_with_one_row_then_a_counter)
{
	struct lf_case *c = registered_case("C", lim(2, 0));
	unsigned long long before;
	char *r, *st;

	cr_assert_eq(call(c, "{\"call_id\":\"a\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	cr_assert_eq(call(c, "{\"call_id\":\"b\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	before = rows(c);
	cr_assert_eq(call(c, "{\"call_id\":\"c\",\"tool\":\"lookup_x\"}", &r),
		     LF_OK);
	cr_assert(strstr(r, "\"mode\":\"block\""), "%s", r);
	free(r);
	cr_assert_eq(rows(c), before + 1);
	cr_assert_eq(call(c, "{\"call_id\":\"d\",\"tool\":\"lookup_x\"}", &r),
		     LF_OK);
	cr_assert(strstr(r, "\"mode\":\"block\""), "%s", r);
	free(r);
	cr_assert_eq(rows(c), before + 1, "past the first, only a counter");
	/* `reply` answers the latest call, recorded or not. */
	r = case_latest_reply(c);
	cr_assert(r && strstr(r, "\"call_id\":\"d\""), "%s", r);
	free(r);
	st = case_status_json(c);
	cr_assert(strstr(st, "\"over_limit\": 2"), "%s", st);
	free(st);
	case_free(c);
}

Test(case_rules, refused_rows_are_bounded_per_case)
{
	struct lf_case *c = registered_case("C", lim(0, 3));
	unsigned long long before = rows(c);
	char *st;
	int i;

	for (i = 0; i < 20; i++)
		cr_assert_eq(call(c, "not json", NULL), LF_EINVAL_JSON);
	cr_assert_eq(rows(c), before + 3);
	st = case_status_json(c);
	cr_assert(strstr(st, "\"refused\": 20"), "%s", st);
	cr_assert(strstr(st, "\"refused_unrecorded\": 17"), "%s", st);
	free(st);
	case_free(c);
}

Test(case_rules, restart_resumes_state_index_and_scenario)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct case_limits l = lim(0, 0);
	struct lf_why why;
	char *r;

	cr_assert_eq(call(c, "{\"call_id\":\"p\",\"tool\":\"lookup_x\"}", NULL),
		     LF_OK);
	cr_assert_eq(
		call(c, "{\"call_id\":\"r1\",\"tool\":\"resume_line\"}", NULL),
		LF_OK);
	case_free(c);
	cr_assert_eq(case_load(backing, key, "C", &l, &c, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_eq(case_get_state(c), CASE_REGISTERED);
	cr_assert_eq(call(c, "{\"call_id\":\"p\",\"tool\":\"lookup_x\"}", NULL),
		     LF_DUPLICATE);
	cr_assert_eq(
		call(c, "{\"call_id\":\"r2\",\"tool\":\"resume_line\"}", &r),
		LF_OK);
	cr_assert(strstr(r, "already_active"), "scenario continues: %s", r);
	cr_assert(strstr(r, "\"sequence\":3"), "%s", r);
	free(r);
	cr_assert_eq(result(c, "{\"call_id\":\"p\",\"returned\":1}"), LF_OK,
		     "pending stays pending");
	case_free(c);
}

Test(case_rules, restart_with_a_wrong_key_loads_the_case_failed)
{
	struct lf_case *c = registered_case("C", lim(0, 0));
	struct case_limits l = lim(0, 0);
	struct lf_why why;
	unsigned char other[CHAIN_KEY_BYTES];

	case_free(c);
	memset(other, 8, sizeof(other));
	memset(&why, 0, sizeof(why));
	c = NULL;
	cr_assert_eq(case_load(backing, other, "C", &l, &c, &why), LF_VERIFY,
		     "%s", why.msg);
	cr_assert_not_null(c, "listed failed, not dropped");
	cr_assert_eq(case_get_state(c), CASE_FAILED);
	case_free(c);
}

Test(case_rules, bad_case_names_are_refused)
{
	static const char *const names[] = {"", ".", "..", "a/b", "a b", "x\n"};
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		cr_assert_eq(case_create(backing, key, names[i], &l, &c, &why),
			     LF_BAD_NAME, "%s", names[i]);
}

/* ASSERT answers HTTP 400 and records nothing; here: refused, recorded. */
Test(case_rules, matcher_error_is_refused_recorded_and_leaves_the_id_unused)
{
	static const char *pol =
		"interactions:\n  - {match: credit, mode: mock}\n";
	static const char *mk =
		"mocks:\n  - {tool: credit, when: {amount: {gt: 100}}, error: "
		"{code: LIMIT}}\n  - {tool: credit, response: {status: ok}}\n";
	struct case_limits l = lim(0, 0);
	struct lf_case *c;
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256], *r = NULL, *err;
	unsigned long long before;
	enum lf_err code;

	cr_assert_eq(case_create(backing, key, "M", &l, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, pol, strlen(pol), &why), LF_OK);
	cr_assert_eq(case_set_mocks(c, mk, strlen(mk), &why), LF_OK, "%s",
		     why.msg);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"M\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_OK);
	before = rows(c);
	cr_assert_eq(
		call(c,
		     "{\"call_id\":\"k\",\"tool\":\"credit\",\"args\":{\"amount\":\"lots\"}}",
		     &r),
		LF_EINVAL_JSON);
	cr_assert_null(r);
	cr_assert_eq(rows(c), before + 1);
	err = case_error_text(c, &code);
	cr_assert_str_eq(err, "request: operator 'gt' needs numeric operands, "
			      "got 'lots' and 100");
	free(err);
	/* The id is still free, the sequence still 1. */
	cr_assert_eq(
		call(c,
		     "{\"call_id\":\"k\",\"tool\":\"credit\",\"args\":{\"amount\":5}}",
		     &r),
		LF_OK);
	cr_assert(strstr(r, "\"sequence\":1,"), "%s", r);
	free(r);
	case_free(c);
}
