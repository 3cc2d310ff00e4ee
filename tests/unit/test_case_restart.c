/* SPDX-License-Identifier: MIT */
/*
 * test_case_restart.c - a restart replays recorded decisions as facts
 * (ledgerfs(8), RESTART): the mock rule a decision row names moves the
 * scenario cursor and state, whatever matching the arguments again would
 * say, so no pattern is matched at load.
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
#include "chain.h"
#include "ledger.h"

/* Rule 0 has steps and serves only x == 1; rule 1 serves the rest. */
static const char policy[] = "interactions:\n"
			     "  - {match: step, mode: mock}\n"
			     "default: {mode: block}\n";
static const char mocks[] = "version: 1\n"
			    "mocks:\n"
			    "  - tool: step\n"
			    "    scenario: s\n"
			    "    when: {x: {eq: 1}}\n"
			    "    responses:\n"
			    "      - {response: {n: 1}}\n"
			    "      - {response: {n: 2}, sets_state: two}\n"
			    "      - {response: {n: 3}}\n"
			    "  - tool: step\n"
			    "    response: {n: other}\n";

static void setup(void)
{
	case_fixture_setup("/tmp", "lfrestart", 5);
}

TestSuite(case_restart, .init = setup, .fini = case_fixture_teardown);

static char *call(struct lf_case *c, const char *line)
{
	struct lf_why why = {{0}};
	char *reply = NULL;

	cr_assert_eq(case_call(c, line, strlen(line), &reply, &why), LF_OK,
		     "%s", why.msg);
	return reply;
}

/*
 * A decision row, as the daemon would have written it, saying rule 0
 * served a call whose arguments (x == 2) rule 0 does not match.
 */
static void append_fact(const char *name)
{
	char path[160];
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	json_t *row;
	int dirfd;

	snprintf(path, sizeof(path), "cases/%s", name);
	dirfd = openat(backing, path, O_RDONLY | O_DIRECTORY);
	cr_assert(dirfd >= 0);
	cr_assert_eq(ledger_open(dirfd, "ledger.jsonl", name, key, false, NULL,
				 &l, &why),
		     LF_OK, "%s", why.msg);
	row = json_pack("{s:s, s:i, s:s, s:s, s:{s:i}, s:s, s:s, s:s, s:i,"
			" s:i, s:i, s:s, s:s, s:{s:i}, s:b, s:i}",
			"phase", "decision", "sequence", 2, "call_id", "b",
			"tool", "step", "args", "x", 2, "mode", "mock",
			"matched", "step", "reason", "recorded", "policy_rule",
			0, "mock_rule", 0, "mock_step", 1, "scenario", "s",
			"scenario_state", "two", "returned", "n", 2, "is_error",
			0, "turn", 1);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK, "%s",
		     why.msg);
	json_decref(row);
	ledger_close(l);
	close(dirfd);
}

Test(case_restart, restart_replays_the_recorded_rule_without_matching)
{
	struct case_limits lim = {0};
	struct lf_why why = {{0}};
	struct lf_case *c;
	char tok[CHAIN_HEX_LEN + 1], line[256], *reply, *st;

	cr_assert_eq(case_create(backing, key, "R", &lim, &c, &why), LF_OK);
	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why), LF_OK);
	cr_assert_eq(case_set_mocks(c, mocks, strlen(mocks), &why), LF_OK, "%s",
		     why.msg);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"R\",\"token\":\"%s\"}",
		 tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_OK);
	free(call(c,
		  "{\"call_id\":\"a\",\"tool\":\"step\",\"args\":{\"x\":1}}"));
	case_free(c);
	append_fact("R");

	cr_assert_eq(case_load(backing, key, "R", &lim, &c, &why), LF_OK, "%s",
		     why.msg);
	st = case_status_json(c);
	cr_assert(strstr(st, "\"state\": \"registered\""), "%s", st);
	free(st);
	/* Matching b again would have left the cursor at 1: the reply n: 2. */
	reply = call(
		c, "{\"call_id\":\"c\",\"tool\":\"step\",\"args\":{\"x\":1}}");
	cr_assert(strstr(reply, "\"returned\":{\"n\":3}"),
		  "the recorded rule moved the cursor: %s", reply);
	free(reply);
	case_free(c);
}
