/* SPDX-License-Identifier: MIT */
/*
 * test_ledger.c - the ledger's rules (ledgerfs-ledger(5) ROWS, VERIFICATION
 * and RECOVERY): row format, durable append, verification that finds any
 * changed/removed/inserted/reordered row, torn-tail recovery, fail-closed
 * appends, and `ledgerctl verify`.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_verify.h"
#include "ledger.h"

static char tmpdir[64];
static char lpath[128];
static unsigned char key[CHAIN_KEY_BYTES];

static void setup(void)
{
	int i;

	strcpy(tmpdir, "/tmp/test_ledger.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
	snprintf(lpath, sizeof(lpath), "%s/ledger.jsonl", tmpdir);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		key[i] = (unsigned char)(0xa0 + i);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(ledger, .init = setup, .fini = teardown);

/* ---- helpers ---- */

static struct ledger *create_ledger(const char *case_id)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};

	cr_assert_eq(ledger_open(AT_FDCWD, lpath, case_id, key, true, NULL, &l,
				 &why),
		     LF_OK, "%s", why.msg);
	return l;
}

static void append(struct ledger *l, json_t *row)
{
	struct lf_why why = {{0}};

	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK, "%s",
		     why.msg);
	json_decref(row);
}

/* A row of a varied phase; short unless `rich` (nested args, unicode). */
static json_t *sample_row(int i, bool rich)
{
	static const char *const phases[] = {"decision", "completion", "turn",
					     "refused"};
	json_t *row = json_pack("{s:s}", "phase", phases[i % 4]);

	if (!rich)
		return row;
	json_object_set_new(row, "sequence", json_integer(i));
	json_object_set_new(row, "tool",
			    json_string("lookup_\xc3\xa9t\xc3\xa9"));
	json_object_set_new(
		row, "args",
		json_pack("{s:i, s:[s, {s:b, s:n}], s:s, s:f, s:s, s:s}", "id",
			  i, "list", "\xe2\x9c\x93 ok", "deep", 1, "none", "q",
			  "a \"quoted\" \\ line\n", "r", 2.5,
			  /* a string that ends in an escape */
			  "dir", "C:\\tmp\\",
			  /* one escaped quote, then a brace */
			  "odd", "a \" b {"));
	return row;
}

static void build(struct ledger *l, int n, bool rich)
{
	int i;

	for (i = 0; i < n; i++)
		append(l, sample_row(i, rich));
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long sz;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)sz + 1);
	cr_assert_eq(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	buf[sz] = '\0';
	fclose(f);
	*n = (size_t)sz;
	return buf;
}

static void spit(const char *path, const char *buf, size_t n)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
}

/* Split a ledger's bytes into malloc'd lines (without newline). */
static int split_lines(const char *buf, size_t n, char **lines, int max)
{
	int k = 0;
	const char *p = buf, *nl;

	while (p < buf + n && k < max) {
		nl = memchr(p, '\n', (size_t)(buf + n - p));
		cr_assert_not_null(nl);
		lines[k] = strndup(p, (size_t)(nl - p));
		k++;
		p = nl + 1;
	}
	return k;
}

static void join_lines(const char *path, char **lines, int k)
{
	FILE *f = fopen(path, "wb");
	int i;

	cr_assert_not_null(f);
	for (i = 0; i < k; i++)
		fprintf(f, "%s\n", lines[i]);
	fclose(f);
}

static void free_lines(char **lines, int k)
{
	while (k--)
		free(lines[k]);
}

static enum lf_err verify_path(const char *path, const unsigned char *k,
			       struct ledger_report *rep, struct lf_why *why)
{
	int fd = open(path, O_RDONLY);
	enum lf_err rc;

	cr_assert_geq(fd, 0);
	rc = ledger_verify_fd(fd, NULL, k, NULL, NULL, rep, why);
	close(fd);
	return rc;
}

/* A line the way an outsider would forge it, chained after prev. */
static char *forge_line(const unsigned char *fkey, const char *case_id,
			unsigned long long row, const char *prev,
			const char *phase)
{
	unsigned char ck[CHAIN_KEY_BYTES];
	char mac[CHAIN_HEX_LEN + 1], *body, *line;
	json_t *o = json_pack("{s:s, s:I, s:s, s:s, s:s}", "case_id", case_id,
			      "row", (json_int_t)row, "time",
			      "2026-01-01T00:00:00.000000Z", "phase", phase,
			      "prev", prev);

	chain_case_key(fkey, case_id, ck);
	body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	chain_hmac_hex(ck, body, strlen(body), mac);
	json_object_set_new(o, "mac", json_string(mac));
	line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	free(body);
	json_decref(o);
	return line;
}

/* Run ctl_verify_main capturing stdout/stderr into out/err. */
static int run_verify(char **argv, int argc, char *out, size_t on, char *err,
		      size_t en)
{
	char opath[160], epath[160];
	int so, se, fo, fe, rc;
	ssize_t r;

	snprintf(opath, sizeof(opath), "%s/out.txt", tmpdir);
	snprintf(epath, sizeof(epath), "%s/err.txt", tmpdir);
	fflush(stdout);
	fflush(stderr);
	so = dup(1);
	se = dup(2);
	fo = open(opath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	fe = open(epath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fo, 1);
	dup2(fe, 2);
	rc = ctl_verify_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	r = pread(fo, out, on - 1, 0);
	out[r > 0 ? r : 0] = '\0';
	r = pread(fe, err, en - 1, 0);
	err[r > 0 ? r : 0] = '\0';
	close(fo);
	close(fe);
	return rc;
}

static void write_key_file(const char *path, const unsigned char *k)
{
	spit(path, (const char *)k, CHAIN_KEY_BYTES);
	chmod(path, 0600);
}

/* ---- append and format ---- */

Test(ledger, a_read_that_reaches_the_end_of_the_file_fails_with_eio)
{
	char path[] = "/tmp/test_ledger_get.XXXXXX", buf[16];
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	unlink(path);
	cr_assert_eq(ledger_put(fd, "0123456789", 10, 0), 0);
	cr_assert_eq(ledger_get(fd, buf, 4, 6), 0);
	cr_assert_eq(memcmp(buf, "6789", 4), 0);
	errno = 0;
	cr_assert_eq(ledger_get(fd, buf, 5, 6), -1, "read past the end");
	cr_assert_eq(errno, EIO);
	cr_assert_eq(ledger_get(fd, buf, 1, 10), -1, "read at the end");
	close(fd);
}

Test(ledger, append_returns_offsets_lengths_and_head)
{
	struct ledger *l = create_ledger("C1");
	struct ledger_head h;
	struct lf_why why = {{0}};
	long long off;
	size_t len, n;
	char *buf, hex[CHAIN_HEX_LEN + 1];
	json_t *row, *back;
	int i;

	ledger_get_head(l, &h);
	cr_assert_eq(h.rows, 0);
	cr_assert_str_eq(
		h.head,
		"0000000000000000000000000000000000000000000000000000000000000000");
	long long expect = 0;
	for (i = 0; i < 3; i++) {
		row = sample_row(i, true);
		cr_assert_eq(ledger_append(l, row, &off, &len, &why), LF_OK,
			     "%s", why.msg);
		cr_assert_eq(off, expect, "row %d lands after the previous", i);
		back = ledger_read_row(l, off, len);
		cr_assert_not_null(back);
		cr_assert(json_equal(back, row), "read back equals appended");
		json_decref(back);
		json_decref(row);
		expect += (long long)len + 1;
	}
	ledger_get_head(l, &h);
	cr_assert_eq(h.rows, 3);
	buf = slurp(lpath, &n);
	cr_assert_eq((long long)n, expect);
	/* head = SHA-256 of the last line without its newline. */
	chain_sha256_hex(buf + off, len, hex);
	cr_assert_str_eq(h.head, hex);
	free(buf);
	ledger_close(l);
}

Test(ledger, row_is_compact_sorted_with_every_field_and_a_valid_mac)
{
	static const char *const fields[] = {"case_id", "row",	"time",
					     "phase",	"prev", "mac"};
	struct ledger *l = create_ledger("case-7");
	unsigned char ck[CHAIN_KEY_BYTES];
	char *lines[4], *body, mac[CHAIN_HEX_LEN + 1], prev[CHAIN_HEX_LEN + 1];
	json_t *o;
	size_t n, i;
	char *buf;
	int k, r;

	build(l, 3, true);
	ledger_close(l);
	buf = slurp(lpath, &n);
	k = split_lines(buf, n, lines, 4);
	cr_assert_eq(k, 3);
	memset(prev, '0', CHAIN_HEX_LEN);
	prev[CHAIN_HEX_LEN] = '\0';
	chain_case_key(key, "case-7", ck);
	for (r = 0; r < k; r++) {
		o = json_loads(lines[r], 0, NULL);
		cr_assert_not_null(o);
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			cr_assert_not_null(json_object_get(o, fields[i]),
					   "row %d has %s", r + 1, fields[i]);
		body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		cr_assert_str_eq(body, lines[r], "stored line is canonical");
		free(body);
		cr_assert_str_eq(
			json_string_value(json_object_get(o, "case_id")),
			"case-7");
		cr_assert_eq(json_integer_value(json_object_get(o, "row")),
			     r + 1);
		cr_assert_str_eq(json_string_value(json_object_get(o, "prev")),
				 prev, "row %d chains to the previous line",
				 r + 1);
		const char *t = json_string_value(json_object_get(o, "time"));
		cr_assert_eq(strlen(t), 27, "RFC 3339 with microseconds: %s",
			     t);
		cr_assert(t[4] == '-' && t[10] == 'T' && t[19] == '.' &&
			  t[26] == 'Z');
		/* Recompute the MAC: HMAC(case key, row without mac). */
		strcpy(mac, json_string_value(json_object_get(o, "mac")));
		json_object_del(o, "mac");
		body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		char want[CHAIN_HEX_LEN + 1];
		chain_hmac_hex(ck, body, strlen(body), want);
		cr_assert_str_eq(mac, want, "row %d mac", r + 1);
		free(body);
		json_decref(o);
		chain_sha256_hex(lines[r], strlen(lines[r]), prev);
	}
	cr_assert_eq(lines[0][0], '{');
	free_lines(lines, k);
	free(buf);
}

Test(ledger, row_without_phase_is_refused_without_writing)
{
	struct ledger *l = create_ledger("C1");
	struct lf_why why = {{0}};
	json_t *row = json_object();
	struct stat st;

	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_EINVAL_JSON);
	json_decref(row);
	cr_assert_eq(stat(lpath, &st), 0);
	cr_assert_eq(st.st_size, 0);
	append(l, sample_row(0, false));
	ledger_close(l);
}

Test(ledger, create_refuses_an_existing_ledger)
{
	struct ledger *l = create_ledger("C1"), *l2 = NULL;
	struct lf_why why = {{0}};

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", key, true, NULL, &l2, &why),
		LF_EXISTS);
	cr_assert_null(l2);
	ledger_close(l);
}

/* ---- verification ---- */

struct seen {
	int rows;
	long long offsets[512];
	size_t lens[512];
};

static int count_cb(void *ctx, const json_t *row, long long offset, size_t len)
{
	struct seen *s = ctx;

	cr_assert(json_is_object(row));
	s->offsets[s->rows] = offset;
	s->lens[s->rows] = len;
	s->rows++;
	return 0;
}

Test(ledger, ledger_of_200_varied_rows_verifies_and_reopens)
{
	struct ledger *l = create_ledger("C1");
	struct ledger_report rep;
	struct ledger_head h;
	struct lf_why why = {{0}};
	struct seen seen = {0};
	json_t *back;
	int fd;

	build(l, 200, true);
	ledger_get_head(l, &h);
	ledger_close(l);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.head.rows, 200);
	cr_assert_str_eq(rep.head.head, h.head);
	cr_assert(rep.macs_checked);
	cr_assert_eq(rep.bad_row, 0);
	cr_assert_eq(rep.good_bytes, rep.file_bytes);
	/* Without a key the chain and canonical form still check. */
	cr_assert_eq(verify_path(lpath, NULL, &rep, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_not(rep.macs_checked);
	/* With the expected case named. */
	fd = open(lpath, O_RDONLY);
	cr_assert_eq(ledger_verify_fd(fd, "C1", key, NULL, NULL, &rep, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_eq(ledger_verify_fd(fd, "C2", NULL, NULL, NULL, &rep, &why),
		     LF_VERIFY);
	cr_assert(strstr(why.msg, "row 1: case_id"), "%s", why.msg);
	close(fd);
	/* Reopen: the callback sees every row, then appends continue. */
	cr_assert_eq(ledger_open(AT_FDCWD, lpath, "C1", key, false,
				 &(struct ledger_reader){.cb = count_cb,
							 .ctx = &seen},
				 &l, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_eq(seen.rows, 200);
	back = ledger_read_row(l, seen.offsets[199], seen.lens[199]);
	cr_assert_eq(json_integer_value(json_object_get(back, "row")), 200);
	json_decref(back);
	append(l, sample_row(1, false));
	ledger_get_head(l, &h);
	cr_assert_eq(h.rows, 201);
	ledger_close(l);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.head.rows, 201);
}

/*
 * Every bit of a 200-row ledger, flipped one at a time, must fail the
 * check with the key.  The cost of a flip grows with its offset (the rows
 * before it verify first), so the file is cut into four slices of equal
 * work, which criterion runs in parallel.
 */
ParameterizedTestParameters(ledger,
			    every_single_bit_flip_is_detected_with_the_key)
{
	static int slices[] = {0, 1, 2, 3};

	return cr_make_param_array(int, slices, 4);
}

ParameterizedTest(int *slice, ledger,
		  every_single_bit_flip_is_detected_with_the_key)
{
	static const double bounds[] = {0.0, 0.5, 0.70710678, 0.8660254, 1.0};
	struct ledger *l = create_ledger("C1");
	struct ledger_report rep;
	struct lf_why why = {{0}};
	unsigned char orig, bad;
	long long size, i, from, to;
	int fd, bit, missed = 0;
	struct timespec t0, t1;

	build(l, 200, false);
	ledger_close(l);
	fd = open(lpath, O_RDWR);
	cr_assert_geq(fd, 0);
	size = lseek(fd, 0, SEEK_END);
	from = (long long)(bounds[*slice] * (double)size);
	to = *slice == 3 ? size
			 : (long long)(bounds[*slice + 1] * (double)size);
	cr_log_info(
		"flipping bits of bytes %lld..%lld of a 200-row ledger of %lld bytes",
		from, to - 1, size);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = from; i < to; i++) {
		cr_assert_eq(pread(fd, &orig, 1, i), 1);
		for (bit = 0; bit < 8; bit++) {
			bad = (unsigned char)(orig ^ (1u << bit));
			cr_assert_eq(pwrite(fd, &bad, 1, i), 1);
			if (ledger_verify_fd(fd, NULL, key, NULL, NULL, &rep,
					     &why) == LF_OK) {
				if (missed++ < 5)
					cr_log_error(
						"flip of bit %d at byte %lld undetected",
						bit, i);
			}
		}
		cr_assert_eq(pwrite(fd, &orig, 1, i), 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cr_log_info("slice %d: %lld flips took %.1f s", *slice, (to - from) * 8,
		    (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	cr_assert_eq(missed, 0, "%d flips undetected", missed);
	cr_assert_eq(ledger_verify_fd(fd, NULL, key, NULL, NULL, &rep, &why),
		     LF_OK, "restored ledger verifies: %s", why.msg);
	close(fd);
}

/* Build a 10-row ledger and return its lines. */
static int ten_lines(char **lines)
{
	struct ledger *l = create_ledger("C1");
	size_t n;
	char *buf;
	int k;

	build(l, 10, true);
	ledger_close(l);
	buf = slurp(lpath, &n);
	k = split_lines(buf, n, lines, 16);
	free(buf);
	cr_assert_eq(k, 10);
	return k;
}

static void expect_bad(const char *what, const char *want_why,
		       unsigned long long want_row)
{
	struct ledger_report rep;
	struct lf_why why = {{0}};

	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_VERIFY,
		     "%s must be detected", what);
	cr_log_info("%s: %s", what, why.msg);
	cr_assert_eq(rep.bad_row, want_row, "%s: bad row %llu, want %llu", what,
		     rep.bad_row, want_row);
	cr_assert(strstr(why.msg, want_why), "%s: why '%s' lacks '%s'", what,
		  why.msg, want_why);
}

Test(ledger, removed_row_is_detected)
{
	char *lines[16];
	int k = ten_lines(lines);

	free(lines[4]);
	memmove(lines + 4, lines + 5, sizeof(char *) * 5);
	join_lines(lpath, lines, k - 1);
	expect_bad("removing row 5", "row 5: row number 6, expected 5", 5);
	free_lines(lines, k - 1);
}

Test(ledger, inserted_forged_row_is_detected)
{
	char *lines[16], prev[CHAIN_HEX_LEN + 1];
	unsigned char other[CHAIN_KEY_BYTES];
	int k = ten_lines(lines);

	/* Correct shape, row number and prev; the forger lacks the key. */
	memset(other, 0x55, sizeof(other));
	chain_sha256_hex(lines[3], strlen(lines[3]), prev);
	memmove(lines + 5, lines + 4, sizeof(char *) * 6);
	lines[4] = forge_line(other, "C1", 5, prev, "decision");
	join_lines(lpath, lines, k + 1);
	expect_bad("inserting a forged row 5", "row 5: mac does not match", 5);
	free_lines(lines, k + 1);
}

Test(ledger, duplicated_row_is_detected)
{
	char *lines[16];
	int k = ten_lines(lines);

	memmove(lines + 4, lines + 3, sizeof(char *) * 7);
	lines[3] = strdup(lines[4]);
	join_lines(lpath, lines, k + 1);
	expect_bad("duplicating row 4", "row 5: row number 4, expected 5", 5);
	free_lines(lines, k + 1);
}

Test(ledger, reordered_rows_are_detected)
{
	char *lines[16], *t;
	int k = ten_lines(lines);

	t = lines[6];
	lines[6] = lines[7];
	lines[7] = t;
	join_lines(lpath, lines, k);
	expect_bad("swapping rows 7 and 8", "row 7: row number 8, expected 7",
		   7);
	free_lines(lines, k);
}

Test(ledger, renumbered_rows_break_the_mac_and_chain)
{
	char *lines[16], *p;
	int k = ten_lines(lines);

	/* Removing a row and renumbering the rest still fails: prev. */
	free(lines[4]);
	memmove(lines + 4, lines + 5, sizeof(char *) * 5);
	p = strstr(lines[4], "\"row\":6");
	cr_assert_not_null(p);
	p[6] = '5';
	join_lines(lpath, lines, k - 1);
	expect_bad("removing row 5 and renumbering",
		   "row 5: prev does not match row 4", 5);
	free_lines(lines, k - 1);
}

Test(ledger, non_canonical_row_is_refused_without_a_key)
{
	char *lines[16], *p, *nl;
	int k = ten_lines(lines);
	struct ledger_report rep;
	struct lf_why why = {{0}};

	/* Spell a letter of the phase as \u00XX: same JSON, other bytes. */
	p = strstr(lines[9], "\"phase\":\"");
	cr_assert_not_null(p);
	p += 9;
	nl = malloc(strlen(lines[9]) + 8);
	memcpy(nl, lines[9], (size_t)(p - lines[9]));
	sprintf(nl + (p - lines[9]), "\\u%04x%s", (unsigned)*p, p + 1);
	free(lines[9]);
	lines[9] = nl;
	join_lines(lpath, lines, k);
	cr_assert_eq(verify_path(lpath, NULL, &rep, &why), LF_VERIFY);
	cr_assert(strstr(why.msg, "row 10: not in canonical form"), "%s",
		  why.msg);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_VERIFY);
	cr_assert(strstr(why.msg, "row 10: mac does not match"), "%s", why.msg);
	free_lines(lines, k);
}

Test(ledger, wrong_key_fails_the_mac_check)
{
	char *lines[16];
	unsigned char other[CHAIN_KEY_BYTES];
	struct ledger_report rep;
	struct lf_why why = {{0}};
	int k = ten_lines(lines);

	memcpy(other, key, sizeof(other));
	other[31] ^= 1;
	cr_assert_eq(verify_path(lpath, other, &rep, &why), LF_VERIFY);
	cr_assert_str_eq(why.msg, "row 1: mac does not match");
	cr_assert_eq(rep.bad_row, 1);
	free_lines(lines, k);
}

Test(ledger, removed_last_row_is_caught_by_a_head_checkpoint)
{
	char *lines[16], kpath[160], arg[100];
	struct ledger_report rep;
	struct lf_why why = {{0}};
	struct ledger_head checkpoint;
	char out[512], err[512];
	int k = ten_lines(lines);

	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK);
	checkpoint = rep.head;
	snprintf(kpath, sizeof(kpath), "%s/host.key", tmpdir);
	write_key_file(kpath, key);
	snprintf(arg, sizeof(arg), "%llu:%s", checkpoint.rows, checkpoint.head);
	char *argv[] = {"verify", lpath, "--key", kpath, "--head", arg};
	cr_assert_eq(run_verify(argv, 6, out, sizeof(out), err, sizeof(err)), 0,
		     "%s%s", out, err);

	/* Cutting the last row leaves a chain that verifies on its own... */
	join_lines(lpath, lines, k - 1);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK);
	/* ...but not against the checkpoint taken earlier. */
	cr_assert(rep.head.rows < checkpoint.rows);
	cr_assert_eq(run_verify(argv, 6, out, sizeof(out), err, sizeof(err)),
		     1);
	cr_assert(strncmp(out, "bad: checkpoint row 10", 22) == 0, "%s", out);

	/* A checkpoint inside the ledger still passes; a wrong hash fails. */
	snprintf(arg, sizeof(arg), "5:%064d", 0);
	cr_assert_eq(run_verify(argv, 6, out, sizeof(out), err, sizeof(err)), 1,
		     "%s", out);
	cr_assert(strncmp(out, "bad: checkpoint row 5", 21) == 0, "%s", out);
	char h5[CHAIN_HEX_LEN + 1];
	chain_sha256_hex(lines[4], strlen(lines[4]), h5);
	snprintf(arg, sizeof(arg), "5:%s", h5);
	cr_assert_eq(run_verify(argv, 6, out, sizeof(out), err, sizeof(err)), 0,
		     "%s%s", out, err);
	free_lines(lines, k);
}

/*
 * A mounted case folder is checked against its daemon: the ledger read
 * through it must end exactly where `status` says.  A plain folder with
 * the two files stands in for the view here, so the daemon can be made
 * to disagree.
 */
Test(ledger, mounted_case_ledger_must_end_where_the_daemon_status_says)
{
	static const struct {
		int rows;	    /* status rows */
		bool right_head;    /* status head is that row's hash */
		int want;	    /* exit status */
		const char *needle; /* in stdout */
	} t[] = {
		{10, true, 0, "ok: 10 rows"},
		{9, true, 1, "does not end where the daemon's status says"},
		{10, false, 1, "does not end where the daemon's status says"},
		{11, false, 1, "does not end where the daemon's status says"},
	};
	char *lines[16], dir[160], path[200], out[512], err[512];
	char hex[CHAIN_HEX_LEN + 1];
	int k = ten_lines(lines);
	size_t i;

	snprintf(dir, sizeof(dir), "%s/mounted", tmpdir);
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/ledger", dir);
	join_lines(path, lines, k);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *argv[] = {"verify", dir};
		FILE *f;

		if (t[i].right_head)
			chain_sha256_hex(lines[t[i].rows - 1],
					 strlen(lines[t[i].rows - 1]), hex);
		else
			snprintf(hex, sizeof(hex), "%064d", 7);
		snprintf(path, sizeof(path), "%s/status", dir);
		f = fopen(path, "w");
		cr_assert_not_null(f);
		fprintf(f, "{\"rows\": %d, \"head\": \"%s\"}\n", t[i].rows,
			hex);
		fclose(f);
		cr_expect_eq(
			run_verify(argv, 2, out, sizeof(out), err, sizeof(err)),
			t[i].want, "row %zu: %s%s", i, out, err);
		cr_expect(strstr(out, t[i].needle), "row %zu: %s", i, out);
	}
	free_lines(lines, k);
}

/* ---- open: recovery and refusal ---- */

Test(ledger, torn_tail_is_cut_and_recorded_by_open)
{
	struct ledger *l = create_ledger("C1");
	struct ledger_report rep;
	struct ledger_head h;
	struct lf_why why = {{0}};
	struct seen seen = {0};
	const char half[] = "{\"case_id\":\"C1\",\"mac\":\"0123";
	char hex[CHAIN_HEX_LEN + 1];
	json_t *last;
	int fd;

	build(l, 5, true);
	ledger_close(l);
	fd = open(lpath, O_WRONLY | O_APPEND);
	cr_assert_eq(write(fd, half, strlen(half)), (ssize_t)strlen(half));
	close(fd);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_VERIFY);
	cr_assert(rep.torn);
	cr_assert_str_eq(why.msg, "row 6: torn (no newline at end)");

	cr_assert_eq(ledger_open(AT_FDCWD, lpath, "C1", key, false,
				 &(struct ledger_reader){.cb = count_cb,
							 .ctx = &seen},
				 &l, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_eq(seen.rows, 6, "the reader sees the recovered row too");
	ledger_get_head(l, &h);
	cr_assert_eq(h.rows, 6);
	last = ledger_read_row(l, seen.offsets[5], seen.lens[5]);
	cr_assert_str_eq(json_string_value(json_object_get(last, "phase")),
			 "recovered");
	cr_assert_eq(json_integer_value(json_object_get(last, "cut_bytes")),
		     (json_int_t)strlen(half));
	chain_sha256_hex(half, strlen(half), hex);
	cr_assert_str_eq(json_string_value(json_object_get(last, "cut_sha256")),
			 hex);
	cr_assert_str_eq(json_string_value(json_object_get(last, "reason")),
			 "torn tail cut");
	json_decref(last);
	append(l, sample_row(2, true));
	ledger_close(l);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.head.rows, 7);
}

Test(ledger, torn_first_row_is_cut_to_an_empty_chain)
{
	struct ledger *l;
	struct ledger_report rep;
	struct lf_why why = {{0}};

	spit(lpath, "{\"case", 6);
	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", key, false, NULL, &l, &why),
		LF_OK, "%s", why.msg);
	ledger_close(l);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.head.rows, 1);
}

Test(ledger, bad_mac_in_the_middle_is_refused_by_open_unchanged)
{
	char *lines[16], *before, *after, *p;
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	struct seen seen = {0};
	size_t n1, n2;
	int k = ten_lines(lines);

	p = strstr(lines[5], "\"mac\":\"");
	cr_assert_not_null(p);
	p[7] = p[7] == 'a' ? 'b' : 'a';
	join_lines(lpath, lines, k);
	before = slurp(lpath, &n1);
	cr_assert_eq(ledger_open(AT_FDCWD, lpath, "C1", key, false,
				 &(struct ledger_reader){.cb = count_cb,
							 .ctx = &seen},
				 &l, &why),
		     LF_VERIFY);
	cr_assert_null(l);
	cr_assert_str_eq(why.msg, "row 6: mac does not match");
	after = slurp(lpath, &n2);
	cr_assert_eq(n1, n2);
	cr_assert_eq(memcmp(before, after, n1), 0, "ledger left unchanged");
	free(before);
	free(after);
	free_lines(lines, k);
}

Test(ledger, wrong_case_is_refused_by_open)
{
	char *lines[16];
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	int k = ten_lines(lines);

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C2", key, false, NULL, &l, &why),
		LF_VERIFY);
	cr_assert(strstr(why.msg, "row 1: case_id"), "%s", why.msg);
	free_lines(lines, k);
}

/* ---- durability: fail closed ---- */

Test(ledger, failed_write_fails_this_and_every_later_append)
{
	struct ledger *l = create_ledger("C1");
	struct lf_why why = {{0}};
	json_t *row;
	char other[160];
	struct stat st;
	int fd, ofd;

	append(l, sample_row(0, false));
	fd = ledger_fd(l);
	close(fd);
	row = sample_row(1, false);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_IO);
	cr_log_info("first failure: %s", why.msg);
	json_decref(row);
	/* Even once the descriptor would work again, no retry is made. */
	snprintf(other, sizeof(other), "%s/other", tmpdir);
	ofd = open(other, O_RDWR | O_CREAT | O_APPEND, 0600);
	cr_assert_geq(ofd, 0);
	if (ofd != fd) {
		cr_assert_eq(dup2(ofd, fd), fd);
		close(ofd);
	}
	row = sample_row(2, false);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_IO);
	cr_assert(strstr(why.msg, "failed earlier"), "%s", why.msg);
	json_decref(row);
	cr_assert_eq(stat(other, &st), 0);
	cr_assert_eq(st.st_size, 0, "nothing was written after the failure");
	ledger_close(l);
}

/*
 * The same through a commit group: the ledger's descriptor becomes a pipe,
 * so the write lands and the flush (fdatasync of a pipe) fails.
 */
Test(ledger, failed_flush_through_a_group_fails_this_and_every_later_append)
{
	struct ledger *l = create_ledger("C1");
	struct commit_group *g;
	struct lf_why why = {{0}};
	json_t *row;
	int dir_fd = open(tmpdir, O_RDONLY | O_DIRECTORY), p[2], fd;

	cr_assert_geq(dir_fd, 0);
	g = commit_group_new(dir_fd);
	cr_assert_not_null(g);
	ledger_set_commit(l, g);
	append(l, sample_row(0, false));
	cr_assert_eq(pipe(p), 0);
	fd = ledger_fd(l);
	cr_assert_eq(dup2(p[1], fd), fd);
	row = sample_row(1, false);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_IO);
	cr_assert(strstr(why.msg, "flush failed"), "%s", why.msg);
	json_decref(row);
	row = sample_row(2, false);
	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_IO);
	cr_assert(strstr(why.msg, "failed earlier"), "%s", why.msg);
	json_decref(row);
	ledger_close(l);
	commit_group_free(g);
	close(p[0]);
	close(p[1]);
	close(dir_fd);
}

/* ---- ledgerctl verify ---- */

Test(ledger, ctl_verify_exit_statuses_and_messages)
{
	char *lines[16], kpath[160], out[512], err[512], *p;
	int k = ten_lines(lines);
	bool default_key = access(CTL_DEFAULT_KEY, F_OK) == 0;

	snprintf(kpath, sizeof(kpath), "%s/host.key", tmpdir);
	write_key_file(kpath, key);

	char *good[] = {"verify", lpath, "--key", kpath};
	cr_assert_eq(run_verify(good, 4, out, sizeof(out), err, sizeof(err)), 0,
		     "%s%s", out, err);
	cr_assert(strncmp(out, "ok: 10 rows, head ", 18) == 0, "%s", out);
	cr_assert(strstr(out, ", MACs checked\n"), "%s", out);

	/* The backing case folder works as well as the file. */
	char *folder[] = {"verify", tmpdir, "--key", kpath};
	cr_assert_eq(run_verify(folder, 4, out, sizeof(out), err, sizeof(err)),
		     0, "%s%s", out, err);

	if (!default_key) {
		char *nokey[] = {"verify", lpath};
		cr_assert_eq(run_verify(nokey, 2, out, sizeof(out), err,
					sizeof(err)),
			     0);
		cr_assert(strstr(err, "MACs not checked (no key)"), "%s", err);
		cr_assert(strstr(out, ", MACs not checked\n"), "%s", out);
	}

	char *usage[] = {"verify"};
	cr_assert_eq(run_verify(usage, 1, out, sizeof(out), err, sizeof(err)),
		     2);
	char *badopt[] = {"verify", lpath, "--frob"};
	cr_assert_eq(run_verify(badopt, 3, out, sizeof(out), err, sizeof(err)),
		     2);
	char *badhead[] = {"verify", lpath, "--key", kpath, "--head", "x:1"};
	cr_assert_eq(run_verify(badhead, 6, out, sizeof(out), err, sizeof(err)),
		     2);
	char missing[200];
	snprintf(missing, sizeof(missing), "%s/nope.jsonl", tmpdir);
	char *nofile[] = {"verify", missing, "--key", kpath};
	cr_assert_eq(run_verify(nofile, 4, out, sizeof(out), err, sizeof(err)),
		     2);
	char nokeyfile[200];
	snprintf(nokeyfile, sizeof(nokeyfile), "%s/nope.key", tmpdir);
	char *missingkey[] = {"verify", lpath, "--key", nokeyfile};
	cr_assert_eq(
		run_verify(missingkey, 4, out, sizeof(out), err, sizeof(err)),
		2, "an explicit key that cannot be read is an error");

	p = strstr(lines[2], "\"mac\":\"");
	p[7] = p[7] == 'a' ? 'b' : 'a';
	join_lines(lpath, lines, k);
	cr_assert_eq(run_verify(good, 4, out, sizeof(out), err, sizeof(err)),
		     1);
	cr_assert_str_eq(out, "bad: row 3: mac does not match\n");
	free_lines(lines, k);
}

/* ---- pinned format and speed ---- */

static void hex_key(const char *hex, unsigned char *out)
{
	int i;

	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		cr_assert_eq(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

Test(ledger, fixture_ledger_of_format_v1_still_verifies)
{
	char path[512], khex[128];
	unsigned char fkey[CHAIN_KEY_BYTES];
	struct ledger_report rep;
	struct lf_why why = {{0}};
	FILE *f;

	snprintf(path, sizeof(path), "%s/ledger/v1.key.hex", TEST_DATA);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(khex, sizeof(khex), f));
	fclose(f);
	hex_key(khex, fkey);
	snprintf(path, sizeof(path), "%s/ledger/v1.jsonl", TEST_DATA);
	cr_assert_eq(verify_path(path, fkey, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.head.rows, 6);
	snprintf(path, sizeof(path), "%s/ledger/v1-tampered.jsonl", TEST_DATA);
	cr_assert_eq(verify_path(path, fkey, &rep, &why), LF_VERIFY);
	cr_assert_str_eq(why.msg, "row 4: mac does not match");
}

/*
 * Rows of case "bench" written straight to lpath (no fdatasync per row)
 * in the ledger's format, MACed with the case key: rows of them, or
 * (rows 0) until min_bytes are written; row closed_row (0: none) is a
 * case_closed row.  Returns the rows written; *bytes their size.
 */
static unsigned long long write_plain_ledger(unsigned long long rows,
					     long long min_bytes,
					     unsigned long long closed_row,
					     long long *bytes)
{
	unsigned char ck[CHAIN_KEY_BYTES];
	char prev[CHAIN_HEX_LEN + 1], mac[CHAIN_HEX_LEN + 1], pad[300];
	char *body, *line;
	long long total = 0;
	unsigned long long r;
	FILE *f;
	json_t *o;

	memset(pad, 'x', sizeof(pad) - 1);
	pad[220] = '\0';
	memset(prev, '0', CHAIN_HEX_LEN);
	prev[CHAIN_HEX_LEN] = '\0';
	chain_case_key(key, "bench", ck);
	f = fopen(lpath, "wb");
	cr_assert_not_null(f);
	for (r = 1; rows ? r <= rows : total < min_bytes; r++) {
		o = json_pack("{s:s, s:I, s:s, s:s, s:s, s:{s:s, s:I}}",
			      "case_id", "bench", "row", (json_int_t)r, "time",
			      "2026-01-01T00:00:00.000000Z", "phase",
			      r == closed_row ? "case_closed" : "decision",
			      "prev", prev, "args", "pad", pad, "n",
			      (json_int_t)r);
		body = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		chain_hmac_hex(ck, body, strlen(body), mac);
		json_object_set_new(o, "mac", json_string(mac));
		line = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
		fprintf(f, "%s\n", line);
		total += (long long)strlen(line) + 1;
		chain_sha256_hex(line, strlen(line), prev);
		free(body);
		free(line);
		json_decref(o);
	}
	cr_assert_eq(fclose(f), 0);
	*bytes = total;
	return r - 1;
}

Test(ledger, verify_throughput_is_reported)
{
	const char *env = getenv("LEDGER_BENCH_MB");
	long mb = env ? atol(env) : 16;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	struct timespec t0, t1;
	long long total;
	unsigned long long rows;
	double s;

	rows = write_plain_ledger(0, mb * 1000000, 0, &total);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s", why.msg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) +
	    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_log_info(
		"verify with key: %lld bytes, %llu rows (~%lld B/row) in %.3f s = %.0f MB/s",
		total, rep.head.rows, total / (long long)rep.head.rows, s,
		(double)total / s / 1e6);
	cr_assert_eq(rep.head.rows, rows);
}

/*
 * ledgerfs-ledger(5) PHASES: no row ever follows case_closed.  A row
 * after it, chained and MACed as the daemon would, fails with the key
 * and without it (public verification), in a short ledger the reader
 * checks alone and in one long enough for threads reading ahead.
 */
Test(ledger, a_row_after_case_closed_fails_verification)
{
	static const unsigned long long sizes[] = {3, 40000};
	char want[64];
	struct ledger_report rep;
	struct lf_why why = {{0}};
	long long bytes;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* Ending in case_closed is a closed case: it verifies. */
		write_plain_ledger(sizes[i], 0, sizes[i], &bytes);
		cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_OK, "%s",
			     why.msg);
		cr_assert_eq(verify_path(lpath, NULL, &rep, &why), LF_OK, "%s",
			     why.msg);
		write_plain_ledger(sizes[i], 0, sizes[i] - 1, &bytes);
		snprintf(want, sizeof(want),
			 "row %llu: a row after case_closed", sizes[i]);
		cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_VERIFY,
			     "%llu rows with the key", sizes[i]);
		cr_assert(strstr(why.msg, want), "%s", why.msg);
		cr_assert_eq(rep.bad_row, sizes[i]);
		cr_assert_eq(verify_path(lpath, NULL, &rep, &why), LF_VERIFY,
			     "%llu rows without a key", sizes[i]);
		cr_assert(strstr(why.msg, want), "%s", why.msg);
	}
}

Test(ledger, line_over_64_mib_is_refused_and_never_cut_as_torn)
{
	struct ledger *l = NULL;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	size_t big = ((size_t)64 << 20) + 2;
	char *buf = malloc(big);
	struct stat st;

	memset(buf, 'x', big);
	buf[big - 1] = '\n';
	spit(lpath, buf, big);
	cr_assert_eq(verify_path(lpath, key, &rep, &why), LF_VERIFY);
	cr_assert_str_eq(why.msg, "row 1: line over 64 MiB");
	cr_assert_not(rep.torn);
	/* Without a newline it is still no crash mid-row: open refuses it. */
	spit(lpath, buf, big - 1);
	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", key, false, NULL, &l, &why),
		LF_VERIFY);
	cr_assert_str_eq(why.msg, "row 1: line over 64 MiB");
	cr_assert_eq(stat(lpath, &st), 0);
	cr_assert_eq((size_t)st.st_size, big - 1, "nothing was cut");
	free(buf);
}
