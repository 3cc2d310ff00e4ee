/* SPDX-License-Identifier: MIT */
/*
 * ctl_verify_pub.c - `ledgerctl verify --pubkey=VKEY LEDGER [CHECKPOINT
 * ...]` (ledgerctl(1) PUBLIC VERIFICATION): chain, tree and checkpoint
 * signatures checked with the verifier key alone, of a ledger, a case
 * folder or an export (FILE.tar).  No secret is used, so
 * MACs are not checked, and it says so.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_tree.h"
#include "ctl_verify.h"

#define VERIFY_PUB_USAGE                                                       \
	"usage: ledgerctl verify --pubkey=VKEY LEDGER [CHECKPOINT ...]\n"
#define VERIFY_PUB_MAX 100000 /* checkpoints read from one folder */

struct pub_ckpt {
	char *label;
	struct checkpoint cp;
};

struct pub_set {
	struct pub_ckpt *v;
	size_t n, cap;
};

/* Parse and check the signature of one checkpoint: 0, 1 or 2. */
static int pub_add_one(struct pub_set *s, const char *label, const char *text,
		       size_t len, const struct note_key *k)
{
	struct lf_why why = {{0}};
	struct checkpoint cp;

	if (checkpoint_open(text, len, k, &cp, &why) != LF_OK) {
		printf("bad: %s: %s\n", label, why.msg);
		return 1;
	}
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 8;
		struct pub_ckpt *p;

		if (nc > VERIFY_PUB_MAX ||
		    !(p = realloc(s->v, nc * sizeof(*p))))
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
static int pub_add_text(struct pub_set *s, const char *name, const char *text,
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
			rc = pub_add_one(s, label, start, (size_t)(p - start),
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
		rc = pub_add_one(s, label, start, (size_t)(end - start), k);
	}
	return rc;
}

/* A file of checkpoints (pub_add_text).  0, 1 or 2. */
static int pub_add(struct pub_set *s, const char *path,
		   const struct note_key *k)
{
	size_t len = 0, max = (size_t)CHECKPOINT_MAX * VERIFY_PUB_MAX;
	char *text = ctl_tree_slurp(path, max, &len);
	int rc;

	if (!text) {
		fprintf(stderr, "ledgerctl verify: %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	rc = pub_add_text(s, path, text, len, k);
	free(text);
	return rc;
}

/* A backing case folder's `checkpoint` and checkpoints/ files: 0, 1, 2. */
static int pub_add_folder(struct pub_set *s, const char *dir,
			  const struct note_key *k)
{
	char path[4200];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/checkpoint", dir);
	if (access(path, F_OK) == 0)
		rc = pub_add(s, path, k);
	snprintf(path, sizeof(path), "%s/checkpoints", dir);
	/* An export holds them in one file, a backing folder one a file. */
	if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return pub_add(s, path, k);
	d = opendir(path);
	while (!rc && d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/checkpoints/%s", dir,
			 de->d_name);
		rc = pub_add(s, path, k);
	}
	if (d)
		closedir(d);
	return rc;
}

static int pub_by_size(const void *a, const void *b)
{
	const struct pub_ckpt *x = a, *y = b;

	return x->cp.size < y->cp.size ? -1 : x->cp.size > y->cp.size;
}

/* Every checkpoint against the tree and each other: 0 or 1. */
static int pub_check(struct pub_set *s, const struct ctl_tree *t,
		     const struct note_key *k)
{
	struct merkle_range r;
	merkle_hash root;
	char origin[CHECKPOINT_ORIGIN_MAX + 200];
	uint64_t done = 0;
	size_t i;

	snprintf(origin, sizeof(origin), "%s/%s", k->name, t->case_id);
	qsort(s->v, s->n, sizeof(*s->v), pub_by_size);
	for (i = 0; i < s->n; i++) {
		const struct pub_ckpt *c = &s->v[i];

		if (strcmp(c->cp.origin, origin)) {
			printf("bad: %s: origin %s is not %s\n", c->label,
			       c->cp.origin, origin);
			return 1;
		}
		if (i && c->cp.size == s->v[i - 1].cp.size &&
		    memcmp(c->cp.root, s->v[i - 1].cp.root, MERKLE_HASH)) {
			printf("bad: %s and %s are signed for the same %llu rows with different roots (a fork)\n",
			       s->v[i - 1].label, c->label,
			       (unsigned long long)c->cp.size);
			return 1;
		}
	}
	merkle_init(&r);
	for (i = 0; i < s->n; i++) {
		const struct pub_ckpt *c = &s->v[i];

		if (c->cp.size > t->n) {
			printf("bad: %s is signed for %llu rows; the ledger has %llu (truncated)\n",
			       c->label, (unsigned long long)c->cp.size,
			       (unsigned long long)t->n);
			return 1;
		}
		while (done < c->cp.size)
			merkle_append_leaf(&r, t->leaves[done++]);
		merkle_root(&r, root);
		if (memcmp(root, c->cp.root, MERKLE_HASH)) {
			printf("bad: the ledger's first %llu rows do not have the tree root signed in %s\n",
			       (unsigned long long)c->cp.size, c->label);
			return 1;
		}
	}
	return 0;
}

int ctl_verify_pub_main(int argc, char **argv)
{
	const char *vkey = NULL, *ledger = NULL;
	struct pub_set s = {0};
	struct ctl_tree t = {0};
	struct note_key k;
	struct stat st;
	merkle_hash root;
	char b64[48], label[4200], *tar_ckpts = NULL;
	int i, fd = -1, rc = 2;
	size_t j, tar_len = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--pubkey") && i + 1 < argc)
			vkey = argv[++i];
		else if (!strncmp(a, "--pubkey=", 9))
			vkey = a + 9;
		else if (a[0] == '-' && a[1])
			break;
		else if (!ledger)
			ledger = a;
	}
	if (i < argc || !vkey || !ledger) {
		if (i < argc)
			fprintf(stderr,
				"ledgerctl verify: %s does not go with --pubkey\n",
				argv[i]);
		fputs(VERIFY_PUB_USAGE, stderr);
		return 2;
	}
	if (ctl_tree_vkey("verify", vkey, &k))
		return 2;
	fputs("ledgerctl verify: MACs not checked (--pubkey: public verification uses no secret)\n",
	      stderr);
	/* An export: its members, once they match its SHA256SUMS. */
	if (ctl_is_tar(ledger)) {
		rc = ctl_export_public(ledger, &fd, &tar_ckpts, &tar_len);
		if (rc)
			goto out;
	} else {
		fd = ctl_tree_open("verify", ledger);
	}
	if (fd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n",
			ledger, strerror(errno));
		rc = 2;
		goto out;
	}
	rc = ctl_tree_load("verify", fd, &t);
	close(fd);
	if (rc)
		goto out;
	/* Checkpoints named after LEDGER, else the folder's own. */
	for (i = 1; i < argc && !rc; i++) {
		if (!strcmp(argv[i], "--pubkey")) {
			i++;
			continue;
		}
		if (argv[i][0] == '-' || argv[i] == ledger)
			continue;
		rc = pub_add(&s, argv[i], &k);
	}
	if (!rc && s.n == 0 && tar_ckpts) {
		snprintf(label, sizeof(label), "%s:checkpoints", ledger);
		rc = pub_add_text(&s, label, tar_ckpts, tar_len, &k);
	}
	if (!rc && s.n == 0 && stat(ledger, &st) == 0 && S_ISDIR(st.st_mode))
		rc = pub_add_folder(&s, ledger, &k);
	if (rc)
		goto out;
	if (s.n == 0) {
		printf("bad: no signed checkpoint to check the tree against\n");
		rc = 1;
		goto out;
	}
	rc = pub_check(&s, &t, &k);
	if (rc)
		goto out;
	merkle_root_of(t.leaves, t.n, root);
	checkpoint_b64(root, MERKLE_HASH, b64);
	printf("ok: %llu rows, tree root %s, %zu checkpoint%s signed by %s (latest at %llu rows), MACs not checked\n",
	       (unsigned long long)t.n, b64, s.n, s.n == 1 ? "" : "s", k.name,
	       (unsigned long long)s.v[s.n - 1].cp.size);
out:
	free(tar_ckpts);
	for (j = 0; j < s.n; j++)
		free(s.v[j].label);
	free(s.v);
	ctl_tree_free(&t);
	return rc;
}
