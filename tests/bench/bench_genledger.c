/* SPDX-License-Identifier: MIT */
/*
 * bench_genledger.c - builds a large, valid ledger for timing `ledgerctl
 * verify`: rows shaped like the daemon's decision and completion rows,
 * appended with the real ledger_append (so the same canonical form, chain
 * and MACs).  Run it on a tmpfs, where fdatasync costs nothing, and copy
 * the file to the disk under test.
 *
 *   bench_genledger DIR FILE CASE KEYFILE MEGABYTES [K0FILE]
 *
 * With K0FILE the ledger is sealed (ledgerfs-ledger(5) SEALS): FILE.seal
 * beside it, and K0 written to K0FILE for `verify --seal-key`.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "chain.h"
#include "ledger.h"

/* A decision row as the daemon writes it for a mocked call.  New ref. */
static json_t *gen_row(unsigned long long i)
{
	return json_pack(
		"{s:s, s:I, s:s, s:s, s:{s:I, s:s}, s:s, s:s, s:s, s:i, s:s,"
		" s:{s:s, s:s}, s:b, s:s, s:i, s:b, s:s, s:s, s:b, s:s, s:I}",
		"phase", "decision", "sequence", (json_int_t)i, "call_id",
		"c-bench", "tool", "resume_line", "args", "id", (json_int_t)i,
		"line", "L1", "mode", "mock", "matched", "resume_line",
		"reason", "mocked by mediation policy rule 'resume_line'",
		"policy_rule", 1, "mock_source", "inline", "returned", "status",
		"resumed", "note", "scenario step", "is_error", 0, "scenario",
		"restore", "mock_rule", 0, "real_executed", 0,
		"execution_status", "not_executed", "result_source",
		"host_mediator", "result_authoritative", 1, "completion_status",
		"complete", "turn", (json_int_t)0);
}

/* Seal the new ledger and write K0 to k0path.  0 or 1 (said). */
static int gen_seal(struct ledger *l, int dirfd, const char *path,
		    const unsigned char key[CHAIN_KEY_BYTES],
		    const char *k0path)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	int fd;

	if (ledger_seal_start(l, dirfd, path, key, RATCHET_EPOCH_ROWS, &why) !=
		    LF_OK ||
	    ledger_seal_handout(l, k0, &why) != LF_OK) {
		fprintf(stderr, "bench_genledger: %s\n", why.msg);
		return 1;
	}
	fd = open(k0path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, k0, sizeof(k0)) != (ssize_t)sizeof(k0) ||
	    close(fd) < 0) {
		perror(k0path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char key[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	struct ledger *l;
	struct ledger_head h;
	unsigned long long i;
	long long off = 0, want;
	size_t len = 0;
	int dirfd;

	if (argc != 6 && argc != 7) {
		fputs("usage: bench_genledger DIR FILE CASE KEYFILE MEGABYTES [K0FILE]\n",
		      stderr);
		return 2;
	}
	want = atoll(argv[5]) * 1024 * 1024;
	chain_init();
	dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		perror(argv[1]);
		return 1;
	}
	if (chain_load_host_key(argv[4], key, &why) != LF_OK ||
	    ledger_open(dirfd, argv[2], argv[3], key, true, NULL, &l, &why) !=
		    LF_OK) {
		fprintf(stderr, "bench_genledger: %s\n", why.msg);
		return 1;
	}
	if (argc == 7 && gen_seal(l, dirfd, argv[2], key, argv[6]) != 0)
		return 1;
	for (i = 1; off + (long long)len < want; i++) {
		json_t *row = gen_row(i);

		if (!row || ledger_append(l, row, &off, &len, &why) != LF_OK) {
			fprintf(stderr, "bench_genledger: %s\n", why.msg);
			return 1;
		}
		json_decref(row);
	}
	ledger_get_head(l, &h);
	printf("GENERATED rows=%llu bytes=%lld\n", h.rows,
	       off + (long long)len + 1);
	ledger_close(l);
	close(dirfd);
	return 0;
}
