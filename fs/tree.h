/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the shape of the view (ledgerfs(8) THE VIEW): which path is
 * which node, each node's mode, and who may use it.  Knows the core's cases
 * but nothing of FUSE, so the shape can be read in one place.
 */
#ifndef LFS_TREE_H
#define LFS_TREE_H

#include <stdbool.h>
#include <sys/types.h>

#include "case.h"
#include "registry.h"
#include "request.h"

enum node_kind {
	N_ROOT,
	N_CASES,
	N_CASE,
	N_POLICY,
	N_MOCKS,
	N_TOKEN,
	N_CTL,
	N_STATUS,
	N_LEDGER,
	N_CALLS,
	N_CALLDIR,
	N_CALLFILE,
	N_TARGET,
	N_REGISTER,
	N_REQUEST,
	N_REPLY,
	N_REPLIES,
	N_REPLYFILE,
	N_RESULT,
	N_ERROR,
	N_TOOLS,	/* host: the tools file given at open */
	N_TARGET_TOOLS, /* target: what tools/list shows, read-only */
	N_CHECKPOINT,	/* host: the latest signed checkpoint, read-only */
	N_SEAL_KEY,	/* host: K0 in hex, readable once (ledgerctl open) */
	N_KIND_COUNT
};

struct node {
	enum node_kind kind;
	struct lf_case *c;
	char arg[REQUEST_CALL_ID_MAX + 1]; /* calls/ folder name or call id */
	char file[16];			   /* calls/DIR/ file name */
};

/* The fixed properties of a kind. */
struct node_info {
	const char *name; /* file name inside its parent, NULL if variable */
	enum node_kind parent;
	mode_t mode;	 /* S_IFDIR|0700 ... */
	bool line_input; /* written one line at a time by the target/host */
};

const struct node_info *tree_info(enum node_kind k);

/* Resolve an absolute path of the view.  0, or -ENOENT. */
int tree_resolve(struct registry *r, const char *path, struct node *out);

/* The fixed children of a kind, for readdir: calls fn for each name. */
void tree_fixed_children(enum node_kind k, void (*fn)(void *, const char *),
			 void *ctx);

#endif
