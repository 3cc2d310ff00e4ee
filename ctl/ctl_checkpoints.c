/* SPDX-License-Identifier: MIT */
/*
 * ctl_checkpoints.c - a ledger's signed checkpoints against its tree
 * (ledgerfs-ledger(5) SIGNED CHECKPOINTS): read from files, a backing
 * case folder or an export's text, each signature checked, then all of
 * them against the tree and each other.  Used by `verify --pubkey`
 * (ctl_verify_pub.c) and by `verify --key`, which checks them with the
 * verifier key of the host's own signing key.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl_checkpoints.h"
#include "ctl_verify.h"
#include "ledger.h"
#include "ledger_scan.h"
#include "merkle.h"
#include "ratchet.h"

#define CKPTS_MAX 100000 /* checkpoints read from one folder */

/* Parse and check the signature of one checkpoint: 0, 1 or 2. */
static int ckpts_add_one(struct ctl_ckpts *s, const char *label,
			 const char *text, size_t len, const struct note_key *k)
{
	struct lf_why why = {{0}};
	struct checkpoint cp;

	if (checkpoint_open(text, len, k, &cp, &why) != LF_OK) {
		snprintf(s->bad, sizeof(s->bad), "%.150s: %.150s", label,
			 why.msg);
		return 1;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 8;
		struct ctl_ckpt *p;

		if (nc > CKPTS_MAX || !(p = realloc(s->v, nc * sizeof(*p))))
			return 2;
		s->v = p;
		s->cap = nc;
	}
	s->v[s->n].label = strdup(label);
	s->v[s->n].cp = cp;
	if (!s->v[s->n].label)
		return 2;
	s->n++;
	return 0;
}

/*
 * Text of one checkpoint or several one after another (as export's
 * `checkpoints`): a new one starts at the first line after a signature
 * line that is not a signature line.  label names them (NAME#N when
 * several).  0, 1 or 2.
 */
int ctl_ckpts_add_text(struct ctl_ckpts *s, const char *name, const char *text,
		       size_t len, const struct note_key *k)
{
	const char *p, *start, *end, *nl;
	char label[4200];
	bool in_sigs = false;
	int rc = 0, i = 0;

	p = start = text;
	end = text + len;
	while (!rc && p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end - 1;
		if (in_sigs && strncmp(p, "\xe2\x80\x94 ", 4) != 0) {
			snprintf(label, sizeof(label), "%s#%d", name, ++i);
			rc = ckpts_add_one(s, label, start, (size_t)(p - start),
					   k);
			start = p;
			in_sigs = false;
		}
		if (nl == p)
			in_sigs = true; /* the empty line before signatures */
		p = nl + 1;
	}
	if (!rc) {
		if (i)
			snprintf(label, sizeof(label), "%s#%d", name, ++i);
		else
			snprintf(label, sizeof(label), "%s", name);
		rc = ckpts_add_one(s, label, start, (size_t)(end - start), k);
	}
	return rc;
}

/* A file of checkpoints (ctl_ckpts_add_text).  0, 1 or 2. */
int ctl_ckpts_add(struct ctl_ckpts *s, const char *path,
		  const struct note_key *k)
{
	size_t len = 0, max = (size_t)CHECKPOINT_MAX * CKPTS_MAX;
	char *text = ctl_tree_slurp(path, max, &len);
	int rc;

	if (!text) {
		fprintf(stderr, "ledgerctl verify: %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	rc = ctl_ckpts_add_text(s, path, text, len, k);
	free(text);
	return rc;
}

/* A backing case folder's `checkpoint` and checkpoints/ files: 0, 1, 2. */
int ctl_ckpts_add_folder(struct ctl_ckpts *s, const char *dir,
			 const struct note_key *k)
{
	char path[4200];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/checkpoint", dir);
	/* The view shows an empty file until the case's first checkpoint. */
	if (stat(path, &st) == 0 && st.st_size > 0)
		rc = ctl_ckpts_add(s, path, k);
	snprintf(path, sizeof(path), "%s/checkpoints", dir);
	/* An export holds them in one file, a backing folder one a file. */
	if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return ctl_ckpts_add(s, path, k);
	d = opendir(path);
	while (!rc && d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/checkpoints/%s", dir,
			 de->d_name);
		rc = ctl_ckpts_add(s, path, k);
	}
	if (d)
		closedir(d);
	return rc;
}

static int ckpts_by_size(const void *a, const void *b)
{
	const struct ctl_ckpt *x = a, *y = b;

	return x->cp.size < y->cp.size ? -1 : x->cp.size > y->cp.size;
}

/* Every checkpoint against the tree and each other: 0 or 1. */
int ctl_ckpts_check(struct ctl_ckpts *s, const struct ctl_tree *t,
		    const struct note_key *k)
{
	struct merkle_range r;
	merkle_hash root;
	char origin[CHECKPOINT_ORIGIN_MAX + 200];
	uint64_t done = 0;
	size_t i;

	snprintf(origin, sizeof(origin), "%s/%s", k->name, t->case_id);
	qsort(s->v, s->n, sizeof(*s->v), ckpts_by_size);
	for (i = 0; i < s->n; i++) {
		const struct ctl_ckpt *c = &s->v[i];

		if (strcmp(c->cp.origin, origin)) {
			snprintf(s->bad, sizeof(s->bad),
				 "%.150s: origin %.150s is not %.150s",
				 c->label, c->cp.origin, origin);
			return 1;
		}
		if (i && c->cp.size == s->v[i - 1].cp.size &&
		    memcmp(c->cp.root, s->v[i - 1].cp.root, MERKLE_HASH)) {
			snprintf(
				s->bad, sizeof(s->bad),
				"%.150s and %.150s are signed for the same %llu rows with different roots (a fork)",
				s->v[i - 1].label, c->label,
				(unsigned long long)c->cp.size);
			return 1;
		}
	}
	merkle_init(&r);
	for (i = 0; i < s->n; i++) {
		const struct ctl_ckpt *c = &s->v[i];

		if (c->cp.size > t->n) {
			snprintf(
				s->bad, sizeof(s->bad),
				"%.150s is signed for %llu rows; the ledger has %llu (truncated)",
				c->label, (unsigned long long)c->cp.size,
				(unsigned long long)t->n);
			return 1;
		}
		while (done < c->cp.size)
			merkle_append_leaf(&r, t->leaves[done++]);
		merkle_root(&r, root);
		if (memcmp(root, c->cp.root, MERKLE_HASH)) {
			snprintf(
				s->bad, sizeof(s->bad),
				"the ledger's first %llu rows do not have the tree root signed in %.150s",
				(unsigned long long)c->cp.size, c->label);
			return 1;
		}
	}
	return 0;
}

void ctl_ckpts_free(struct ctl_ckpts *s)
{
	size_t j;

	for (j = 0; j < s->n; j++)
		free(s->v[j].label);
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

/* What ctl_ckpts_required's walk carries. */
struct ckpts_walk {
	const struct ctl_ckpts *s;
	uint64_t row;	  /* rows seen */
	uint64_t missing; /* the first turn or close row without one */
	const char *what; /* "turn" or "close" */
};

/*
 * One row of a ledger that verified: only its top-level phase is read
 * (the member scanner, no JSON parse: a verify of a large ledger would
 * otherwise parse every row again).
 */
static bool ckpts_walk_row(void *ctx, const char *line, size_t n)
{
	struct ckpts_walk *w = ctx;
	struct ledger_fields f;
	const char *err;
	size_t i;

	w->row++;
	if (ledger_scan_fields(line, n, &f, &err) < 0 || !f.phase.p ||
	    !ratchet_phase_ends_epoch(f.phase.p, f.phase.n))
		return false;
	for (i = 0; i < w->s->n; i++)
		if (w->s->v[i].cp.size == w->row)
			return false;
	w->missing = w->row;
	w->what = ledger_tok_is(&f.phase, "turn") ? "turn" : "close";
	return true; /* stop: found */
}

/*
 * The daemon keeps a signed checkpoint of every turn and of the close
 * of a sealed case (ledgerfs-ledger(5) SIGNED CHECKPOINTS): one missing
 * is checkpoints removed, which would let rows of closed epochs be
 * rewritten unseen.  good_bytes: the rows that verified.  0, 1 (bad, in
 * s->bad) or 2.
 */
int ctl_ckpts_required(struct ctl_ckpts *s, int fd, long long good_bytes)
{
	struct ckpts_walk w = {.s = s};
	struct lf_why why = {{0}};
	enum lf_err e;

	e = merkle_each_line(fd, good_bytes, ckpts_walk_row, &w, &why);
	if (w.missing) {
		snprintf(
			s->bad, sizeof(s->bad),
			"no signed checkpoint of the %s at row %llu: the checkpoints were removed",
			w.what, (unsigned long long)w.missing);
		return 1;
	}
	return e == LF_OK ? 0 : 2;
}

int ctl_verify_own_checkpoints(const char *dir, const char *text, size_t len,
			       const char *label, int fd,
			       const char *host_key_path, struct ctl_verdict *v)
{
	struct ctl_ckpts s = {0};
	struct ctl_tree t = {0};
	struct note_key k;
	int rc;

	v->checkpoints = -1;
	if (v->status != 0)
		return v->status;
	if (ctl_tree_own_key("verify", host_key_path, &k)) {
		fputs("ledgerctl verify: signed checkpoints not checked (no signing key beside the host key)\n",
		      stderr);
		return 0;
	}
	/* None at all is checked too: a sealed case's turns need theirs. */
	rc = dir	   ? ctl_ckpts_add_folder(&s, dir, &k)
	     : text && len ? ctl_ckpts_add_text(&s, label, text, len, &k)
			   : 0;
	if (rc == 0 && s.n)
		rc = ctl_tree_load_verified("verify", fd, v->rows,
					    v->good_bytes, &t);
	if (rc == 0 && s.n)
		rc = ctl_ckpts_check(&s, &t, &k);
	if (rc == 0 && v->sealed)
		rc = ctl_ckpts_required(&s, fd, v->good_bytes);
	if (rc == 0) {
		v->checkpoints = (long long)s.n;
		v->checkpoint_rows = s.n ? s.v[s.n - 1].cp.size : 0;
	} else {
		v->status = rc;
		v->verdict = rc == 1 ? "bad" : "error";
		snprintf(v->reason, sizeof(v->reason), "%s",
			 s.bad[0] ? s.bad : "cannot read the checkpoints");
	}
	ctl_ckpts_free(&s);
	ctl_tree_free(&t);
	return v->status;
}
