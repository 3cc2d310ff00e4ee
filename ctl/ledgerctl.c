/* SPDX-License-Identifier: MIT */
/*
 * ledgerctl.c - the host CLI: global options, then one subcommand.
 * Each subcommand lives in its own src/ctl_*.c; this only dispatches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"
#include "ctl.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ledgerctl [--mount DIR] COMMAND ...\n"
		"  open CASE --policy FILE [--mocks FILE] [--tools FILE]\n"
		"       [--env-file OUT] [--seal-key-out FILE]\n"
		"  wait CASE [--timeout DURATION]\n"
		"  turn CASE | close CASE | fail CASE REASON\n"
		"  status CASE | ls\n"
		"  verify LEDGER|FILE.tar [--key FILE] [--head ROWS:HEX] [--json]\n"
		"         [--require-mac] [--seal-key K0FILE]\n"
		"  export CASE FILE.tar [--backing DIR] [--key FILE]\n"
		"  validate POLICY [MOCKS]\n"
		"  evidence LEDGER [--turn N] [--key FILE]\n"
		"  transcript LEDGER --target FILE [--turn N] [--key FILE]\n"
		"  check-target PID [--mount DIR] [--backing DIR] [--key FILE]\n"
		"  verify --pubkey=VKEY LEDGER [CHECKPOINT ...]\n"
		"  pubkey [--key FILE]\n"
		"  prove CASE|FOLDER ROW [--checkpoint FILE]\n"
		"  consistency OLD NEW [--ledger LEDGER]\n"
		"  console [--listen ADDR[:PORT]] [--allow-remote] [--key FILE] [MOUNTPOINT]\n"
		"  cassette CASE OUTDIR [--key FILE]\n"
		"  cassette --compare OUTDIR CASE [--key FILE] [--json]\n"
		"The mount defaults to $LEDGERFS_MOUNT, else " CTL_DEFAULT_MOUNT
		". See ledgerctl(1).\n");
}

static const struct {
	const char *name;
	int (*main)(int, char **);
} commands[] = {
	{"verify", ctl_verify_any_main},
	{"export", ctl_export_main},
	{"validate", ctl_validate_main},
	{"evidence", ctl_evidence_main},
	{"transcript", ctl_transcript_main},
	{"check-target", ctl_check_target_main},
	{"console", ctl_console_main},
	{"cassette", ctl_cassette_main},
	{"pubkey", ctl_pubkey_main},
	{"prove", ctl_prove_main},
	{"consistency", ctl_consistency_main},
};

int main(int argc, char **argv)
{
	const char *mount = getenv("LEDGERFS_MOUNT");
	size_t i;
	int a = 1;

	if (!mount || !*mount)
		mount = CTL_DEFAULT_MOUNT;
	while (a < argc && argv[a][0] == '-') {
		if (strcmp(argv[a], "--mount") == 0 && a + 1 < argc) {
			mount = argv[a + 1];
			a += 2;
		} else if (strncmp(argv[a], "--mount=", 8) == 0) {
			mount = argv[a] + 8;
			a++;
		} else if (strcmp(argv[a], "-h") == 0 ||
			   strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (a >= argc) {
		usage(stderr);
		return 2;
	}
	/* Subcommands that take --mount themselves default to the global one. */
	setenv("LEDGERFS_MOUNT", mount, 1);
	chain_init();
	/* Public verification has its own file (ctl/ctl_verify_pub.c). */
	if (!strcmp(argv[a], "verify"))
		for (i = (size_t)a + 1; i < (size_t)argc; i++)
			if (!strncmp(argv[i], "--pubkey", 8))
				return ctl_verify_pub_main(argc - a, argv + a);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[a], commands[i].name) == 0)
			return commands[i].main(argc - a, argv + a);
	return ctl_case_main(mount, argc - a, argv + a);
}
