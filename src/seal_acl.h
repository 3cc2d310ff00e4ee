/* SPDX-License-Identifier: MIT */
/*
 * seal_acl.h - the POSIX access ACL as Linux stores it in the
 * system.posix_acl_access xattr, read for one question: who besides the
 * owner may write?  libc only, like the rest of sealpath.
 */
#ifndef LF_SEAL_ACL_H
#define LF_SEAL_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SEAL_ACL_XATTR "system.posix_acl_access"

struct seal_acl {
	const unsigned char *entries; /* borrowed from the xattr buffer */
	size_t n;		      /* number of 8-byte entries */
	bool has_mask;
	unsigned mask, group_obj; /* permission bits */
};

/* Decode buf[0..len).  0, or -1 when it is not the version-2 format. */
int seal_acl_parse(const unsigned char *buf, size_t len, struct seal_acl *a);

/*
 * May the owning group write?  With a mask the group bits of the mode are
 * the mask, so it is GROUP_OBJ limited by the mask, as the kernel checks.
 * a may describe an empty ACL (n == 0): then the mode decides.
 */
bool seal_acl_group_writes(const struct seal_acl *a, mode_t mode);

/*
 * Does entry i name a user (*is_user) or group other than root that may
 * write (after the mask)?  *id receives the uid or gid.
 */
bool seal_acl_named_writer(const struct seal_acl *a, size_t i, bool *is_user,
			   unsigned long *id);

#endif
