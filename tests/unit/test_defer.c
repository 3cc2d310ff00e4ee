/* SPDX-License-Identifier: MIT */
/*
 * test_defer.c - rows acknowledged once durable without a waiting thread
 * (src/defer.c, ledger.h): a case shows a deferred row only once it is
 * durable, and the write's callback runs once, after its flush.  The
 * view's side (fs/write.c) is driven by the integration tests.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case.h"
#include "case_fixture.h"
#include "case_int.h"
#include "chain.h"
#include "commit.h"
#include "defer.h"

static const char *policy = "interactions:\n"
			    "  - {match: lookup_*, mode: pass}\n"
			    "default: {mode: block}\n";

static void setup(void)
{
	/* On the disk: flushes must really go to a device. */
	case_fixture_setup("/var/tmp", "lfdefer", 7);
}

TestSuite(defer, .init = setup, .fini = case_fixture_teardown, .timeout = 60);

struct told {
	atomic_int times;
	atomic_int err;
};

static void on_told(void *arg, int err)
{
	struct told *t = arg;

	atomic_store(&t->err, err);
	atomic_fetch_add(&t->times, 1);
}

/* A registered case whose rows go through group g. */
static struct lf_case *grouped_case(const char *name, struct commit_group *g)
{
	struct case_limits l = {0, 0, 0, 0};

	return case_fixture_registered(name, l, g, policy, NULL);
}

/* A call made while a deferral is open, left pending (no kick). */
static void deferred_call(struct lf_case *c, const char *id, struct told *t)
{
	struct lf_defer *d = defer_open(on_told, t);
	struct lf_why why;
	char line[128], *reply = NULL;

	cr_assert_not_null(d);
	snprintf(line, sizeof(line),
		 "{\"call_id\":\"%s\",\"tool\":\"lookup_x\",\"args\":{}}", id);
	cr_assert_eq(case_call(c, line, strlen(line), &reply, &why), LF_OK,
		     "%s", why.msg);
	free(reply);
	cr_assert(defer_close(d), "the call's row did not wait for a flush");
}

Test(defer, a_deferred_row_is_told_only_by_a_flush)
{
	struct commit_group *g = commit_group_new(backing);
	struct lf_case *c = grouped_case("T", g);
	struct told t = {0};
	unsigned long long flushes, waits, before;

	commit_group_counts(g, &before, &waits);
	deferred_call(c, "a", &t);
	cr_expect_eq(atomic_load(&t.times), 0, "told with no flush");
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, before);
	defer_kick();
	commit_group_counts(g, &flushes, &waits);
	cr_expect_eq(flushes, before + 1);
	cr_expect_eq(atomic_load(&t.times), 1);
	cr_expect_eq(atomic_load(&t.err), 0);
	case_free(c);
	commit_group_free(g);
}

/*
 * Whatever reads the case (here the ledger's size, as the view's
 * `ledger` and `status` do) waits until the row is durable: the read
 * flushes it and the write is told before the read returns.
 */
Test(defer, a_case_is_read_only_once_its_deferred_rows_are_durable)
{
	struct commit_group *g = commit_group_new(backing);
	struct lf_case *c = grouped_case("R", g);
	struct told t = {0};
	long long size0, size1;
	char *status, *reply;

	size0 = case_ledger_size(c);
	deferred_call(c, "a", &t);
	size1 = case_ledger_size(c);
	cr_expect_eq(atomic_load(&t.times), 1,
		     "the case was read before its row was durable");
	cr_expect_gt(size1, size0);
	deferred_call(c, "b", &t);
	status = case_status_json(c);
	cr_expect_eq(atomic_load(&t.times), 2);
	free(status);
	deferred_call(c, "c", &t);
	reply = case_reply_for(c, "c");
	cr_expect_eq(atomic_load(&t.times), 3);
	cr_expect_not_null(reply);
	free(reply);
	case_free(c);
	commit_group_free(g);
}

/* A row that ends its seal epoch ratchets only once it is durable. */
Test(defer, a_row_that_ends_its_epoch_is_flushed_before_the_append_returns)
{
	struct commit_group *g = commit_group_new(backing);
	struct lf_case *c = grouped_case("E", g);
	struct lf_defer *d;
	struct lf_why why;
	struct told t = {0};
	const char *turn = "turn";

	d = defer_open(on_told, &t);
	cr_assert_eq(case_command(c, turn, strlen(turn), &why), LF_OK, "%s",
		     why.msg);
	cr_expect_not(defer_close(d), "a turn row was left pending");
	cr_expect_eq(atomic_load(&t.times), 1);
	case_free(c);
	commit_group_free(g);
}

/*
 * A deferred row whose flush fails (its ledger's descriptor swapped for
 * a pipe after the row was written: fdatasync of a pipe is EINVAL): the
 * write is told the error, and the next use of the case finds it failed
 * with the flush's reason, as a failed append fails it.
 */
Test(defer, a_failed_deferred_flush_fails_the_case_at_its_next_use)
{
	struct commit_group *g = commit_group_new(backing);
	struct lf_case *c = grouped_case("F", g);
	struct told t = {0};
	const char *res = "{\"call_id\":\"a\",\"returned\":{}}";
	struct lf_why why;
	char *status;
	int p[2];

	deferred_call(c, "a", &t);
	cr_assert_eq(pipe(p), 0);
	cr_assert_geq(dup2(p[1], ledger_fd(c->ledger)), 0);
	cr_expect_eq(case_get_state(c), CASE_FAILED);
	cr_expect_eq(atomic_load(&t.times), 1);
	cr_expect_eq(atomic_load(&t.err), EINVAL);
	status = case_status_json(c);
	cr_expect_not_null(strstr(status, "ledger flush failed"), "%s", status);
	free(status);
	cr_expect_neq(case_result(c, res, strlen(res), &why), LF_OK);
	close(p[0]);
	close(p[1]);
	case_free(c);
	commit_group_free(g);
}
