/* SPDX-License-Identifier: MIT */
/*
 * bench_verify.c - `ledgerctl verify` without the rest of ledgerctl, for
 * trees where the CLI is not built yet: the same ctl_verify_main.
 *
 *   bench_verify verify LEDGER --key FILE
 */
#include "chain.h"
#include "ctl.h"

int main(int argc, char **argv)
{
	chain_init();
	if (argc < 2)
		return 2;
	return ctl_verify_main(argc - 1, argv + 1);
}
