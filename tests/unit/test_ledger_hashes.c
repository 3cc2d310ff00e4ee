/* SPDX-License-Identifier: MIT */
/*
 * test_ledger_hashes.c - verification that reads a ledger ahead in
 * chunks on several threads (ledgerctl(1) verify) reaches the same
 * verdict, bad row and reason as on one thread, for good ledgers and for
 * each kind of fault, wherever it falls against the chunks' boundaries.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ledger.h"
#include "ledger_hashes.h"

/*
 * Rows of about 300 bytes read ahead in chunks of 64 KiB: faults land
 * deep inside the file, next to chunk boundaries or not.
 */
#define CHUNK	 65536
#define ROWS	 4796
#define LATE_ROW 4396

static char tmpdir[64], lpath[128], tpath[128];
static unsigned char key[CHAIN_KEY_BYTES];
static char *orig;
static size_t orig_n;
static const char *verify_case; /* the case verify expects, or NULL */

/*
 * Row i's args: a quoted, escaped value, or big bytes of it; every 45th
 * row a turn (which ends a sealed ledger's epoch early).
 */
static json_t *test_row(int i, size_t big)
{
	char *v = NULL;
	json_t *row;

	if (big) {
		v = malloc(big + 1);
		cr_assert_not_null(v);
		memset(v, 'b', big);
		v[big] = '\0';
	}
	row = json_pack("{s:s, s:i, s:{s:s, s:i}}", "phase",
			i % 45 == 44 ? "turn"
			: i % 2	     ? "decision"
				     : "completion",
			"sequence", i, "args", "s",
			v ? v : "a \"quoted\" \\ value", "n", i);
	free(v);
	return row;
}

/*
 * A ledger of ROWS rows at path; row big_row (1-based) of big bytes;
 * sealed (ledgerfs-ledger(5) SEALS) in epochs of epoch_rows, or not (0);
 * k0: its initial seal key, handed out (NULL: not).
 */
static void make_ledger(const char *path, int big_row, size_t big,
			unsigned long long epoch_rows, unsigned char *k0)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};
	json_t *row;
	int i;

	cr_assert_eq(
		ledger_open(AT_FDCWD, path, "C1", key, true, NULL, &l, &why),
		LF_OK, "%s", why.msg);
	if (epoch_rows)
		cr_assert_eq(ledger_seal_start(l, AT_FDCWD, path, key,
					       epoch_rows, &why),
			     LF_OK, "%s", why.msg);
	if (k0)
		cr_assert_eq(ledger_seal_handout(l, k0, &why), LF_OK, "%s",
			     why.msg);
	for (i = 0; i < ROWS; i++) {
		row = test_row(i, i + 1 == big_row ? big : 0);
		cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK,
			     "%s", why.msg);
		json_decref(row);
	}
	ledger_close(l);
}

/* orig: the bytes of the ledger at path. */
static void load_orig(const char *path)
{
	FILE *f = fopen(path, "rb");
	long sz;

	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	sz = ftell(f);
	fseek(f, 0, SEEK_SET);
	free(orig);
	orig = malloc((size_t)sz);
	cr_assert_not_null(orig);
	cr_assert_eq(fread(orig, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	orig_n = (size_t)sz;
}

/* The ledger is made once per test on a tmpfs: appends cost no flush. */
static void setup(void)
{
	int i;

	verify_case = NULL;
	strcpy(tmpdir, "/dev/shm/test_ledger_hashes.XXXXXX");
	if (!mkdtemp(tmpdir)) {
		strcpy(tmpdir, "/tmp/test_ledger_hashes.XXXXXX");
		cr_assert_not_null(mkdtemp(tmpdir));
	}
	snprintf(lpath, sizeof(lpath), "%s/ledger.jsonl", tmpdir);
	snprintf(tpath, sizeof(tpath), "%s/changed.jsonl", tmpdir);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		key[i] = (unsigned char)(0x30 + i);
	make_ledger(lpath, 0, 0, 0, NULL);
	load_orig(lpath);
	cr_assert_gt(orig_n, 16 * CHUNK);
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

static void expect_alike(const struct outcome *one, const struct outcome *many,
			 enum lf_err want, unsigned long long want_row)
{
	cr_assert_eq(one->rc, want, "one thread: %s", one->why);
	cr_assert_eq(many->rc, one->rc, "threads: %s / %s", many->why,
		     one->why);
	cr_assert_str_eq(many->why, one->why);
	cr_assert_eq(one->rep.bad_row, want_row, "bad row %llu (%s)",
		     one->rep.bad_row, one->why);
	cr_assert_eq(many->rep.bad_row, one->rep.bad_row);
	cr_assert_eq(many->rep.head.rows, one->rep.head.rows);
	cr_assert_str_eq(many->rep.head.head, one->rep.head.head);
	cr_assert_eq(many->rep.good_bytes, one->rep.good_bytes);
	cr_assert_eq(many->rep.file_bytes, one->rep.file_bytes);
	cr_assert_eq(many->rep.torn, one->rep.torn);
	cr_assert_eq(many->rep.macs_checked, one->rep.macs_checked);
}

static void verify_with(unsigned threads, const char *path,
			const unsigned char *k, const struct ratchet_keys *seal,
			struct outcome *o)
{
	struct lf_why why = {{0}};
	int fd = open(path, O_RDONLY);

	cr_assert_geq(fd, 0);
	ledger_verify_set_threads(threads);
	ledger_hashes_set_chunk(CHUNK);
	o->rc = ledger_verify_sealed(fd, verify_case, k, seal, NULL, NULL,
				     &o->rep, &why);
	snprintf(o->why, sizeof(o->why), "%s", why.msg);
	close(fd);
}

/*
 * One thread and two or three, with the seal keys seal (NULL: none): the
 * same verdict, row, reason and head.
 */
static void expect_same_sealed(const char *path, const unsigned char *k,
			       const struct ratchet_keys *seal,
			       enum lf_err want, unsigned long long want_row)
{
	struct outcome one, many;
	unsigned t;

	verify_with(1, path, k, seal, &one);
	for (t = 2; t <= 3; t++) {
		verify_with(t, path, k, seal, &many);
		expect_alike(&one, &many, want, want_row);
	}
}

static void expect_same(const char *path, const unsigned char *k,
			enum lf_err want, unsigned long long want_row)
{
	expect_same_sealed(path, k, NULL, want, want_row);
}

Test(ledger_hashes, a_good_ledger_verifies_alike_on_one_and_many_threads)
{
	expect_same(lpath, key, LF_OK, 0);
	expect_same(lpath, NULL, LF_OK, 0);
}

Test(ledger_hashes, a_changed_byte_in_the_second_batch_fails_the_mac_alike)
{
	size_t at = row_at(LATE_ROW);
	char *q = memmem(orig + at, orig_n - at, "quoted", 6);

	write_changed((size_t)(q - orig), 1, "Q");
	expect_same(tpath, key, LF_VERIFY, LATE_ROW);
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

/*
 * Write orig with row r's member text from changed to to, and the row's
 * MAC made again under mac_key (NULL: the case key): a row only a holder
 * of that key could forge, so the other checks must catch it.  r and
 * the row before it start in the same chunk: a helper works out both,
 * and the reader must not take the helper's word for more than the line
 * alone shows.
 */
static void write_forged_under(unsigned long long r, const char *from,
			       const char *to, const unsigned char *mac_key)
{
	size_t at = row_at(r),
	       n = (size_t)((char *)memchr(orig + at, '\n', orig_n - at) -
			    (orig + at));
	char *line = malloc(n + strlen(to) + 1), *p, *mac, *end, *out;
	unsigned char ck[CHAIN_KEY_BYTES];
	char hex[CHAIN_HEX_LEN + 1];
	struct chain_mac *m = chain_mac_new();

	cr_assert_geq(row_at(r - 1), at / CHUNK * CHUNK,
		      "row %llu is the first of its chunk", r);
	cr_assert(line && m);
	memcpy(line, orig + at, n);
	line[n] = '\0';
	p = strstr(line, from);
	cr_assert_not_null(p, "row %llu holds no %s", r, from);
	memmove(p + strlen(to), p + strlen(from), strlen(p + strlen(from)) + 1);
	memcpy(p, to, strlen(to));
	mac = strstr(line, ",\"mac\":\"");
	cr_assert_not_null(mac);
	end = mac + 8 + CHAIN_HEX_LEN + 1;
	if (mac_key)
		memcpy(ck, mac_key, sizeof(ck));
	else
		chain_case_key(key, "C1", ck);
	cr_assert_eq(chain_mac2_hex(m, ck, line, (size_t)(mac - line), end,
				    strlen(end), hex),
		     0);
	memcpy(mac + 8, hex, CHAIN_HEX_LEN);
	out = malloc(strlen(line) + 2);
	cr_assert_not_null(out);
	sprintf(out, "%s\n", line);
	write_changed(at, n + 1, out);
	chain_mac_free(m);
	free(out);
	free(line);
}

static void write_forged(unsigned long long r, const char *from, const char *to)
{
	write_forged_under(r, from, to, NULL);
}

/* The forged row fails alike, for the reason named. */
static void expect_forged_fails(const char *reason)
{
	struct outcome one;

	expect_same(tpath, key, LF_VERIFY, LATE_ROW);
	verify_with(2, tpath, key, NULL, &one);
	cr_assert(strstr(one.why, reason), "%s", one.why);
}

Test(ledger_hashes, a_row_with_a_valid_mac_and_a_wrong_prev_breaks_the_chain)
{
	char from[80], to[80];
	size_t at = row_at(LATE_ROW);
	char *p = memmem(orig + at, orig_n - at, "\"prev\":\"", 8);

	snprintf(from, sizeof(from), "%.73s", p);
	snprintf(to, sizeof(to), "%.8s%064d%.1s", p, 0, p + 72);
	write_forged(LATE_ROW, from, to);
	expect_forged_fails("prev does not match");
}

Test(ledger_hashes, a_row_with_a_valid_mac_and_another_case_id_is_refused)
{
	write_forged(LATE_ROW, "\"case_id\":\"C1\"", "\"case_id\":\"C2\"");
	expect_forged_fails("case_id \"C2\", expected \"C1\"");
}

Test(ledger_hashes, a_row_with_a_valid_mac_and_a_wrong_number_is_refused)
{
	char from[32], to[32];

	snprintf(from, sizeof(from), "\"row\":%d,", LATE_ROW);
	snprintf(to, sizeof(to), "\"row\":%d,", LATE_ROW + 1);
	write_forged(LATE_ROW, from, to);
	expect_forged_fails("row number");
}

Test(ledger_hashes,
     a_row_with_a_valid_mac_and_an_epoch_in_a_ledger_without_seals_is_refused)
{
	write_forged(LATE_ROW, "\"mac\":", "\"epoch\":0,\"mac\":");
	expect_forged_fails("an epoch in a ledger without seals");
}

/*
 * A sealed row MACs under K(epoch), which the host key does not give:
 * a row stripped of its epoch and MACed under the key the host key
 * derives must not pass as a row of a ledger without seals.
 */
static void strip_late_epoch(int big_row, size_t big)
{
	char spath[160], from[40];
	const char *p, *q;
	size_t at;

	snprintf(spath, sizeof(spath), "%s/sealed.jsonl", tmpdir);
	make_ledger(spath, big_row, big, 1024, NULL);
	load_orig(spath);
	at = row_at(LATE_ROW);
	p = memmem(orig + at, orig_n - at, "\"epoch\":", 8);
	cr_assert_not_null(p);
	q = memchr(p, ',', 40);
	cr_assert_not_null(q);
	snprintf(from, sizeof(from), "%.*s", (int)(q + 1 - p), p);
	write_forged(LATE_ROW, from, "");
}

Test(ledger_hashes, a_sealed_row_without_its_epoch_maced_by_the_host_key_fails)
{
	strip_late_epoch(0, 0);
	expect_same(tpath, key, LF_VERIFY, LATE_ROW);
}

/*
 * The same when the threads cannot tell the ledger is sealed (row 1 is
 * longer than the 64 KiB they look at) and MAC every row under the case
 * key the case given names: the reader still walks the seals.
 */
Test(ledger_hashes,
     a_sealed_ledger_with_a_long_first_row_still_wants_every_epoch)
{
	struct outcome o;

	strip_late_epoch(1, 70000);
	verify_case = "C1";
	expect_same(tpath, key, LF_VERIFY, LATE_ROW);
	verify_with(2, tpath, key, NULL, &o);
	cr_assert(strstr(o.why, "epoch is missing"), "%s", o.why);
}

/*
 * A sealed ledger of short epochs (32 rows) at spath, read back into
 * orig; *k0: its initial seal key, *all: the keys of every epoch, *file:
 * those its seal key file gives (the last epoch's).
 */
static void make_sealed(char *spath, size_t cap, unsigned char *k0,
			struct ratchet_keys *all, struct ratchet_keys *file)
{
	struct lf_why why = {{0}};
	char seal[200];

	snprintf(spath, cap, "%s/sealed.jsonl", tmpdir);
	snprintf(seal, sizeof(seal), "%s" RATCHET_FILE_SUFFIX, spath);
	make_ledger(spath, 0, 0, 32, k0);
	load_orig(spath);
	memset(all, 0, sizeof(*all));
	all->mode = RATCHET_KEYS_ALL;
	memcpy(all->key, k0, CHAIN_KEY_BYTES);
	cr_assert_eq(ratchet_read_keys(AT_FDCWD, seal, key, file, &why), LF_OK,
		     "%s", why.msg);
	cr_assert_eq(file->mode, RATCHET_KEYS_CURRENT);
}

Test(ledger_hashes,
     a_sealed_ledger_verifies_alike_with_k0_and_its_seal_key_file)
{
	struct ratchet_keys all, file;
	unsigned char k0[CHAIN_KEY_BYTES];
	struct outcome o;
	char spath[160];

	make_sealed(spath, sizeof(spath), k0, &all, &file);
	expect_same_sealed(spath, key, &all, LF_OK, 0);
	expect_same_sealed(spath, key, &file, LF_OK, 0);
	verify_with(2, spath, key, &all, &o);
	cr_assert(o.rep.macs_checked, "every MAC checked with K0");
	cr_assert_eq(o.rep.walk.mac_rows, ROWS);
}

Test(ledger_hashes, a_changed_byte_in_a_sealed_row_fails_its_mac_alike_with_k0)
{
	struct ratchet_keys all, file;
	unsigned char k0[CHAIN_KEY_BYTES];
	char spath[160], *q;
	size_t at;

	make_sealed(spath, sizeof(spath), k0, &all, &file);
	at = row_at(LATE_ROW);
	q = memmem(orig + at, orig_n - at, "quoted", 6);
	write_changed((size_t)(q - orig), 1, "Q");
	expect_same_sealed(tpath, key, &all, LF_VERIFY, LATE_ROW);
}

/*
 * The epoch row LATE_ROW of orig claims, and into next the key of the
 * epoch after it, stepped from k0.
 */
static unsigned long long late_row_epoch(const unsigned char *k0,
					 unsigned char next[CHAIN_KEY_BYTES])
{
	size_t at = row_at(LATE_ROW);
	const char *p = memmem(orig + at, orig_n - at, "\"epoch\":", 8);
	unsigned long long e, i;

	cr_assert_not_null(p);
	e = strtoull(p + 8, NULL, 10);
	cr_assert_gt(e, 1);
	memcpy(next, k0, CHAIN_KEY_BYTES);
	for (i = 0; i <= e; i++)
		ratchet_step(next, next);
	return e;
}

/*
 * Forward security, read ahead: a row MACed under the next epoch's key
 * (what a holder of a later key could make) fails with K0, however the
 * threads step their keys.
 */
Test(ledger_hashes, a_sealed_row_maced_under_the_next_epochs_key_fails_alike)
{
	struct ratchet_keys all, file;
	unsigned char k0[CHAIN_KEY_BYTES], next[CHAIN_KEY_BYTES];
	struct outcome o;
	char spath[160];

	make_sealed(spath, sizeof(spath), k0, &all, &file);
	late_row_epoch(k0, next);
	write_forged_under(LATE_ROW, "", "", next);
	expect_same_sealed(tpath, key, &all, LF_VERIFY, LATE_ROW);
	verify_with(2, tpath, key, &all, &o);
	cr_assert(strstr(o.why, "mac does not match"), "%s", o.why);
}

/* A sealed row claiming the next epoch, MACed under that epoch's key. */
Test(ledger_hashes, a_sealed_row_claiming_the_next_epoch_fails_alike)
{
	struct ratchet_keys all, file;
	unsigned char k0[CHAIN_KEY_BYTES], next[CHAIN_KEY_BYTES];
	char spath[160], from[64], to[64];
	struct outcome o;
	unsigned long long e;

	make_sealed(spath, sizeof(spath), k0, &all, &file);
	e = late_row_epoch(k0, next);
	snprintf(from, sizeof(from), "\"epoch\":%llu,", e);
	snprintf(to, sizeof(to), "\"epoch\":%llu,", e + 1);
	write_forged_under(LATE_ROW, from, to, next);
	expect_same_sealed(tpath, key, &all, LF_VERIFY, LATE_ROW);
	expect_same_sealed(tpath, key, &file, LF_VERIFY, LATE_ROW);
	verify_with(2, tpath, key, &all, &o);
	snprintf(to, sizeof(to), "epoch %llu, expected %llu", e + 1, e);
	cr_assert(strstr(o.why, to), "%s", o.why);
}

/* Keyless, canonical form stands in for the MAC, on helpers or not. */
Test(ledger_hashes, a_non_canonical_row_without_a_key_is_found_alike)
{
	size_t at = row_at(LATE_ROW + 7);
	char *q = memmem(orig + at, orig_n - at, "\"n\":", 4);

	/* One space in its args: the same JSON, not the same bytes. */
	write_changed((size_t)(q - orig) + 4, 0, " ");
	expect_same(tpath, NULL, LF_VERIFY, LATE_ROW + 7);
	expect_same(tpath, key, LF_VERIFY, LATE_ROW + 7);
}

Test(ledger_hashes, a_torn_tail_is_found_alike)
{
	FILE *f = fopen(tpath, "wb");

	fwrite(orig, 1, orig_n, f);
	fputs("{\"case_id\":\"C1\",\"row\":", f);
	fclose(f);
	expect_same(tpath, key, LF_VERIFY, ROWS + 1);
}

/* The row in which file offset at falls (1-based). */
static unsigned long long row_of(size_t at)
{
	unsigned long long r = 1;
	size_t off = 0;
	const char *nl;

	while ((nl = memchr(orig + off, '\n', orig_n - off)) &&
	       (size_t)(nl - orig) < at) {
		off = (size_t)(nl - orig) + 1;
		r++;
	}
	return r;
}

/* A fault in the row across each of several chunk boundaries. */
Test(ledger_hashes, a_changed_byte_in_a_row_across_a_chunk_boundary_fails_alike)
{
	size_t b;
	unsigned long long r;

	for (b = 3 * CHUNK; b < 7 * CHUNK; b += CHUNK) {
		r = row_of(b);
		write_changed(b, 1, orig[b] == 'x' ? "y" : "x");
		expect_same(tpath, key, LF_VERIFY, r);
	}
}

/* Offset of the start of row r (1-based) in the file at path. */
static size_t file_row_at(const char *path, unsigned long long r)
{
	FILE *f = fopen(path, "rb");
	size_t off = 0;
	int ch;

	cr_assert_not_null(f);
	while (r > 1 && (ch = fgetc(f)) != EOF) {
		off++;
		if (ch == '\n')
			r--;
	}
	fclose(f);
	return off;
}

/* A row that starts at a chunk's first byte belongs to that chunk. */
Test(ledger_hashes, a_row_starting_on_a_chunk_boundary_verifies_alike)
{
	size_t big = 1000, at;

	/* Grow row 2000 until row 2001 starts on a chunk boundary. */
	make_ledger(tpath, 2000, big, 0, NULL);
	at = file_row_at(tpath, 2001);
	big += (CHUNK - at % CHUNK) % CHUNK;
	cr_assert_eq(unlink(tpath), 0);
	make_ledger(tpath, 2000, big, 0, NULL);
	cr_assert_eq(file_row_at(tpath, 2001) % CHUNK, 0);
	expect_same(tpath, key, LF_OK, 0);
	expect_same(tpath, NULL, LF_OK, 0);
}

Test(ledger_hashes, a_row_longer_than_several_chunks_verifies_alike)
{
	make_ledger(tpath, 1500, 5 * CHUNK + 123, 0, NULL);
	expect_same(tpath, key, LF_OK, 0);
	expect_same(tpath, NULL, LF_OK, 0);
}

/* orig, zeros chunks of 0x00, and when mid is not "" mid and as many. */
static void write_padded(size_t zeros, const char *mid)
{
	FILE *f = fopen(tpath, "wb");
	char *zero = calloc(1, zeros * CHUNK);

	cr_assert_not_null(f);
	cr_assert_not_null(zero);
	fwrite(orig, 1, orig_n, f);
	fwrite(zero, 1, zeros * CHUNK, f);
	fputs(mid, f);
	if (*mid)
		fwrite(zero, 1, zeros * CHUNK, f);
	fclose(f);
	free(zero);
}

Test(ledger_hashes, padding_after_the_rows_verifies_alike)
{
	write_padded(3, "");
	expect_same(tpath, key, LF_OK, 0);
}

Test(ledger_hashes, a_torn_row_inside_the_padding_is_found_alike)
{
	write_padded(2, "{\"case_id\":");
	expect_same(tpath, key, LF_VERIFY, ROWS + 1);
}
