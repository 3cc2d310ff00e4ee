/* SPDX-License-Identifier: MIT */
/*
 * test_ledger_hashes.c - verification with helper threads (ledgerctl(1)
 * verify hashes chain links on every processor) reaches the same
 * verdict, bad row and reason as on one thread, for good ledgers and for
 * each kind of fault, wherever in a batch it falls.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "ledger_hashes.h"

/* More rows than one batch, so faults land in the second batch too. */
#define ROWS (LEDGER_HASHES_BATCH + 700)

static char tmpdir[64], lpath[128], tpath[128];
static unsigned char key[CHAIN_KEY_BYTES];
static char *orig;
static size_t orig_n;

/* The ledger is made once per test on a tmpfs: appends cost no flush. */
static void setup(void)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	json_t *row;
	FILE *f;
	long sz;
	int i;

	strcpy(tmpdir, "/dev/shm/test_ledger_hashes.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		strcpy(tmpdir, "/tmp/test_ledger_hashes.XXXXXX");
		cr_assert_not_null(mkdtemp(tmpdir));
	}
	snprintf(lpath, sizeof(lpath), "%s/ledger.jsonl", tmpdir);
	snprintf(tpath, sizeof(tpath), "%s/changed.jsonl", tmpdir);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		key[i] = (unsigned char)(0x30 + i);
	cr_assert_eq(ledger_open(AT_FDCWD, lpath, "C1", key, true, NULL, NULL,
				 &l, &why),
		     LF_OK, "%s", why.msg);
	for (i = 0; i < ROWS; i++) {
		row = json_pack("{s:s, s:i, s:{s:s, s:i}}", "phase",
				i % 2 ? "decision" : "completion", "sequence",
				i, "args", "s", "a \"quoted\" \\ value", "n",
				i);
		cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK,
			     "%s", why.msg);
		json_decref(row);
	}
	ledger_close(l);
	f = fopen(lpath, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	orig = malloc((size_t)sz);
	cr_assert_eq(fread(orig, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	orig_n = (size_t)sz;
}

static void teardown(void)
{
	char cmd[128];

	free(orig);
	ledger_verify_set_threads(1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(ledger_hashes, .init = setup, .fini = teardown);

/* Offset of the start of row r (1-based) in orig. */
static size_t row_at(unsigned long long r)
{
	size_t off = 0;

	while (--r)
		off = (size_t)((char *)memchr(orig + off, '\n', orig_n - off) -
			       orig) +
		      1;
	return off;
}

/* Write orig with bytes [at, at + cut) replaced by ins. */
static void write_changed(size_t at, size_t cut, const char *ins)
{
	FILE *f = fopen(tpath, "wb");

	cr_assert_not_null(f);
	fwrite(orig, 1, at, f);
	fputs(ins, f);
	fwrite(orig + at + cut, 1, orig_n - at - cut, f);
	fclose(f);
}

struct outcome {
	enum lf_err rc;
	struct ledger_report rep;
	char why[256];
};

static void verify_with(unsigned threads, const char *path,
			const unsigned char *k, struct outcome *o)
{
	struct lf_why why = {{0}};
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0);
	ledger_verify_set_threads(threads);
	o->rc = ledger_verify_fd(fd, NULL, k, NULL, NULL, &o->rep, &why);
	snprintf(o->why, sizeof(o->why), "%s", why.msg);
	close(fd);
}

/* One thread and three: the same verdict, row, reason and head. */
static void expect_same(const char *path, const unsigned char *k,
			enum lf_err want, unsigned long long want_row)
{
	struct outcome one, many;

	verify_with(1, path, k, &one);
	verify_with(3, path, k, &many);
	cr_assert_eq(one.rc, want, "one thread: %s", one.why);
	cr_assert_eq(many.rc, one.rc, "threads: %s / %s", many.why, one.why);
	cr_assert_str_eq(many.why, one.why);
	cr_assert_eq(one.rep.bad_row, want_row, "bad row %llu (%s)",
		     one.rep.bad_row, one.why);
	cr_assert_eq(many.rep.bad_row, one.rep.bad_row);
	cr_assert_eq(many.rep.head.rows, one.rep.head.rows);
	cr_assert_str_eq(many.rep.head.head, one.rep.head.head);
	cr_assert_eq(many.rep.good_bytes, one.rep.good_bytes);
	cr_assert_eq(many.rep.torn, one.rep.torn);
}

Test(ledger_hashes, a_good_ledger_verifies_alike_on_one_and_many_threads)
{
	expect_same(lpath, key, LF_OK, 0);
	expect_same(lpath, NULL, LF_OK, 0);
}

Test(ledger_hashes, a_changed_byte_in_the_second_batch_fails_the_mac_alike)
{
	size_t at = row_at(LEDGER_HASHES_BATCH + 300);
	char *q = memmem(orig + at, orig_n - at, "quoted", 6);

	write_changed((size_t)(q - orig), 1, "Q");
	expect_same(tpath, key, LF_VERIFY, LEDGER_HASHES_BATCH + 300);
}

Test(ledger_hashes, a_removed_row_breaks_the_chain_alike)
{
	size_t a = row_at(100), b = row_at(101);

	write_changed(a, b - a, "");
	expect_same(tpath, NULL, LF_VERIFY, 100);
	expect_same(tpath, key, LF_VERIFY, 100);
}

Test(ledger_hashes, a_malformed_line_mid_batch_is_reported_alike)
{
	size_t at = row_at(3000);

	write_changed(at, 1, "[");
	expect_same(tpath, key, LF_VERIFY, 3000);
}

/* Keyless, canonical form stands in for the MAC, on helpers or not. */
Test(ledger_hashes, a_non_canonical_row_without_a_key_is_found_alike)
{
	size_t at = row_at(LEDGER_HASHES_BATCH + 7);
	char *q = memmem(orig + at, orig_n - at, "\"n\":", 4);

	/* One space in its args: the same JSON, not the same bytes. */
	write_changed((size_t)(q - orig) + 4, 0, " ");
	expect_same(tpath, NULL, LF_VERIFY, LEDGER_HASHES_BATCH + 7);
	expect_same(tpath, key, LF_VERIFY, LEDGER_HASHES_BATCH + 7);
}

Test(ledger_hashes, a_torn_tail_is_found_alike)
{
	FILE *f = fopen(tpath, "wb");

	fwrite(orig, 1, orig_n, f);
	fputs("{\"case_id\":\"C1\",\"row\":", f);
	fclose(f);
	expect_same(tpath, key, LF_VERIFY, ROWS + 1);
}
