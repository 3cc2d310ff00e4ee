/* SPDX-License-Identifier: MIT */
/*
 * privilege.h - --user (ledgerfs(8) PRIVILEGE): the unprivileged user the
 * daemon becomes after mounting and reading its keys, and the drop itself.
 */
#ifndef LF_PRIVILEGE_H
#define LF_PRIVILEGE_H

#include <sys/types.h>

#include "err.h"

struct priv_user {
	uid_t uid;
	gid_t gid;
	char name[64];
};

/* Look name up; LF_VERIFY for root (uid 0) and LF_NOT_FOUND for no user. */
enum lf_err priv_lookup(const char *name, struct priv_user *u,
			struct lf_why *why);

/*
 * Become u for good, in a process with one thread: every capability out
 * of the bounding and ambient sets, supplementary groups = u's primary
 * group alone, gid and uid (real, effective, saved), no_new_privs; then
 * read /proc/self/status back and refuse (LF_VERIFY) unless CapEff,
 * CapPrm, CapBnd and CapAmb are 0 and NoNewPrivs is 1.
 */
enum lf_err priv_drop(const struct priv_user *u, struct lf_why *why);

#endif
