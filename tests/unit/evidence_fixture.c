/* SPDX-License-Identifier: MIT */
/*
 * evidence_fixture.c - the host ledger the evidence and transcript tests
 * read (see evidence_fixture.h), and a runner that captures a ledgerctl
 * main's output.
 */
#include "evidence_fixture.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "evidence.h"
#include "ledger.h"

char fx_dir[64];
char fx_case[128];
char fx_ledger[160];
char fx_key[128];
char fx_bad_key[128];

static unsigned char key[CHAIN_KEY_BYTES];

static void write_key(const char *path, unsigned char fill)
{
	unsigned char k[CHAIN_KEY_BYTES];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

	memset(k, fill, sizeof(k));
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, k, sizeof(k)), (ssize_t)sizeof(k));
	close(fd);
}

static void add(struct ledger *l, json_t *row)
{
	struct lf_why why = {{0}};

	cr_assert_not_null(row);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK, "%s",
		     why.msg);
	json_decref(row);
}

/* A decision row for a passed call, as case_call.c writes it. */
static json_t *pass_row(int seq, const char *id, const char *tool,
			const char *args, int turn)
{
	return json_pack(
		"{s:s, s:i, s:s, s:s, s:o, s:s, s:s, s:s, s:s, s:i, s:n, s:n, s:n, s:s, s:s, s:s, s:i}",
		"phase", "decision", "sequence", seq, "call_id", id, "tool",
		tool, "args", json_loads(args, 0, NULL), "decision_source",
		"host_mediator", "mode", "pass", "matched", "lookup_*",
		"reason", "allowed by mediation policy rule 'lookup_*'",
		"policy_rule", 0, "returned", "is_error", "real_executed",
		"execution_status", "pending", "result_source", "not_reported",
		"completion_status", "pending", "turn", turn);
}

static json_t *completion_row(int seq, const char *id, const char *tool,
			      const char *returned, int turn)
{
	return json_pack(
		"{s:s, s:i, s:s, s:s, s:o, s:b, s:b, s:s, s:s, s:b, s:s, s:s, s:i}",
		"phase", "completion", "sequence", seq, "call_id", id, "tool",
		tool, "returned", json_loads(returned, 0, NULL), "is_error", 0,
		"real_executed", 1, "execution_status", "executed",
		"result_source", "target_reported", "result_authoritative", 0,
		"completion_status", "complete", "decision_source",
		"host_mediator", "turn", turn);
}

void fx_setup(void)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	char path[160];
	json_t *row;

	chain_init();
	strcpy(fx_dir, "/tmp/test_evidence.XXXXXX");
	cr_assert_not_null(mkdtemp(fx_dir));
	snprintf(path, sizeof(path), "%s/cases", fx_dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	snprintf(fx_case, sizeof(fx_case), "%s/cases/C1", fx_dir);
	cr_assert_eq(mkdir(fx_case, 0700), 0);
	snprintf(fx_ledger, sizeof(fx_ledger), "%s/ledger.jsonl", fx_case);
	snprintf(fx_key, sizeof(fx_key), "%s/host.key", fx_dir);
	snprintf(fx_bad_key, sizeof(fx_bad_key), "%s/other.key", fx_dir);
	write_key(fx_key, 0x5a);
	write_key(fx_bad_key, 0xa5);
	memset(key, 0x5a, sizeof(key));
	cr_assert_eq(ledger_open(AT_FDCWD, fx_ledger, "C1", key, true, NULL, &l,
				 &why),
		     LF_OK, "%s", why.msg);
	add(l, json_pack("{s:s}", "phase", "case_opened"));
	add(l,
	    json_pack(
		    "{s:s, s:s, s:s}", "phase", "registered", "policy_sha256",
		    "1111111111111111111111111111111111111111111111111111111111111111",
		    "mocks_sha256",
		    "2222222222222222222222222222222222222222222222222222222222222222"));
	/* turn 1 */
	add(l, pass_row(1, "c1", "lookup_customer", "{\"id\":42}", 1));
	add(l,
	    json_pack(
		    "{s:s, s:i, s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:i, s:s, s:{s:s}, s:b, s:b, s:s, s:s, s:b, s:s, s:s, s:n, s:i}",
		    "phase", "decision", "sequence", 2, "call_id", "c2", "tool",
		    "send_message", "args", "to", "ada", "body", "hi",
		    "decision_source", "host_mediator", "mode", "mock",
		    "matched", "send_message", "reason",
		    "mocked by mediation policy rule 'send_message'",
		    "policy_rule", 1, "policy_note", "irreversible", "returned",
		    "status", "sent", "is_error", 0, "real_executed", 0,
		    "execution_status", "not_executed", "result_source",
		    "host_mediator", "result_authoritative", 1,
		    "completion_status", "complete", "mock_source", "inline",
		    "mock_rule", "turn", 1));
	add(l, completion_row(1, "c1", "lookup_customer", "{\"name\":\"Ada\"}",
			      1));
	add(l,
	    json_pack(
		    "{s:s, s:i, s:s, s:s, s:{s:i}, s:s, s:s, s:s, s:s, s:n, s:{s:s, s:s}, s:b, s:b, s:s, s:s, s:b, s:s, s:i}",
		    "phase", "decision", "sequence", 3, "call_id", "c3", "tool",
		    "delete_account", "args", "id", 42, "decision_source",
		    "host_mediator", "mode", "block", "matched", "<default>",
		    "reason", "blocked by default mediation policy",
		    "policy_rule", "returned", "status", "blocked", "message",
		    "Tool delete_account was blocked by sandbox mediation policy.",
		    "is_error", 1, "real_executed", 0, "execution_status",
		    "not_executed", "result_source", "host_mediator",
		    "result_authoritative", 1, "completion_status", "complete",
		    "turn", 1));
	add(l, pass_row(4, "c4", "lookup_weather",
			"{\"n\":2.0,\"city\":\"Oslo\"}", 1));
	add(l,
	    json_pack(
		    "{s:s, s:i, s:s, s:s, s:n, s:b, s:n, s:s, s:s, s:s, s:b, s:s, s:i}",
		    "phase", "completion_missing", "sequence", 4, "call_id",
		    "c4", "tool", "lookup_weather", "returned", "is_error", 1,
		    "real_executed", "execution_status", "unknown",
		    "result_source", "not_reported", "completion_status",
		    "missing", "result_authoritative", 0, "decision_source",
		    "host_mediator", "turn", 1));
	add(l, json_pack("{s:s, s:i, s:i}", "phase", "turn", "turn", 1,
			 "missing", 1));
	/* turn 2 */
	add(l, pass_row(5, "c5", "lookup_customer", "{\"id\":7}", 2));
	add(l, completion_row(5, "c5", "lookup_customer",
			      "{\"name\":\"Grace\"}", 2));
	add(l, pass_row(6, "c6", "lookup_audit", "{\"event\":\"x\"}", 2));
	row = json_pack(
		"{s:s, s:s, s:s, s:s, s:i, s:s, s:i, s:s}", "phase", "refused",
		"input", "result", "refusal", "LF_NOT_PASS", "reason",
		"call 'c4' was already marked missing", "input_bytes", 40,
		"input_sha256",
		"3333333333333333333333333333333333333333333333333333333333333333",
		"turn", 2, "call_id", "c4");
	add(l, row);
	ledger_close(l);
}

void fx_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_dir);
	cr_assert_eq(system(cmd), 0);
}

static int collect(void *ctx, const json_t *row, long long off, size_t len)
{
	(void)off;
	(void)len;
	return json_array_append((json_t *)ctx, (json_t *)row);
}

json_t *fx_rows(void)
{
	struct ledger_report rep;
	struct lf_why why = {{0}};
	json_t *rows = json_array();
	int fd = open(fx_ledger, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(ledger_verify_fd(fd, "C1", key, collect, rows, &rep, &why),
		     LF_OK, "%s", why.msg);
	close(fd);
	return rows;
}

json_t *fx_events(unsigned long turn)
{
	struct lf_why why = {{0}};
	json_t *rows = fx_rows(), *events = NULL;

	cr_assert_eq(evidence_fold(rows, turn, &events, &why), LF_OK, "%s",
		     why.msg);
	json_decref(rows);
	return events;
}

const char *fx_transcript_path(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/transcripts/%s", TEST_DATA, name);
	return path;
}

json_t *fx_transcript(const char *name)
{
	json_error_t err;
	json_t *doc = json_load_file(fx_transcript_path(name), 0, &err);

	cr_assert_not_null(doc, "%s: %s", name, err.text);
	return doc;
}

static char *read_back(FILE *f)
{
	int fd = fileno(f);
	off_t n = lseek(fd, 0, SEEK_END);
	char *s = malloc((size_t)n + 1);

	cr_assert_not_null(s);
	cr_assert_eq(pread(fd, s, (size_t)n, 0), (ssize_t)n);
	s[n] = '\0';
	return s;
}

int fx_run(int (*main_fn)(int, char **), char **out, char **err,
	   const char *const *argv)
{
	FILE *fo = tmpfile(), *fe = tmpfile();
	int save_out = dup(1), save_err = dup(2), argc = 0, rc;

	cr_assert(fo && fe && save_out >= 0 && save_err >= 0);
	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(fo), 1);
	dup2(fileno(fe), 2);
	rc = main_fn(argc, (char **)argv);
	fflush(stdout);
	fflush(stderr);
	dup2(save_out, 1);
	dup2(save_err, 2);
	close(save_out);
	close(save_err);
	if (out)
		*out = read_back(fo);
	if (err)
		*err = read_back(fe);
	fclose(fo);
	fclose(fe);
	return rc;
}
