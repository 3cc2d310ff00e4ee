/* SPDX-License-Identifier: MIT */
/*
 * seal_acl.c - decoding the access ACL xattr (see seal_acl.h).  The
 * format: a 4-byte version (2), then entries of {u16 tag, u16 perm,
 * u32 id}, little-endian.
 */
#include "seal_acl.h"

#include <string.h>
#include <sys/stat.h>

#define ACL_VERSION   2
#define ACL_USER      0x02
#define ACL_GROUP_OBJ 0x04
#define ACL_GROUP     0x08
#define ACL_MASK      0x10
#define ACL_WRITE     0x02

static unsigned le16(const unsigned char *p)
{
	return p[0] | (unsigned)p[1] << 8;
}

static unsigned long le32(const unsigned char *p)
{
	return p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 |
	       (unsigned long)p[3] << 24;
}

int seal_acl_parse(const unsigned char *buf, size_t len, struct seal_acl *a)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	if (!len)
		return 0;
	if (len < 4 || (len - 4) % 8 || le32(buf) != ACL_VERSION)
		return -1;
	a->entries = buf + 4;
	a->n = (len - 4) / 8;
	for (i = 0; i < a->n; i++) {
		const unsigned char *e = a->entries + i * 8;

		if (le16(e) == ACL_MASK) {
			a->has_mask = true;
			a->mask = le16(e + 2);
		} else if (le16(e) == ACL_GROUP_OBJ) {
			a->group_obj = le16(e + 2);
		}
	}
	return 0;
}

bool seal_acl_group_writes(const struct seal_acl *a, mode_t mode)
{
	if (a->has_mask)
		return (a->group_obj & a->mask & ACL_WRITE) != 0;
	return (mode & S_IWGRP) != 0;
}

bool seal_acl_named_writer(const struct seal_acl *a, size_t i, bool *is_user,
			   unsigned long *id)
{
	const unsigned char *e = a->entries + i * 8;
	unsigned tag = le16(e), perm = le16(e + 2);

	if (!(perm & ACL_WRITE) || (a->has_mask && !(a->mask & ACL_WRITE)))
		return false;
	*id = le32(e + 4);
	*is_user = tag == ACL_USER;
	/* A named entry for root grants root nothing new. */
	if (tag == ACL_USER)
		return *id != 0;
	return tag == ACL_GROUP;
}
