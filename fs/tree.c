/* SPDX-License-Identifier: MIT */
/*
 * tree.c - path → node of the view.  Host-only nodes are owned by the
 * daemon's user with no access for others; the target folder is open to
 * every uid, because the bind mount, not the mode, is its boundary.
 */
#include "tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "request.h"

static const struct node_info infos[N_KIND_COUNT] = {
	[N_ROOT] = {NULL, N_ROOT, S_IFDIR | 0755, false},
	[N_CASES] = {"cases", N_ROOT, S_IFDIR | 0700, false},
	[N_CASE] = {NULL, N_CASES, S_IFDIR | 0700, false},
	[N_POLICY] = {"policy", N_CASE, S_IFREG | 0600, false},
	[N_MOCKS] = {"mocks", N_CASE, S_IFREG | 0600, false},
	[N_TOKEN] = {"token", N_CASE, S_IFREG | 0400, false},
	[N_CTL] = {"ctl", N_CASE, S_IFREG | 0200, true},
	[N_STATUS] = {"status", N_CASE, S_IFREG | 0400, false},
	[N_LEDGER] = {"ledger", N_CASE, S_IFREG | 0400, false},
	[N_CALLS] = {"calls", N_CASE, S_IFDIR | 0500, false},
	[N_CALLDIR] = {NULL, N_CALLS, S_IFDIR | 0500, false},
	[N_CALLFILE] = {NULL, N_CALLDIR, S_IFREG | 0400, false},
	[N_TARGET] = {"target", N_CASE, S_IFDIR | 0755, false},
	[N_REGISTER] = {"register", N_TARGET, S_IFREG | 0222, true},
	[N_REQUEST] = {"request", N_TARGET, S_IFREG | 0666, true},
	[N_REPLY] = {"reply", N_TARGET, S_IFREG | 0444, false},
	[N_REPLIES] = {"replies", N_TARGET, S_IFDIR | 0555, false},
	[N_REPLYFILE] = {NULL, N_REPLIES, S_IFREG | 0444, false},
	[N_RESULT] = {"result", N_TARGET, S_IFREG | 0222, true},
	[N_ERROR] = {"error", N_TARGET, S_IFREG | 0444, false},
	[N_TOOLS] = {"tools", N_CASE, S_IFREG | 0600, false},
	[N_TARGET_TOOLS] = {"tools", N_TARGET, S_IFREG | 0444, false},
	[N_CHECKPOINT] = {"checkpoint", N_CASE, S_IFREG | 0400, false},
	[N_SEAL_KEY] = {"seal_key", N_CASE, S_IFREG | 0400, false},
};

static const char *const call_files[] = {"request", "decision", "result"};

const struct node_info *tree_info(enum node_kind k)
{
	return &infos[k];
}

void tree_fixed_children(enum node_kind k, void (*fn)(void *, const char *),
			 void *ctx)
{
	int i;

	if (k == N_CALLDIR) {
		for (i = 0; i < 3; i++)
			fn(ctx, call_files[i]);
		return;
	}
	/*
	 * seal_key is opened by name, never listed: a copy of the case
	 * folder (cp -r, tar, rsync, a backup) must not take K0, which is
	 * handed out once (ledgerfs(8) THE VIEW).
	 */
	for (i = 0; i < N_KIND_COUNT; i++)
		if (infos[i].name && infos[i].parent == k && i != N_ROOT &&
		    i != N_SEAL_KEY)
			fn(ctx, infos[i].name);
}

/* Copy the next component of *p into buf; 0 at the end, -1 if too long. */
static int next_component(const char **p, char *buf, size_t size)
{
	const char *s = *p, *e;

	while (*s == '/')
		s++;
	if (!*s)
		return 0;
	e = strchr(s, '/');
	if (!e)
		e = s + strlen(s);
	if ((size_t)(e - s) >= size)
		return -1;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	*p = e;
	return 1;
}

static int fixed_child(enum node_kind parent, const char *name,
		       enum node_kind *out)
{
	int i;

	for (i = 0; i < N_KIND_COUNT; i++)
		if (infos[i].name && infos[i].parent == parent && i != N_ROOT &&
		    strcmp(infos[i].name, name) == 0) {
			*out = (enum node_kind)i;
			return 0;
		}
	return -1;
}

int tree_resolve(struct registry *r, const char *path, struct node *out)
{
	char comp[256];
	int rc;

	memset(out, 0, sizeof(*out));
	out->kind = N_ROOT;
	while ((rc = next_component(&path, comp, sizeof(comp))) > 0) {
		switch (out->kind) {
		case N_CASES:
			out->c = registry_get(r, comp);
			if (!out->c)
				return -ENOENT;
			out->kind = N_CASE;
			break;
		case N_CALLS:
			if (strlen(comp) >= sizeof(out->arg))
				return -ENOENT;
			memcpy(out->arg, comp, strlen(comp) + 1);
			out->kind = N_CALLDIR;
			break;
		case N_CALLDIR: {
			int i, found = 0;

			for (i = 0; i < 3; i++)
				found |= strcmp(comp, call_files[i]) == 0;
			if (!found)
				return -ENOENT;
			memcpy(out->file, comp, strlen(comp) + 1);
			out->kind = N_CALLFILE;
			break;
		}
		case N_REPLIES:
			/* ledgerfs(8) THE VIEW: the id percent-encoded. */
			if (!request_id_from_name(comp, out->arg,
						  sizeof(out->arg)))
				return -ENOENT;
			out->kind = N_REPLYFILE;
			break;
		default:
			if (fixed_child(out->kind, comp, &out->kind) < 0)
				return -ENOENT;
		}
	}
	return rc < 0 ? -ENAMETOOLONG : 0;
}
