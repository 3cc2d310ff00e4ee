/* SPDX-License-Identifier: MIT */
/*
 * ledgerfs-mcp.c - an MCP stdio server inside the sandbox (see
 * ledgerfs-mcp(1)): JSON-RPC 2.0 lines on stdin and stdout, every
 * tools/call a request line to the case's target folder.  stdout
 * carries JSON-RPC alone; everything else goes to stderr.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "units.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ledgerfs-mcp [--dir=DIR] [--init-timeout=DURATION]\n"
		"                    [-- DOWNSTREAM-COMMAND [ARG]...]\n"
		"DIR defaults to $LEDGERFS_DIR, else /mediator. See ledgerfs-mcp(1).\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"dir", required_argument, NULL, 'd'},
		{"init-timeout", required_argument, NULL, 't'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct mcp_server s;
	const char *dir = NULL;
	uint64_t init_ms = 30000;
	struct lf_why bad;
	int c, err;

	while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 't':
			if (units_duration_ms(optarg, &init_ms, &bad)) {
				mcp_log("--init-timeout: %s", bad.msg);
				return 2;
			}
			if (init_ms == 0) {
				mcp_log("--init-timeout: must be above 0");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("ledgerfs-mcp %s\n", LEDGERFS_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* --dir followed by "--" took it for its folder: a slip, said. */
	if (dir && (!*dir || !strcmp(dir, "--"))) {
		mcp_log("--dir needs a folder");
		usage(stderr);
		return 2;
	}
	/* A downstream command follows "--"; a word without it is a slip. */
	if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
		usage(stderr);
		return 2;
	}
	memset(&s, 0, sizeof(s));
	s.out_fd = 1;
	pthread_mutex_init(&s.out_lock, NULL);
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.idle, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (lfc_init(&s.lc, dir)) {
		mcp_log("folder name too long");
		return 2;
	}
	/* Register when the case is not registered yet (a repeat is fine). */
	if (lfc_have_credentials() && (err = lfc_register(&s.lc)) != 0) {
		char why[LFC_REASON_MAX];

		mcp_log("register: %s: %s", err > 0 ? strerror(err) : "bad id",
			lfc_reason(&s.lc, err, why, sizeof(why)));
	}
	if (optind < argc) {
		s.ds = mcp_downstream_start(argv + optind, init_ms);
		if (!s.ds)
			return 1;
	}
	mcp_serve(&s, 0);
	/* stdin closed: let calls in flight finish and report, then exit 0. */
	mcp_calls_wait(&s);
	mcp_downstream_stop(s.ds);
	return 0;
}
