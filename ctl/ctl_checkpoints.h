/* SPDX-License-Identifier: MIT */
/*
 * ctl_checkpoints.h - a set of signed checkpoints checked against a
 * ledger's tree (ctl_checkpoints.c).  Each function returns 0, 1 (bad:
 * the reason in bad) or 2 (unreadable: said on stderr).
 */
#ifndef LF_CTL_CHECKPOINTS_H
#define LF_CTL_CHECKPOINTS_H

#include <stddef.h>

#include "checkpoint.h"
#include "ctl_tree.h"

struct ctl_ckpt {
	char *label;
	struct checkpoint cp;
};

struct ctl_ckpts {
	struct ctl_ckpt *v;
	size_t n, cap;
	char bad[500]; /* why the set is bad (status 1) */
};

/* One checkpoint or several one after another (an export's member). */
int ctl_ckpts_add_text(struct ctl_ckpts *s, const char *name, const char *text,
		       size_t len, const struct note_key *k);
/* A file of them. */
int ctl_ckpts_add(struct ctl_ckpts *s, const char *path,
		  const struct note_key *k);
/* A backing case folder's `checkpoint` and checkpoints/ files. */
int ctl_ckpts_add_folder(struct ctl_ckpts *s, const char *dir,
			 const struct note_key *k);
/* Every checkpoint against the tree and each other (sorts them). */
int ctl_ckpts_check(struct ctl_ckpts *s, const struct ctl_tree *t,
		    const struct note_key *k);
/*
 * A sealed ledger's turn and case_closed rows each need a checkpoint of
 * their size in s (the daemon keeps one of each): fd's first good_bytes
 * are its rows, verified.
 */
int ctl_ckpts_required(struct ctl_ckpts *s, int fd, long long good_bytes);
void ctl_ckpts_free(struct ctl_ckpts *s);

#endif
