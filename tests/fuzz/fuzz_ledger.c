/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ledger.c - fuzz harness for what `ledgerctl verify` reads: a
 * ledger file that anyone may have altered (ledgerctl(1) verify,
 * ledgerfs-ledger(5)).  Each line alone through the member scanner: what
 * it finds lies inside the line, and the members a reader asks for are
 * what jansson reads in the whole line when it takes it.  The whole
 * input as a ledger, with the fixture's host key and with none, and with
 * that key and an initial seal key (every epoch's MAC, keys stepped by
 * the threads reading ahead): the verdict, bad row, reason, good bytes
 * and head are the same read on one thread with libgcrypt's SHA-256
 * alone and read ahead in chunks of 4 KiB on two with the SHA
 * extensions where the processor has them (ledger_hashes.h, chain_x2.c),
 * and the reason is one line.  Each line jansson parses is written back
 * in canonical form by canon.c and by jansson, byte for byte alike.
 * A broken promise aborts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "canon.h"
#include "chain.h"
#include "fuzz_request.h"
#include "ledger.h"
#include "ledger_hashes.h"
#include "ledger_scan.h"

#ifndef FUZZ_LEDGER_KEY
#define FUZZ_LEDGER_KEY "tests/data/ledger/v1.key.hex"
#endif

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

struct outcome {
	enum lf_err rc;
	struct ledger_report rep;
	char why[sizeof(((struct lf_why *)0)->msg)];
};

/* The fixture's host key (tests/data/ledger), so mutants reach the MACs. */
static const unsigned char *fuzz_key(void)
{
	static unsigned char key[CHAIN_KEY_BYTES];
	static int state; /* 0 not read, 1 read, -1 none */
	unsigned v;
	FILE *f;
	int i;

	if (state)
		return state > 0 ? key : NULL;
	state = -1;
	f = fopen(FUZZ_LEDGER_KEY, "r");
	if (!f)
		return NULL;
	for (i = 0; i < CHAIN_KEY_BYTES && fscanf(f, "%2x", &v) == 1; i++)
		key[i] = (unsigned char)v;
	fclose(f);
	if (i == CHAIN_KEY_BYTES)
		state = 1;
	return state > 0 ? key : NULL;
}

/*
 * The members a reader asks for, taken from the line alone, are what
 * jansson makes of the whole line when it takes it, and no others.
 */
/* canon.c writes what json_dumps writes, or refuses where it refuses. */
static void fuzz_canon(const json_t *v)
{
	char *a = canon_dump(v, NULL);
	char *b = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);

	CHECK((!a && !b) || (a && b && strcmp(a, b) == 0));
	CHECK(canon_size(v) == (b ? strlen(b) : 0));
	free(a);
	free(b);
}

static void fuzz_scan_members(const char *s, size_t n)
{
	static const char *const want[] = {"phase",	 "call_id", "row",
					   "tool",	 "counts",  "turn",
					   "over_limit", "a",	    NULL};
	json_t *got = ledger_scan_members(s, n, want), *full, *v;
	const char *k;
	size_t i;

	full = json_loadb(s, n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
	if (full)
		fuzz_canon(full);
	if (!got) {
		json_decref(full);
		return;
	}
	CHECK(json_is_object(got));
	json_object_foreach(got, k, v)
	{
		for (i = 0; want[i] && strcmp(want[i], k); i++)
			;
		CHECK(want[i]);
	}
	if (full && json_is_object(full))
		for (i = 0; want[i]; i++) {
			json_t *a = json_object_get(got, want[i]);
			json_t *b = json_object_get(full, want[i]);

			CHECK((!a && !b) || (a && b && json_equal(a, b)));
		}
	json_decref(full);
	json_decref(got);
}

static void fuzz_scan_lines(const char *s, size_t n)
{
	const char *end = s + n, *nl, *err;
	struct ledger_fields f;
	const struct ledger_tok *t[] = {&f.case_id, &f.row,   &f.prev, &f.mac,
					&f.time,    &f.phase, &f.epoch};
	size_t i;

	for (; s < end; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			nl = end;
		err = NULL;
		fuzz_scan_members(s, (size_t)(nl - s));
		if (ledger_scan_fields(s, (size_t)(nl - s), &f, &err) < 0) {
			CHECK(err && *err);
			continue;
		}
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			CHECK(!t[i]->p ||
			      (t[i]->p > s && t[i]->p + t[i]->n < nl));
		CHECK(!f.mac.p ||
		      (f.mac_member >= s && f.mac_member < f.mac.p &&
		       f.mac_end == f.mac.p + f.mac.n));
	}
}

static void fuzz_verify(int fd, unsigned threads, const unsigned char *key,
			const struct ratchet_keys *seal, struct outcome *o)
{
	struct lf_why why = {{0}};

	ledger_verify_set_threads(threads);
	o->rc = ledger_verify_sealed(fd, NULL, key, seal, NULL, NULL, &o->rep,
				     &why);
	memcpy(o->why, why.msg, sizeof(o->why));
	CHECK(!strchr(o->why, '\n'));
	CHECK(o->rc == LF_OK || o->why[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *keys[3] = {fuzz_key(), NULL, fuzz_key()};
	/* A fixed initial seal key: sealed rows reach the keyed paths. */
	static const struct ratchet_keys k0 = {
		.mode = RATCHET_KEYS_ALL,
		.key = "ledgerfs-fuzz-initial-seal-key."};
	struct outcome one, two;
	int fd, k;

	fuzz_scan_lines((const char *)data, size);
	fd = memfd_create("ledger", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	ledger_hashes_set_chunk(4096);
	for (k = 0; k < 3; k++) {
		chain_use_x2(false);
		fuzz_verify(fd, 1, keys[k], k == 2 ? &k0 : NULL, &one);
		chain_use_x2(true);
		fuzz_verify(fd, 2, keys[k], k == 2 ? &k0 : NULL, &two);
		CHECK(one.rc == two.rc && !strcmp(one.why, two.why));
		CHECK(one.rep.bad_row == two.rep.bad_row &&
		      one.rep.good_bytes == two.rep.good_bytes &&
		      one.rep.file_bytes == two.rep.file_bytes &&
		      one.rep.torn == two.rep.torn &&
		      one.rep.head.rows == two.rep.head.rows &&
		      !strcmp(one.rep.head.head, two.rep.head.head));
		CHECK(one.rep.good_bytes <= (long long)size);
	}
	ledger_verify_set_threads(1);
	close(fd);
	return 0;
}
