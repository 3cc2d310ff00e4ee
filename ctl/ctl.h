/* SPDX-License-Identifier: MIT */
/*
 * ctl.h - the subcommands of ledgerctl, one file each (src/ctl_*.c).
 * Each takes argv with argv[0] the subcommand's name and returns the
 * process exit status; src/ledgerctl.c only dispatches.
 */
#ifndef LF_CTL_H
#define LF_CTL_H

#include "chain.h"

/* configure's directories (Makefile.am passes them), as the daemon's. */
#ifndef LEDGERFS_SYSCONFDIR
#define LEDGERFS_SYSCONFDIR "/etc"
#endif
#ifndef LEDGERFS_RUNSTATEDIR
#define LEDGERFS_RUNSTATEDIR "/run"
#endif
#ifndef LEDGERFS_LOCALSTATEDIR
#define LEDGERFS_LOCALSTATEDIR "/var"
#endif
#define CTL_DEFAULT_BACKING LEDGERFS_LOCALSTATEDIR "/lib/ledgerfs"
#define CTL_DEFAULT_KEY	    LEDGERFS_SYSCONFDIR "/ledgerfs/host.key"
#define CTL_DEFAULT_MOUNT   LEDGERFS_RUNSTATEDIR "/ledgerfs"

/* verify LEDGER [--key FILE] [--head ROWS:HEX]: 0 good, 1 bad, 2 usage/IO. */
int ctl_verify_main(int argc, char **argv);
/* validate POLICY [MOCKS]: 0 valid, 1 invalid, 2 usage/unreadable. */
int ctl_validate_main(int argc, char **argv);

/* evidence LEDGER [--turn N] [--key FILE]: 0 ok, 2 usage, 3 does not verify. */
int ctl_evidence_main(int argc, char **argv);
/* transcript LEDGER --target FILE [--turn N] [--key FILE]: 0/1/2/3. */
int ctl_transcript_main(int argc, char **argv);
/* check-target PID [--mount DIR] [--backing DIR] [--key FILE]: 0/1/2. */
int ctl_check_target_main(int argc, char **argv);
/* console [--listen ADDR] [--allow-remote] [MOUNT]: 0 at SIGINT/TERM, 2. */
int ctl_console_main(int argc, char **argv);

/*
 * Read the host key to check MACs (never creates it): 0 loaded, 1 the
 * file is absent or not ours to read (errno says which), -1 anything
 * else (said on stderr as "ledgerctl CMD: ...").
 */
int ctl_read_key(const char *cmd, const char *path,
		 unsigned char key[CHAIN_KEY_BYTES]);

/*
 * PATH a backing ledger or case folder beside a commit journal: say on
 * stderr, as "ledgerctl CMD: ...", that it may lack rows the daemon
 * acknowledged until its next start (ledgerfs(8) --sync=journal).
 */
void ctl_note_commit_journal(const char *cmd, const char *path);

/*
 * export CASE FILE.tar [--backing DIR] [--key FILE] (ctl/ctl_export.c):
 * 0 written, 1 the ledger does not verify (nothing written), 2 usage/IO.
 */
int ctl_export_main(int argc, char **argv);
/* verify, for a FILE.tar from export as for a ledger (ctl/ctl_export.c). */
int ctl_verify_any_main(int argc, char **argv);

/*
 * cassette CASE OUTDIR [--key FILE] | cassette --compare OUTDIR CASE
 * [--key FILE] [--json] (ctl/ctl_cassette.c): see ledgerctl(1) CASSETTES.
 */
int ctl_cassette_main(int argc, char **argv);
/* pubkey [--key FILE] (ctl/ctl_pubkey.c): 0, or 2. */
int ctl_pubkey_main(int argc, char **argv);
/* prove CASE ROW, consistency OLD NEW (ctl/ctl_prove.c): 0, 1 bad, 2. */
int ctl_prove_main(int argc, char **argv);
int ctl_consistency_main(int argc, char **argv);
/* verify --pubkey=VKEY LEDGER [CHECKPOINT ...] (ctl/ctl_verify_pub.c). */
int ctl_verify_pub_main(int argc, char **argv);

/* Mount-side commands (src/ctl_case.c); mount is the view's root. */
int ctl_case_main(const char *mount, int argc, char **argv);

#endif
