/* SPDX-License-Identifier: MIT */
/*
 * backing.h - is a backing folder safe to keep ledgers in?  (ledgerfs(8)
 * SAFETY CHECKS)
 */
#ifndef LF_BACKING_H
#define LF_BACKING_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "err.h"

/*
 * Create dir (0700) when missing, then refuse it unless: it is a real
 * folder (not a link) owned by this user with mode 0700; no folder above
 * it can be written by anyone but root or this user (a sticky folder is
 * accepted when the next folder down belongs to root or this user);
 * neither it nor the mount point lies inside the other; the key file is
 * not inside it.  LF_IO for what cannot be checked, LF_VERIFY for a
 * folder that is unsafe; why says which rule.
 */
enum lf_err backing_check(const char *dir, const char *mountpoint,
			  const char *keyfile, struct lf_why *why);

/*
 * The host key (ledgerfs(8), SAFETY CHECKS) by the backing folder's
 * rules: when the file exists it is a regular file, not a link, owned by
 * root or this user, not writable by group or others; its folder (or,
 * before the daemon makes it, the nearest existing folder above) is owned
 * by root or this user and not writable by others unless sticky; every
 * folder above that passes backing_check's ancestor rules.  LF_VERIFY
 * with why saying which rule, LF_IO for what cannot be checked.
 */
enum lf_err backing_check_key(const char *keyfile, struct lf_why *why);

/*
 * Judge owners as the daemon's user uid from now on (--user, before the
 * daemon drops to it); by default the process's own user.
 */
void backing_set_user(uid_t uid);

/*
 * A file the executor helper runs or reads (ledgerfs(8) HOST EXECUTORS),
 * by the key file's rules after following links: a regular file
 * (LF_BAD_NAME), owned by root or this user, not writable by group or
 * others, every folder above by the backing folder's ancestor rules
 * (LF_VERIFY).  LF_NOT_FOUND when missing, LF_IO when it cannot be
 * checked.  what names it in why ("executor", "env file").
 */
enum lf_err backing_check_trusted_file(const char *path, const char *what,
				       struct lf_why *why);

/*
 * What a start makes that was not there before: the backing folder, the
 * host key, its signing key (KEY.sign) and the key's folder.  A start
 * refused after making them takes them away again (ledgerfs(8)
 * OPTIONS), so a refused start leaves nothing behind: notice before,
 * undo on refusal.  Folders go only when empty.
 */
struct backing_made {
	char key_dir[PATH_MAX];
	bool backing, key, sign, key_folder;
};
void backing_made_notice(const char *dir, const char *keyfile,
			 struct backing_made *m);
void backing_made_undo(const char *dir, const char *keyfile,
		       const struct backing_made *m);

#endif
