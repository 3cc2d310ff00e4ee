/* SPDX-License-Identifier: MIT */
/*
 * ctl_pubkey.c - `ledgerctl pubkey [--key FILE]` (ledgerctl(1) PUBLIC
 * VERIFICATION): the verifier key of the daemon's checkpoint signing key,
 * in signed-note vkey form, for anyone who checks its ledgers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_tree.h"
#include "optarg.h"

#define PUBKEY_USAGE "usage: ledgerctl pubkey [--key FILE]\n"

int ctl_pubkey_main(int argc, char **argv)
{
	const char *key_path = CTL_DEFAULT_KEY;
	struct note_key k;
	char *vkey;
	int i;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--key", &key_path)) {
			continue;
		} else if (!strcmp(argv[i], "--help") ||
			   !strcmp(argv[i], "-h")) {
			fputs(PUBKEY_USAGE, stdout);
			return 0;
		} else {
			fputs(PUBKEY_USAGE, stderr);
			return 2;
		}
	}
	if (ctl_tree_own_key("pubkey", key_path, &k))
		return 2;
	vkey = checkpoint_vkey(&k);
	if (!vkey)
		return 2;
	printf("%s\n", vkey);
	free(vkey);
	return 0;
}
