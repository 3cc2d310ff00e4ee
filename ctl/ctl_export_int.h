/* SPDX-License-Identifier: MIT */
/*
 * ctl_export_int.h - what `ledgerctl export` (ctl_export.c, writing) and
 * its reader (ctl_export_read.c) share: an export's members in memory.
 */
#ifndef LF_CTL_EXPORT_INT_H
#define LF_CTL_EXPORT_INT_H

#include <stddef.h>

#define TAR_BLOCK    512
#define TAR_MAX_FILE ((size_t)4 << 30)	/* a ledger under --max-ledger */
#define TAR_MAX_DOC  ((size_t)64 << 20) /* every other member */
#define TAR_MAX_NAME 16			/* members an export holds */
#define SUMS	     "SHA256SUMS"

/* One member of an export: a name in the case's folder and its bytes. */
struct member {
	char name[104];
	char *data;
	size_t len;
};

struct export
{
	struct member m[TAR_MAX_NAME];
	int n;
};

/* Add a member; data (malloc'd, or NULL: -1) is the export's then. */
int member_add(struct export *x, const char *name, char *data, size_t len);
/* Free the members' bytes; x is empty again. */
void export_free(struct export *x);

#endif
