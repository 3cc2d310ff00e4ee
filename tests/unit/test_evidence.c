/* SPDX-License-Identifier: MIT */
/*
 * test_evidence.c - host evidence folded from a verified ledger, and
 * `ledgerctl evidence` refusing what it cannot verify (ledgerctl(1)
 * COMMANDS and EXIT STATUS).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "evidence.h"
#include "evidence_fixture.h"

TestSuite(evidence, .init = fx_setup, .fini = fx_teardown);

static const json_t *ev_of(const json_t *events, const char *id)
{
	const json_t *ev = evidence_find(events, id);

	cr_assert_not_null(ev, "no event for %s", id);
	return ev;
}

static const char *str(const json_t *ev, const char *key)
{
	return json_string_value(json_object_get(ev, key));
}

static json_int_t num(const json_t *ev, const char *key)
{
	return json_integer_value(json_object_get(ev, key));
}

Test(evidence, events_are_one_per_call_in_attempt_order)
{
	static const char *const ids[] = {"c1", "c2", "c3", "c4", "c5", "c6"};
	json_t *events = fx_events(0);
	size_t i;

	cr_assert_eq(json_array_size(events), 6);
	for (i = 0; i < 6; i++) {
		json_t *ev = json_array_get(events, i);

		cr_assert_str_eq(str(ev, "call_id"), ids[i]);
		cr_assert_eq(num(ev, "sequence"), (json_int_t)i + 1);
	}
	json_decref(events);
}

Test(evidence, every_event_holds_attempt_and_decision_authority)
{
	json_t *events = fx_events(0), *ev;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		cr_assert_str_eq(str(ev, "evidence_source"), "host_mediator");
		cr_assert(json_is_true(
			json_object_get(ev, "attempt_authoritative")));
		cr_assert(json_is_true(
			json_object_get(ev, "decision_authoritative")));
		cr_assert_not_null(json_object_get(ev, "args"));
		cr_assert_not_null(json_object_get(ev, "reason"));
		cr_assert_not_null(json_object_get(ev, "matched"));
		cr_assert_not_null(json_object_get(ev, "turn"));
	}
	json_decref(events);
}

/*
 * The table of ledgerctl(1) COMMANDS, evidence: only a result the host
 * generated is authoritative.
 */
Test(evidence, mock_and_block_results_are_authoritative_passes_are_not)
{
	static const struct {
		const char *id, *source;
		bool authoritative;
	} table[] = {
		{"c1", "target_reported", false}, {"c2", "host_mediator", true},
		{"c3", "host_mediator", true},	  {"c4", "not_reported", false},
		{"c5", "target_reported", false}, {"c6", "not_reported", false},
	};
	json_t *events = fx_events(0);
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const json_t *ev = ev_of(events, table[i].id);

		cr_assert_str_eq(str(ev, "result_source"), table[i].source,
				 "%s", table[i].id);
		cr_assert_eq(json_is_true(json_object_get(
				     ev, "result_authoritative")),
			     table[i].authoritative, "%s", table[i].id);
	}
	json_decref(events);
}

Test(evidence, pass_call_whose_result_never_came_shows_missing)
{
	json_t *events = fx_events(0);
	const json_t *ev = ev_of(events, "c4");

	cr_assert_str_eq(str(ev, "completion_status"), "missing");
	cr_assert_str_eq(str(ev, "execution_status"), "unknown");
	cr_assert(json_is_null(json_object_get(ev, "returned")));
	cr_assert(json_is_true(json_object_get(ev, "is_error")));
	cr_assert(json_is_false(json_object_get(ev, "result_authoritative")));
	cr_assert_eq(num(ev, "result_row"), 8);
	json_decref(events);
}

Test(evidence, reported_result_settles_a_pass_call_as_target_reported)
{
	json_t *events = fx_events(0);
	const json_t *ev = ev_of(events, "c1");

	cr_assert_str_eq(str(ev, "completion_status"), "complete");
	cr_assert_str_eq(str(ev, "execution_status"), "executed");
	cr_assert_str_eq(str(json_object_get(ev, "returned"), "name"), "Ada");
	cr_assert_eq(num(ev, "decision_row"), 3);
	cr_assert_eq(num(ev, "result_row"), 5);
	json_decref(events);
}

Test(evidence, pending_pass_call_has_no_result_row)
{
	json_t *events = fx_events(0);
	const json_t *ev = ev_of(events, "c6");

	cr_assert_str_eq(str(ev, "completion_status"), "pending");
	cr_assert(json_is_null(json_object_get(ev, "result_row")));
	cr_assert(json_is_false(json_object_get(ev, "result_authoritative")));
	json_decref(events);
}

Test(evidence, mock_and_block_results_come_from_their_decision_row)
{
	json_t *events = fx_events(0);
	const json_t *mock = ev_of(events, "c2"), *block = ev_of(events, "c3");

	cr_assert_eq(num(mock, "result_row"), num(mock, "decision_row"));
	cr_assert_eq(num(block, "result_row"), num(block, "decision_row"));
	cr_assert_str_eq(str(mock, "mock_source"), "inline");
	cr_assert(json_is_null(json_object_get(mock, "mock_rule")));
	cr_assert_str_eq(str(mock, "policy_note"), "irreversible");
	cr_assert_null(json_object_get(block, "policy_note"));
	cr_assert_null(json_object_get(block, "mock_source"));
	cr_assert_str_eq(str(json_object_get(block, "returned"), "status"),
			 "blocked");
	json_decref(events);
}

Test(evidence, turn_filter_keeps_the_calls_decided_in_that_turn)
{
	static const struct {
		unsigned long turn;
		const char *ids;
	} table[] = {{1, "c1 c2 c3 c4 "}, {2, "c5 c6 "}, {3, ""}};
	size_t i, j;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		json_t *events = fx_events(table[i].turn), *ev;
		char got[64] = "";

		json_array_foreach(events, j, ev)
		{
			strcat(got, str(ev, "call_id"));
			strcat(got, " ");
		}
		cr_assert_str_eq(got, table[i].ids, "turn %lu", table[i].turn);
		json_decref(events);
	}
}

/* Rows that contradict each other are not folded into evidence. */
Test(evidence, contradicting_rows_do_not_fold)
{
	static const char *const cases[] = {
		"[{\"row\":1,\"phase\":\"decision\",\"call_id\":\"a\",\"sequence\":1,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":1,\"completion_status\":\"pending\"},"
		" {\"row\":2,\"phase\":\"decision\",\"call_id\":\"a\",\"sequence\":2,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":1}]",
		"[{\"row\":1,\"phase\":\"completion\",\"call_id\":\"z\",\"returned\":1,\"is_error\":false,\"real_executed\":true,\"execution_status\":\"executed\",\"result_source\":\"target_reported\",\"completion_status\":\"complete\"}]",
		"[{\"row\":1,\"phase\":\"decision\",\"call_id\":\"a\",\"sequence\":1,\"tool\":\"t\",\"args\":{},\"mode\":\"mock\",\"turn\":1,\"completion_status\":\"complete\"},"
		" {\"row\":2,\"phase\":\"completion\",\"call_id\":\"a\",\"returned\":1,\"is_error\":false,\"real_executed\":true,\"execution_status\":\"executed\",\"result_source\":\"target_reported\",\"completion_status\":\"complete\"}]",
		"[{\"row\":1,\"phase\":\"decision\",\"call_id\":\"a\",\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":1}]",
	};
	struct lf_why why = {{0}};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *rows = json_loads(cases[i], 0, NULL), *out = NULL;

		cr_assert_not_null(rows, "case %zu", i);
		cr_assert_eq(evidence_fold(rows, 0, &out, &why), LF_VERIFY,
			     "case %zu", i);
		cr_assert_null(out);
		cr_log_info("case %zu: %s", i, why.msg);
		json_decref(rows);
	}
}

Test(evidence, a_row_the_fold_refuses_stops_a_scan_with_the_folds_reason)
{
	static const char *const rows[] = {
		"{\"row\":1,\"phase\":\"decision\",\"call_id\":\"a\",\"sequence\":1,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":1,\"completion_status\":\"pending\"}",
		"{\"row\":2,\"phase\":\"turn\"}",
		"{\"row\":3,\"phase\":\"decision\",\"call_id\":\"a\",\"sequence\":2,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":2}",
	};
	struct evidence_folder *f = evidence_folder_new();
	size_t i;
	int rc = 0;

	cr_assert_not_null(f);
	for (i = 0; i < 3 && rc == 0; i++) {
		json_t *row = json_loads(rows[i], 0, NULL);

		rc = evidence_folder_cb(f, row, 0, strlen(rows[i]));
		json_decref(row);
		if (i < 2) {
			cr_assert_eq(rc, 0, "row %zu", i + 1);
			cr_assert_null(evidence_folder_why(f));
		}
	}
	cr_assert_eq(rc, LF_VERIFY);
	cr_assert_not_null(evidence_folder_why(f));
	cr_assert(strstr(evidence_folder_why(f),
			 "row 3: a second decision for call 'a'"),
		  "%s", evidence_folder_why(f));
	evidence_folder_free(f);
}

Test(evidence, folding_row_by_row_gives_the_events_of_the_whole_array)
{
	json_t *all = fx_events(0), *rows = fx_rows(), *one = NULL, *row;
	struct evidence_folder *f = evidence_folder_new();
	struct lf_why why = {{0}};
	size_t i;

	cr_assert_not_null(f);
	json_array_foreach(rows, i, row)
	{
		cr_assert_eq(evidence_folder_row(f, row, &why), LF_OK, "%s",
			     why.msg);
	}
	cr_assert_eq(evidence_folder_end(f, 0, &one, &why), LF_OK);
	cr_assert(json_equal(all, one));
	evidence_folder_free(f);
	json_decref(one);
	json_decref(rows);
	json_decref(all);
}

/* evidence_folder_write, into memory: the text, or NULL. */
static char *written(struct evidence_folder *f, unsigned long turn,
		     size_t flags)
{
	struct lf_why why = {{0}};
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	cr_assert_not_null(m);
	cr_assert_eq(evidence_folder_write(f, turn, flags, m, &why), LF_OK,
		     "%s", why.msg);
	cr_assert_eq(fclose(m), 0);
	return text;
}

/*
 * A settled event is kept as its compact text and written an event at a
 * time: the bytes must be those of json_dumps of the whole array, for
 * each layout, turn, and value a row can hold (reals, escapes, a NUL,
 * text beyond ASCII, nested members), settled or still pending.
 */
Test(evidence, written_events_are_the_bytes_json_dumps_gives_the_array)
{
	static const char *const extra[] = {
		"{\"row\":101,\"phase\":\"decision\",\"call_id\":\"x1\",\"sequence\":101,\"tool\":\"t\",\"args\":{\"r\":0.1,\"big\":1e300,\"neg\":-0.0,\"s\":\"a\\u0000b\\n\\\"q\\\"\",\"u\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"deep\":{\"z\":[1,{\"y\":[]},{}],\"a\":null}},\"mode\":\"mock\",\"turn\":2,\"returned\":{\"k\":[0.5,true]},\"completion_status\":\"complete\"}",
		"{\"row\":102,\"phase\":\"decision\",\"call_id\":\"x2\",\"sequence\":102,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":2,\"completion_status\":\"pending\"}",
		"{\"row\":103,\"phase\":\"decision\",\"call_id\":\"x3\",\"sequence\":103,\"tool\":\"t\",\"args\":{},\"mode\":\"pass\",\"turn\":2,\"completion_status\":\"pending\"}",
		"{\"row\":104,\"phase\":\"completion\",\"call_id\":\"x3\",\"returned\":{\"v\":2.5},\"is_error\":false,\"real_executed\":true,\"execution_status\":\"executed\",\"result_source\":\"target_reported\",\"completion_status\":\"complete\"}",
	};
	static const size_t layouts[] = {
		JSON_INDENT(2),
		JSON_INDENT(2) | JSON_SORT_KEYS,
		JSON_INDENT(4),
		JSON_COMPACT,
		0,
	};
	static const unsigned long turns[] = {0, 1, 2, 99};
	struct evidence_folder *f = evidence_folder_new();
	struct lf_why why = {{0}};
	json_t *rows = fx_rows(), *row, *all = NULL;
	size_t i, j;

	cr_assert_not_null(f);
	for (i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		row = json_loads(extra[i], JSON_ALLOW_NUL, NULL);
		cr_assert_not_null(row, "extra row %zu", i);
		json_array_append_new(rows, row);
	}
	json_array_foreach(rows, i, row)
	{
		cr_assert_eq(evidence_folder_row(f, row, &why), LF_OK, "%s",
			     why.msg);
	}
	for (i = 0; i < sizeof(turns) / sizeof(turns[0]); i++) {
		cr_assert_eq(evidence_folder_end(f, turns[i], &all, &why),
			     LF_OK);
		for (j = 0; j < sizeof(layouts) / sizeof(layouts[0]); j++) {
			char *want = json_dumps(all, layouts[j]),
			     *got = written(f, turns[i], layouts[j]);

			cr_assert_not_null(want);
			cr_assert_str_eq(got, want, "turn %lu, layout %zu",
					 turns[i], j);
			free(want);
			free(got);
		}
		json_decref(all);
	}
	/* The settled pass refuses a second result, packed or not. */
	row = json_loads(extra[3], 0, NULL);
	json_object_set_new(row, "row", json_integer(105));
	cr_assert_eq(evidence_folder_row(f, row, &why), LF_VERIFY);
	cr_assert(strstr(why.msg, "a second result for call 'x3'"), "%s",
		  why.msg);
	json_decref(row);
	evidence_folder_free(f);
	json_decref(rows);
}

/* A value of every JSON kind, nested up to depth, from a fixed sequence. */
static json_t *random_value(unsigned *seed, int depth)
{
	static const char *const texts[] = {
		"",
		"a",
		"\"q\"",
		"back\\slash",
		"tab\tnew\nline",
		"\xc3\xa9t\xc3\xa9",
		"\xf0\x9f\x98\x80",
		"\x01\x1f",
		"/",
		/* Layout characters in strings, beside escaped quotes. */
		"a,b:c{d}[e]",
		"\\\",\\\":[{}]",
		"x\\\"},{",
	};
	static const double reals[] = {0.1, -2.5, 1e300, 3.0, 1e-7, -0.0};
	int kind = (int)(rand_r(seed) % (depth > 0 ? 8u : 6u));
	json_t *v;
	int i, n;

	switch (kind) {
	case 0:
		return json_null();
	case 1:
		return json_boolean(rand_r(seed) & 1);
	case 2:
		return json_integer((json_int_t)rand_r(seed) - RAND_MAX / 2);
	case 3:
		return json_real(reals[rand_r(seed) % 6]);
	case 4:
		return json_string(texts[rand_r(seed) %
					 (sizeof(texts) / sizeof(texts[0]))]);
	case 5:
		return json_stringn("n\0ul", 4);
	case 6:
		v = json_array();
		n = (int)(rand_r(seed) % 4);
		for (i = 0; i < n; i++)
			json_array_append_new(v, random_value(seed, depth - 1));
		return v;
	default:
		v = json_object();
		n = (int)(rand_r(seed) % 4);
		for (i = 0; i < n; i++) {
			char key[16];

			snprintf(key, sizeof(key), "k%u", rand_r(seed) % 10);
			json_object_set_new(v, key,
					    random_value(seed, depth - 1));
		}
		return v;
	}
}

/* Many calls of random arguments and results, settled or not. */
Test(evidence, written_random_events_are_the_bytes_json_dumps_gives)
{
	static const char *const modes[] = {"pass", "mock", "block"};
	struct evidence_folder *f = evidence_folder_new();
	struct lf_why why = {{0}};
	unsigned seed = 1, r = 0, i;
	json_t *row, *all = NULL;

	cr_assert_not_null(f);
	for (i = 1; i <= 300; i++) {
		const char *mode = modes[rand_r(&seed) % 3];
		char id[16];

		snprintf(id, sizeof(id), "r%u", i);
		row = json_pack("{s:I,s:s,s:s,s:I,s:s,s:o,s:s,s:I,s:s,s:o}",
				"row", (json_int_t)++r, "phase", "decision",
				"call_id", id, "sequence", (json_int_t)i,
				"tool", "t", "args",
				json_pack("{s:o}", "a", random_value(&seed, 3)),
				"mode", mode, "turn", (json_int_t)(1 + i / 100),
				"completion_status",
				strcmp(mode, "pass") ? "complete" : "pending",
				"returned", random_value(&seed, 3));
		cr_assert_eq(evidence_folder_row(f, row, &why), LF_OK, "%s",
			     why.msg);
		json_decref(row);
		if (strcmp(mode, "pass") || rand_r(&seed) % 4 == 0)
			continue;
		row = json_pack("{s:I,s:s,s:s,s:o,s:b,s:b,s:s,s:s,s:s}", "row",
				(json_int_t)++r, "phase", "completion",
				"call_id", id, "returned",
				random_value(&seed, 3), "is_error", 0,
				"real_executed", 1, "execution_status",
				"executed", "result_source", "target_reported",
				"completion_status", "complete");
		cr_assert_eq(evidence_folder_row(f, row, &why), LF_OK, "%s",
			     why.msg);
		json_decref(row);
	}
	/* Turn 0 with JSON_INDENT alone re-indents the packed text. */
	for (i = 0; i < 2 * 5; i++) {
		size_t flags = i % 2 ? JSON_INDENT(2)
				     : JSON_INDENT(2) | JSON_SORT_KEYS;
		char *want, *got;

		cr_assert_eq(evidence_folder_end(f, i / 2, &all, &why), LF_OK);
		want = json_dumps(all, flags);
		got = written(f, i / 2, flags);
		cr_assert_not_null(want);
		cr_assert_str_eq(got, want, "turn %u, flags %zx", i / 2, flags);
		free(want);
		free(got);
		json_decref(all);
	}
	evidence_folder_free(f);
}

/* ---- the command ---- */

static int run(char **out, char **err, const char *const *argv)
{
	return fx_run(ctl_evidence_main, out, err, argv);
}

Test(evidence, backing_folder_with_its_key_prints_the_evidence)
{
	const char *argv[] = {"evidence", fx_case, "--key", fx_key, NULL};
	char *out, *err;
	json_t *doc;

	cr_assert_eq(run(&out, &err, argv), 0, "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert(json_is_array(doc));
	cr_assert_eq(json_array_size(doc), 6);
	cr_assert_not_null(strstr(out, "\n  {\n    \"call_id\""),
			   "pretty, 2-space indent");
	json_decref(doc);
	free(out);
	free(err);
}

Test(evidence, ledger_file_with_turn_prints_that_turn)
{
	const char *argv[] = {"evidence", fx_ledger, "--turn",
			      "2",	  "--key=",  NULL};
	char keyarg[160], *out;
	json_t *doc;

	snprintf(keyarg, sizeof(keyarg), "--key=%s", fx_key);
	argv[4] = keyarg;
	cr_assert_eq(run(&out, NULL, argv), 0);
	doc = json_loads(out, 0, NULL);
	cr_assert_eq(json_array_size(doc), 2);
	cr_assert_str_eq(str(json_array_get(doc, 0), "call_id"), "c5");
	json_decref(doc);
	free(out);
}

/* One changed byte: exit 3 and no evidence at all on stdout. */
Test(evidence, ledger_that_does_not_verify_exits_3_and_prints_nothing)
{
	const char *argv[] = {"evidence", fx_ledger, "--key", fx_key, NULL};
	char *out, *err, buf[8192], *p;
	int fd = open(fx_ledger, O_RDWR);
	ssize_t n;

	cr_assert(fd >= 0);
	n = pread(fd, buf, sizeof(buf), 0);
	cr_assert(n > 0);
	p = memmem(buf, (size_t)n, "\"Ada\"", 5);
	cr_assert_not_null(p);
	cr_assert_eq(pwrite(fd, "\"Eve\"", 5, p - buf), 5);
	close(fd);
	cr_assert_eq(run(&out, &err, argv), 3);
	cr_assert_str_eq(out, "");
	cr_assert_not_null(strstr(err, "does not verify"), "%s", err);
	free(out);
	free(err);
}

/* Without a key the MACs cannot be checked: refused, never trusted. */
/*
 * A mounted case is checked against its daemon: the ledger read through
 * it must end where status says.  A plain folder with the two files
 * stands in for the view, so the daemon can be made to disagree.
 */
Test(evidence, mounted_case_that_disagrees_with_its_status_exits_3)
{
	static const struct {
		int back; /* status rows: the ledger's minus this */
		bool right_head;
		int want;
	} t[] = {{0, true, 0}, {1, true, 3}, {0, false, 3}};
	char dir[200], path[240], line[65536], prev[65536] = "";
	char hex[CHAIN_HEX_LEN + 1];
	const char *argv[] = {"evidence", dir, NULL};
	int rows = 0;
	size_t i;
	FILE *in, *f;

	snprintf(dir, sizeof(dir), "%s/mnt", fx_dir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/mnt/C1", fx_dir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/ledger", dir);
	in = fopen(fx_ledger, "r");
	f = fopen(path, "w");
	cr_assert(in && f);
	while (fgets(line, sizeof(line), in)) {
		fputs(line, f);
		snprintf(prev, sizeof(prev), "%s", line);
		rows++;
	}
	fclose(in);
	fclose(f);
	prev[strcspn(prev, "\n")] = '\0';
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *out = NULL, *err = NULL;

		if (t[i].right_head && !t[i].back)
			chain_sha256_hex(prev, strlen(prev), hex);
		else
			snprintf(hex, sizeof(hex), "%064d", 5);
		snprintf(path, sizeof(path), "%s/status", dir);
		f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f, "{\"rows\": %d, \"head\": \"%s\"}\n",
			rows - t[i].back, hex);
		fclose(f);
		cr_expect_eq(run(&out, &err, argv), t[i].want, "row %zu: %s", i,
			     err);
		if (t[i].want == 3)
			cr_expect_str_eq(out, "", "row %zu: nothing on stdout",
					 i);
		free(out);
		free(err);
	}
}

Test(evidence, ledger_file_without_a_key_is_refused)
{
	const char *argv[] = {"evidence", fx_ledger, NULL};
	char *out, *err;

	cr_assert_eq(run(&out, &err, argv), 3);
	cr_assert_str_eq(out, "");
	if (access(CTL_DEFAULT_KEY, F_OK) != 0)
		cr_assert_not_null(strstr(err, "refused"), "%s", err);
	free(out);
	free(err);
}

Test(evidence, ledger_under_another_key_is_refused)
{
	const char *argv[] = {"evidence", fx_case, "--key", fx_bad_key, NULL};
	char *out;

	cr_assert_eq(run(&out, NULL, argv), 3);
	cr_assert_str_eq(out, "");
	free(out);
}

/* A ledger moved into another case's folder names the wrong case. */
Test(evidence, ledger_in_another_cases_folder_does_not_verify)
{
	char other[160], cmd[512];
	const char *argv[] = {"evidence", other, "--key", fx_key, NULL};
	char *out;

	snprintf(other, sizeof(other), "%s/cases/C2", fx_dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s'", fx_case, other);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(run(&out, NULL, argv), 3);
	cr_assert_str_eq(out, "");
	free(out);
}

Test(evidence, usage_and_unreadable_input_exit_2)
{
	char missing[160];
	const char *const cases[][6] = {
		{"evidence", NULL},
		{"evidence", fx_case, "--turn", "0", NULL},
		{"evidence", fx_case, "--turn", "x1", NULL},
		{"evidence", fx_case, "--frob", NULL},
		{"evidence", fx_case, fx_case, NULL},
		{"evidence", missing, "--key", fx_key, NULL},
		{"evidence", fx_dir, "--key", fx_key, NULL},
		{"evidence", fx_case, "--key", missing, NULL},
	};
	size_t i;
	char *out;

	snprintf(missing, sizeof(missing), "%s/nothing-here", fx_dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(run(&out, NULL, cases[i]), 2, "case %zu", i);
		cr_assert_str_eq(out, "", "case %zu", i);
		free(out);
	}
}
