/* SPDX-License-Identifier: MIT */
/*
 * test_ratchet.c - forward-secure seals (ledgerfs-ledger(5) SEALS): the
 * key schedule, epochs of N rows and at each turn, the seal key file
 * (0600, only the current key, whole after a kill), resuming after a
 * restart or a kill between a row and its ratchet, and an attacker who
 * holds the state of epoch k failing to forge a row of epoch k-1.
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
#include "ratchet.h"

#define N 3 /* rows in an epoch in these tests */

static char dir[64], lpath[96], spath[112];
static unsigned char host[CHAIN_KEY_BYTES];

static void setup(void)
{
	chain_init();
	snprintf(dir, sizeof(dir), "/tmp/lfratchet.XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(lpath, sizeof(lpath), "%s/ledger.jsonl", dir);
	snprintf(spath, sizeof(spath), "%s" RATCHET_FILE_SUFFIX, lpath);
	memset(host, 7, sizeof(host));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(ratchet, .init = setup, .fini = teardown);

static void append(struct ledger *l, const char *phase)
{
	struct lf_why why = {{0}};
	json_t *row = json_pack("{s:s}", "phase", phase);

	cr_assert_eq(ledger_append(l, row, NULL, NULL, &why), LF_OK, "%s",
		     why.msg);
	json_decref(row);
}

/* A new sealed ledger; K0 handed out into k0. */
static struct ledger *sealed_ledger(unsigned char k0[CHAIN_KEY_BYTES])
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", host, true, NULL, &l, &why),
		LF_OK, "%s", why.msg);
	cr_assert_eq(ledger_seal_start(l, AT_FDCWD, lpath, host, N, &why),
		     LF_OK, "%s", why.msg);
	cr_assert_eq(ledger_seal_handout(l, k0, &why), LF_OK, "%s", why.msg);
	return l;
}

static struct ledger *reopen(enum lf_err want)
{
	struct ledger *l = NULL;
	struct lf_why why = {{0}};

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", host, false, NULL, &l, &why),
		want, "%s", why.msg);
	return l;
}

static enum lf_err verify(const struct ratchet_keys *k,
			  struct ledger_report *rep, struct lf_why *why)
{
	int fd = open(lpath, O_RDONLY);
	enum lf_err e;

	cr_assert(fd >= 0);
	e = ledger_verify_sealed(fd, NULL, host, k, NULL, NULL, rep, why);
	close(fd);
	return e;
}

static struct ratchet_keys all_keys(const unsigned char k0[CHAIN_KEY_BYTES])
{
	struct ratchet_keys k = {.mode = RATCHET_KEYS_ALL};

	memcpy(k.key, k0, CHAIN_KEY_BYTES);
	return k;
}

static struct ratchet_keys stored_keys(void)
{
	struct ratchet_keys k;
	struct lf_why why = {{0}};

	cr_assert_eq(ratchet_read_keys(AT_FDCWD, spath, host, &k, &why), LF_OK,
		     "%s", why.msg);
	return k;
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	cr_assert(fd >= 0);
	n = read(fd, buf, cap);
	close(fd);
	cr_assert(n >= 0);
	return (size_t)n;
}

static void write_file(const char *path, const unsigned char *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, n), (ssize_t)n);
	close(fd);
}

static bool contains(const unsigned char *hay, size_t n,
		     const unsigned char *needle, size_t m)
{
	size_t i;

	for (i = 0; i + m <= n; i++)
		if (!memcmp(hay + i, needle, m))
			return true;
	return false;
}

Test(ratchet, step_is_hmac_of_the_label_under_the_key)
{
	/* Python: hmac.new(bytes(range(32)), b"ledgerfs-ratchet", sha256) */
	static const char want[] =
		"29fc74db18a3dfc141fb4b20078a479caa6282b0412cb6531359edeefc8e22d6";
	unsigned char k[CHAIN_KEY_BYTES];
	char hex[CHAIN_HEX_LEN + 1];
	int i;

	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		k[i] = (unsigned char)i;
	ratchet_step(k, k);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		snprintf(hex + 2 * i, 3, "%02x", k[i]);
	cr_assert_str_eq(hex, want);
}

Test(ratchet, epoch_ends_after_n_rows_and_at_each_turn)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	struct ledger_report rep;
	struct lf_why why = {{0}};

	append(l, "case_opened"); /* epoch 0: rows 1-3 */
	append(l, "decision");
	append(l, "decision");
	append(l, "decision"); /* epoch 1: rows 4-5 (turn) */
	append(l, "turn");
	append(l, "decision"); /* epoch 2 */
	ledger_close(l);
	k = stored_keys();
	cr_assert_eq(k.epoch, 2);
	k = all_keys(k0);
	cr_assert_eq(verify(&k, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert(rep.sealed);
	cr_assert(rep.macs_checked);
	cr_assert_eq(rep.walk.mac_rows, 6);
	cr_assert_eq(rep.walk.epoch, 2);
	cr_assert_eq(rep.walk.rows_in_epoch, 1);
}

Test(ratchet, stored_key_checks_only_its_own_epoch)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	struct ledger_report rep;
	struct lf_why why = {{0}};

	append(l, "case_opened");
	append(l, "turn");
	append(l, "decision");
	append(l, "decision");
	ledger_close(l);
	k = stored_keys();
	cr_assert_eq(verify(&k, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.walk.mac_rows, 2);
	cr_assert_not(rep.macs_checked);
}

Test(ratchet, seal_key_file_is_0600_and_never_replaced)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet *r = NULL;
	struct lf_why why = {{0}};
	struct stat st;

	cr_assert_eq(stat(spath, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(ratchet_create(AT_FDCWD, spath, host, N, &r, &why),
		     LF_EXISTS);
	cr_assert_null(r);
	ledger_close(l);
}

Test(ratchet, stored_key_changes_and_old_bytes_leave_the_file)
{
	unsigned char k0[CHAIN_KEY_BYTES], before[512], after[512];
	struct ledger *l = sealed_ledger(k0);
	size_t nb, na;
	int off;

	append(l, "case_opened");
	nb = read_file(spath, before, sizeof(before));
	append(l, "turn");
	na = read_file(spath, after, sizeof(after));
	cr_assert_eq(nb, 192);
	cr_assert_eq(na, 192);
	/* The whole slot of epoch 0 (wrapped key and checksum) is gone. */
	off = before[0] ? 0 : 96;
	cr_assert_not(contains(after, na, before + off + 32, 32));
	cr_assert_not(contains(after, na, before + off + 64, 32));
	cr_assert_not(contains(after, na, k0, CHAIN_KEY_BYTES));
	ledger_close(l);
}

Test(ratchet, k0_is_handed_out_once_and_only_in_epoch_0)
{
	unsigned char k0[CHAIN_KEY_BYTES], again[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct lf_why why = {{0}};

	cr_assert_eq(ledger_seal_handout(l, again, &why), LF_NOT_FOUND);
	append(l, "case_opened");
	ledger_close(l);
	/* The mark is durable: a restart does not hand it out again. */
	l = reopen(LF_OK);
	cr_assert_eq(ledger_seal_handout(l, again, &why), LF_NOT_FOUND);
	ledger_close(l);
}

Test(ratchet, k0_is_gone_after_epoch_0)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = NULL;
	struct lf_why why = {{0}};

	cr_assert_eq(
		ledger_open(AT_FDCWD, lpath, "C1", host, true, NULL, &l, &why),
		LF_OK);
	cr_assert_eq(ledger_seal_start(l, AT_FDCWD, lpath, host, N, &why),
		     LF_OK);
	append(l, "case_opened");
	append(l, "turn");
	cr_assert_eq(ledger_seal_handout(l, k0, &why), LF_NOT_FOUND);
	ledger_close(l);
}

Test(ratchet, restart_mid_epoch_continues_the_ratchet)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	struct ledger_report rep;
	struct lf_why why = {{0}};

	append(l, "case_opened");
	append(l, "decision");
	ledger_close(l);
	l = reopen(LF_OK);
	append(l, "decision"); /* the third row of epoch 0 ends it */
	append(l, "decision");
	ledger_close(l);
	k = stored_keys();
	cr_assert_eq(k.epoch, 1);
	k = all_keys(k0);
	cr_assert_eq(verify(&k, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.walk.epoch, 1);
	cr_assert_eq(rep.walk.rows_in_epoch, 1);
}

Test(ratchet, kill_between_the_last_row_and_its_ratchet_is_finished_at_load)
{
	unsigned char k0[CHAIN_KEY_BYTES], old[512];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	size_t n;

	append(l, "case_opened");
	n = read_file(spath, old, sizeof(old));
	append(l, "turn");
	ledger_close(l);
	/* The turn row is durable, the key file still says epoch 0. */
	write_file(spath, old, n);
	l = reopen(LF_OK);
	k = stored_keys();
	cr_assert_eq(k.epoch, 1);
	append(l, "decision");
	ledger_close(l);
	k = all_keys(k0);
	cr_assert_eq(verify(&k, &rep, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(rep.walk.epoch, 1);
}

Test(ratchet,
     kill_between_writing_the_new_slot_and_wiping_the_old_loads_the_new)
{
	unsigned char k0[CHAIN_KEY_BYTES], old[512], cur[512], both[512];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	size_t n;
	int s;

	append(l, "case_opened");
	n = read_file(spath, old, sizeof(old));
	append(l, "turn");
	ledger_close(l);
	read_file(spath, cur, sizeof(cur));
	/* Both slots whole: the new one written, the old not yet wiped. */
	memcpy(both, cur, n);
	s = old[0] ? 0 : 96;
	memcpy(both + s, old + s, 96);
	write_file(spath, both, n);
	l = reopen(LF_OK);
	ledger_close(l);
	k = stored_keys();
	cr_assert_eq(k.epoch, 1);
	read_file(spath, cur, sizeof(cur));
	cr_assert_not(contains(cur, n, old + s + 32, 32), "old slot wiped");
}

Test(ratchet, torn_slot_falls_back_to_the_whole_one)
{
	unsigned char k0[CHAIN_KEY_BYTES], buf[512];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	size_t n;
	int idle;

	append(l, "case_opened");
	ledger_close(l);
	n = read_file(spath, buf, sizeof(buf));
	/* A torn write of the idle slot: half a magic, garbage. */
	idle = buf[0] ? 96 : 0;
	memcpy(buf + idle, "lfseal01\xff\xff", 10);
	write_file(spath, buf, n);
	l = reopen(LF_OK);
	ledger_close(l);
	k = stored_keys();
	cr_assert_eq(k.epoch, 0);
}

Test(ratchet, sealed_ledger_without_its_key_file_does_not_load)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);

	append(l, "case_opened");
	ledger_close(l);
	cr_assert_eq(unlink(spath), 0);
	reopen(LF_VERIFY);
}

Test(ratchet, key_file_behind_the_ledger_does_not_load)
{
	unsigned char k0[CHAIN_KEY_BYTES], old[512];
	struct ledger *l = sealed_ledger(k0);
	size_t n;

	append(l, "case_opened");
	n = read_file(spath, old, sizeof(old));
	append(l, "turn");
	append(l, "turn");
	ledger_close(l);
	/* Two epochs behind: rows of epoch 1 cannot be checked, refuse. */
	write_file(spath, old, n);
	reopen(LF_VERIFY);
}

Test(ratchet, relabelled_epoch_is_bad)
{
	unsigned char k0[CHAIN_KEY_BYTES], buf[8192];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys k;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	size_t n;
	char *p;

	append(l, "case_opened");
	append(l, "decision");
	ledger_close(l);
	n = read_file(lpath, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	p = strstr(strchr((char *)buf, '\n'), "\"epoch\":0");
	cr_assert(p);
	p[8] = '1';
	write_file(lpath, buf, n);
	k = all_keys(k0);
	cr_assert_eq(verify(&k, &rep, &why), LF_VERIFY);
	cr_assert_str_eq(why.msg, "row 2: epoch 1, expected 0");
}

/*
 * The attacker holds everything the host holds at epoch k: the host key
 * and the seal key file, so K(k).  A row of epoch k-1 is changed, given
 * a MAC under K(k), and every later row re-chained and re-MACed under
 * K(k) -- relabelled into epoch k where that is the only key at hand.
 */
static void forge(const unsigned char kk[CHAIN_KEY_BYTES], bool relabel)
{
	unsigned char buf[16384];
	char *lines[16], *out, *p, *body, mac[CHAIN_HEX_LEN + 1];
	char prev[CHAIN_HEX_LEN + 1];
	size_t n, len = 0;
	int i, count = 0;
	json_t *row;

	n = read_file(lpath, buf, sizeof(buf) - 1);
	buf[n] = '\0';
	for (p = strtok((char *)buf, "\n"); p && count < 16;
	     p = strtok(NULL, "\n"))
		lines[count++] = p;
	out = calloc(1, sizeof(buf) * 2);
	cr_assert(out);
	memset(prev, '0', CHAIN_HEX_LEN);
	prev[CHAIN_HEX_LEN] = '\0';
	for (i = 0; i < count; i++) {
		row = json_loads(lines[i], 0, NULL);
		cr_assert(row);
		/* Row 3 (a decision of epoch 0) is the one changed. */
		if (i == 2)
			json_object_set_new(row, "mode", json_string("forged"));
		if (i >= 2) {
			json_object_set_new(row, "prev", json_string(prev));
			if (relabel)
				json_object_set_new(row, "epoch",
						    json_integer(1));
			json_object_del(row, "mac");
			body = ledger_canonical(row);
			chain_hmac_hex(kk, body, strlen(body), mac);
			free(body);
			json_object_set_new(row, "mac", json_string(mac));
		}
		body = ledger_canonical(row);
		json_decref(row);
		chain_sha256_hex(body, strlen(body), prev);
		len += (size_t)sprintf(out + len, "%s\n", body);
		free(body);
	}
	write_file(lpath, (unsigned char *)out, len);
	free(out);
}

static void forge_case(bool relabel)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct ledger *l = sealed_ledger(k0);
	struct ratchet_keys stolen, k;
	struct ledger_report rep;
	struct lf_why why = {{0}};

	append(l, "case_opened"); /* epoch 0: rows 1-3 */
	append(l, "registered");
	append(l, "decision");
	append(l, "decision"); /* epoch 1 */
	append(l, "decision");
	ledger_close(l);
	stolen = stored_keys(); /* host key + key file: K(1) */
	cr_assert_eq(stolen.epoch, 1);
	forge(stolen.key, relabel);
	k = all_keys(k0);
	cr_assert_eq(verify(&k, &rep, &why), LF_VERIFY);
	cr_assert_eq(rep.bad_row, 3, "%s", why.msg);
	/*
	 * The limit, said in ledgerfs-ledger(5): with only the keys of
	 * epoch 1, rows of epoch 0 are checked for chain and form alone,
	 * so a forgery that keeps its epoch passes that check.
	 */
	if (!relabel)
		cr_assert_eq(verify(&stolen, &rep, &why), LF_OK, "%s", why.msg);
}

Test(ratchet, state_at_epoch_k_cannot_forge_a_row_of_epoch_k_minus_1)
{
	forge_case(false);
}

Test(ratchet, forged_row_relabelled_into_epoch_k_is_caught)
{
	forge_case(true);
}
