/* SPDX-License-Identifier: MIT */
/*
 * ctl_key.c - the host key as the ledgerctl commands read it: only to
 * check MACs, never created, errors said on stderr.
 */
#include <errno.h>
#include <stdio.h>

#include "chain.h"
#include "ctl.h"

int ctl_read_key(const char *cmd, const char *path,
		 unsigned char key[CHAIN_KEY_BYTES])
{
	struct lf_why why = {{0}};
	enum lf_err e = chain_read_host_key(path, key, &why);
	int err = errno;

	if (e == LF_OK)
		return 0;
	if (e == LF_NOT_FOUND) {
		errno = err;
		return 1;
	}
	fprintf(stderr, "ledgerctl %s: %s\n", cmd, why.msg);
	return -1;
}
