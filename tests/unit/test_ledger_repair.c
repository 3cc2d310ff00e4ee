/* SPDX-License-Identifier: MIT */
/*
 * test_ledger_repair.c - torn-tail repair survives a kill at any point
 * (ledgerfs-ledger(5), RECOVERY).  Each test lays on disk the state a kill
 * at one step leaves (torn tail, journal, cut, half a note, note) and
 * checks that the next open ends with exactly one `recovered` row that
 * names the original torn bytes, no journal, and a ledger that verifies.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "ledger.h"

static char dir[64], lpath[96], jpath[112];
static unsigned char key[CHAIN_KEY_BYTES];
static const char torn[] = "{\"case_id\":\"C1\",\"phase\":\"decision\",\"pr";

static void setup(void)
{
	chain_init();
	snprintf(dir, sizeof(dir), "/tmp/lfrepair.XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(lpath, sizeof(lpath), "%s/ledger.jsonl", dir);
	snprintf(jpath, sizeof(jpath), "%s.repair", lpath);
	memset(key, 9, sizeof(key));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(ledger_repair, .init = setup, .fini = teardown);

/* A ledger of three rows; returns its length in bytes. */
static long long three_rows(void)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	struct stat st;
	int i;

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", key, true, NULL, &l, &why),
		LF_OK, "%s", why.msg);
	for (i = 0; i < 3; i++) {
		json_t *row =
			json_pack("{s:s, s:i}", "phase", "turn", "turn", i + 1);

		cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK);
		json_decref(row);
	}
	ledger_close(l);
	cr_assert_eq(stat(lpath, &st), 0);
	return st.st_size;
}

static void append_bytes(const char *path, const char *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, bytes, n), (ssize_t)n);
	close(fd);
}

/* The journal a repair of the torn bytes above writes before cutting. */
static void write_journal(long long good)
{
	char hex[CHAIN_HEX_LEN + 1], text[256];

	chain_sha256_hex(torn, strlen(torn), hex);
	snprintf(
		text, sizeof(text),
		"{\"cut_bytes\":%zu,\"cut_sha256\":\"%s\",\"good_bytes\":%lld}\n",
		strlen(torn), hex, good);
	unlink(jpath);
	append_bytes(jpath, text, strlen(text));
}

struct notes {
	int recovered, rows;
	char sha[CHAIN_HEX_LEN + 1];
};

static int note_cb(void *ctx, const json_t *row, long long off, size_t len)
{
	struct notes *n = ctx;
	const char *phase = json_string_value(json_object_get(row, "phase"));

	(void)off;
	(void)len;
	n->rows++;
	if (phase && strcmp(phase, "recovered") == 0) {
		n->recovered++;
		snprintf(n->sha, sizeof(n->sha), "%s",
			 json_string_value(json_object_get(row, "cut_sha256")));
	}
	return 0;
}

/*
 * Open (the repair runs), then check the outcome both as the opener saw
 * it and as a fresh verify of the file sees it.
 */
static void open_and_check_one_note(void)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	struct notes seen = {0}, after = {0};
	struct ledger_report rep;
	char want[CHAIN_HEX_LEN + 1];
	struct stat st;
	int fd;

	cr_assert_eq(ledger_open(AT_FDCWD, lpath, "C1", key, false,
				 &(struct ledger_reader){.cb = note_cb,
							 .ctx = &seen},
				 &l, &why),
		     LF_OK, "%s", why.msg);
	ledger_close(l);
	chain_sha256_hex(torn, strlen(torn), want);
	cr_assert_eq(seen.recovered, 1, "the opener saw %d notes",
		     seen.recovered);
	cr_assert_str_eq(seen.sha, want, "the note names the original tail");
	cr_assert_neq(stat(jpath, &st), 0, "the journal is gone");
	fd = open(lpath, O_RDONLY);
	cr_assert_eq(
		ledger_verify_fd(fd, "C1", key, note_cb, &after, &rep, &why),
		LF_OK, "%s", why.msg);
	close(fd);
	cr_assert_eq(after.recovered, 1);
	cr_assert_eq(after.rows, 4);
}

Test(ledger_repair, kill_before_the_journal_repairs_as_usual)
{
	three_rows();
	append_bytes(lpath, torn, strlen(torn));
	open_and_check_one_note();
}

Test(ledger_repair, kill_after_the_journal_before_the_cut_repairs_once)
{
	long long good = three_rows();

	append_bytes(lpath, torn, strlen(torn));
	write_journal(good);
	open_and_check_one_note();
}

Test(ledger_repair, kill_after_the_cut_before_the_note_appends_the_note)
{
	long long good = three_rows();

	/* The torn bytes are gone; only the journal remembers them. */
	write_journal(good);
	open_and_check_one_note();
}

Test(ledger_repair, kill_while_writing_the_note_appends_the_journaled_note)
{
	long long good = three_rows();
	static const char half_note[] = "{\"case_id\":\"C1\",\"cut_bytes\":4";

	append_bytes(lpath, half_note, strlen(half_note));
	write_journal(good);
	open_and_check_one_note();
}

Test(ledger_repair, kill_after_the_note_before_the_journal_goes_adds_nothing)
{
	long long good = three_rows();

	append_bytes(lpath, torn, strlen(torn));
	write_journal(good);
	open_and_check_one_note();
	/* The same journal back, as if its unlink never reached the disk. */
	write_journal(good);
	open_and_check_one_note();
}

Test(ledger_repair, a_half_written_journal_with_the_tail_still_there_is_redone)
{
	three_rows();
	append_bytes(lpath, torn, strlen(torn));
	append_bytes(jpath, "{\"cut_bytes\":4", 14);
	open_and_check_one_note();
}
