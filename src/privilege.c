/* SPDX-License-Identifier: MIT */
/*
 * privilege.c - the drop of --user (ledgerfs(8) PRIVILEGE).  The bounding
 * set and no_new_privs are per thread, so the drop happens while the
 * daemon has one thread; it is checked by reading the kernel's own
 * account of the process back, not by trusting the calls' return values.
 */
#include "privilege.h"

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum lf_err priv_lookup(const char *name, struct priv_user *u,
			struct lf_why *why)
{
	struct passwd pw, *found = NULL;
	char buf[16384];

	if (getpwnam_r(name, &pw, buf, sizeof(buf), &found) != 0 || !found)
		return lf_fail(why, LF_NOT_FOUND, "--user: no user '%.60s'",
			       name);
	if (pw.pw_uid == 0)
		return lf_fail(why, LF_VERIFY,
			       "--user: '%.60s' is root; name an unprivileged "
			       "user",
			       name);
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	snprintf(u->name, sizeof(u->name), "%s", name);
	return LF_OK;
}

static int cap_last(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int last = CAP_LAST_CAP;

	if (f) {
		if (fscanf(f, "%d", &last) != 1)
			last = CAP_LAST_CAP;
		fclose(f);
	}
	return last;
}

/* The kernel's word on this process: 0 when all is gone. */
static enum lf_err priv_verify(struct lf_why *why)
{
	static const char *const zero[] = {
		"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"};
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool nnp = false;
	size_t i;

	if (!f)
		return lf_fail(why, LF_IO, "--user: /proc/self/status: %s",
			       strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		for (i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
			size_t n = strlen(zero[i]);

			if (!strncmp(line, zero[i], n) &&
			    strtoull(line + n, NULL, 16) != 0) {
				fclose(f);
				return lf_fail(why, LF_VERIFY,
					       "--user: %.*s still set after "
					       "the drop",
					       (int)n - 1, zero[i]);
			}
		}
		if (!strncmp(line, "NoNewPrivs:", 11))
			nnp = atoi(line + 11) == 1;
	}
	fclose(f);
	if (!nnp)
		return lf_fail(
			why, LF_VERIFY,
			"--user: no_new_privs is not set after the drop");
	if (setuid(0) == 0)
		return lf_fail(why, LF_VERIFY,
			       "--user: root could be regained after the drop");
	return LF_OK;
}

enum lf_err priv_drop(const struct priv_user *u, struct lf_why *why)
{
	int cap, last = cap_last();

	/* While CAP_SETPCAP is still held: empty the bounding set. */
	for (cap = 0; cap <= last; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return lf_fail(why, LF_VERIFY,
				       "--user: dropping capability %d: %s",
				       cap, strerror(errno));
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (setgroups(1, &u->gid) < 0 || setresgid(u->gid, u->gid, u->gid) < 0)
		return lf_fail(why, LF_VERIFY, "--user: setting groups: %s",
			       strerror(errno));
	/* From root to another uid the kernel clears CapPrm and CapEff. */
	if (setresuid(u->uid, u->uid, u->uid) < 0)
		return lf_fail(why, LF_VERIFY, "--user: becoming %s: %s",
			       u->name, strerror(errno));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return lf_fail(why, LF_VERIFY, "--user: no_new_privs: %s",
			       strerror(errno));
	return priv_verify(why);
}
