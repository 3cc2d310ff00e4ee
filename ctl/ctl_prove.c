/* SPDX-License-Identifier: MIT */
/*
 * ctl_prove.c - `ledgerctl prove CASE ROW` and `ledgerctl consistency OLD
 * NEW` (ledgerctl(1) PUBLIC VERIFICATION): Merkle proofs against signed
 * checkpoints, in the formats of ledgerfs-ledger(5) PROOFS.  The prover
 * signs nothing and needs no key: a proof only helps a verifier who
 * checks it against a checkpoint whose signature it trusts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_tree.h"
#include "optarg.h"

#define PROVE_USAGE                                                            \
	"usage: ledgerctl prove CASE|FOLDER ROW [--checkpoint FILE]\n"
#define CONSISTENCY_USAGE                                                      \
	"usage: ledgerctl consistency OLD NEW [--ledger LEDGER]\n"

/* The case folder: a path as given, else the mount's cases/CASE. */
static void prove_folder(const char *c, char *out, size_t n)
{
	const char *mount = getenv("LEDGERFS_MOUNT");

	if (strchr(c, '/') || !mount || !*mount)
		snprintf(out, n, "%s", c);
	else
		snprintf(out, n, "%s/cases/%s", mount, c);
}

/* Read and parse (signature unchecked) a checkpoint file.  malloc'd text. */
static char *prove_read_ckpt(const char *cmd, const char *path,
			     struct checkpoint *cp)
{
	struct lf_why why = {{0}};
	size_t len = 0;
	char *text = ctl_tree_slurp(path, CHECKPOINT_MAX, &len);

	if (!text) {
		fprintf(stderr, "ledgerctl %s: %s: %s\n", cmd, path,
			strerror(errno));
		return NULL;
	}
	if (checkpoint_open(text, len, NULL, cp, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl %s: %s: %s\n", cmd, path, why.msg);
		free(text);
		return NULL;
	}
	return text;
}

/* Does the ledger's tree at cp's size have cp's root?  0 yes, 1 no. */
static int prove_matches(const char *cmd, const struct ctl_tree *t,
			 const struct checkpoint *cp, const char *label)
{
	merkle_hash root;

	if (cp->size > t->n) {
		printf("bad: %s is signed for %llu rows; the ledger has %llu (truncated)\n",
		       label, (unsigned long long)cp->size,
		       (unsigned long long)t->n);
		return 1;
	}
	merkle_root_of(t->leaves, cp->size, root);
	if (memcmp(root, cp->root, MERKLE_HASH)) {
		printf("bad: the ledger's first %llu rows do not have the tree root of %s\n",
		       (unsigned long long)cp->size, label);
		return 1;
	}
	(void)cmd;
	return 0;
}

static void prove_hashes(const merkle_hash *p, int n)
{
	char b64[48];
	int i;

	for (i = 0; i < n; i++) {
		checkpoint_b64(p[i], MERKLE_HASH, b64);
		printf("%s\n", b64);
	}
}

int ctl_prove_main(int argc, char **argv)
{
	const char *c = NULL, *row_arg = NULL, *ckpt = NULL;
	char folder[4096], path[4200], *text = NULL, *end;
	merkle_hash proof[MERKLE_MAX_PROOF];
	struct ctl_tree t = {0};
	struct checkpoint cp;
	unsigned long long row;
	int i, fd, rc = 2, n;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--checkpoint", &ckpt))
			continue;
		else if (argv[i][0] == '-' && argv[i][1])
			break;
		else if (!c)
			c = argv[i];
		else if (!row_arg)
			row_arg = argv[i];
		else
			break;
	}
	if (i < argc || !c || !row_arg) {
		fputs(PROVE_USAGE, stderr);
		return 2;
	}
	errno = 0;
	row = strtoull(row_arg, &end, 10);
	if (errno || *end || row == 0 || row_arg[0] == '-') {
		fprintf(stderr,
			"ledgerctl prove: ROW is a row number from 1\n");
		return 2;
	}
	prove_folder(c, folder, sizeof(folder));
	if (!ckpt) {
		snprintf(path, sizeof(path), "%s/checkpoint", folder);
		ckpt = path;
	}
	text = prove_read_ckpt("prove", ckpt, &cp);
	if (!text)
		return 2;
	fd = ctl_tree_open("prove", folder);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl prove: %s: %s\n", folder,
			strerror(errno));
		goto out;
	}
	/* Its rows are checked against its root below (ctl_tree_load). */
	rc = ctl_tree_load("prove", fd, cp.size, &t);
	close(fd);
	if (rc)
		goto out;
	rc = prove_matches("prove", &t, &cp, ckpt);
	if (rc)
		goto out;
	if (row > cp.size) {
		printf("bad: row %llu is past the checkpoint's %llu rows\n",
		       row, (unsigned long long)cp.size);
		rc = 1;
		goto out;
	}
	n = merkle_inclusion_proof(t.leaves, cp.size, row - 1, proof);
	printf("c2sp.org/tlog-proof@v1\nindex %llu\n", row - 1);
	prove_hashes(proof, n);
	printf("\n%s", text);
	rc = 0;
out:
	ctl_tree_free(&t);
	free(text);
	return rc;
}

int ctl_consistency_main(int argc, char **argv)
{
	const char *old_path = NULL, *new_path = NULL, *ledger = NULL;
	char *old_text = NULL, *new_text = NULL, folder[4096];
	merkle_hash proof[MERKLE_MAX_PROOF];
	struct checkpoint a, b;
	struct ctl_tree t = {0};
	const char *slash;
	int i, fd, rc = 2, n;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--ledger", &ledger))
			continue;
		else if (argv[i][0] == '-' && argv[i][1])
			break;
		else if (!old_path)
			old_path = argv[i];
		else if (!new_path)
			new_path = argv[i];
		else
			break;
	}
	if (i < argc || !old_path || !new_path) {
		fputs(CONSISTENCY_USAGE, stderr);
		return 2;
	}
	old_text = prove_read_ckpt("consistency", old_path, &a);
	new_text =
		old_text ? prove_read_ckpt("consistency", new_path, &b) : NULL;
	if (!new_text)
		goto out;
	if (strcmp(a.origin, b.origin)) {
		printf("bad: OLD and NEW have different origins\n");
		rc = 1;
		goto out;
	}
	if (a.size > b.size) {
		printf("bad: OLD (%llu rows) is larger than NEW (%llu rows)\n",
		       (unsigned long long)a.size, (unsigned long long)b.size);
		rc = 1;
		goto out;
	}
	if (!ledger) {
		/* The origin is ledgerfs/<fingerprint>/<case>. */
		slash = strrchr(a.origin, '/');
		prove_folder(slash ? slash + 1 : a.origin, folder,
			     sizeof(folder));
		ledger = folder;
	}
	fd = ctl_tree_open("consistency", ledger);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl consistency: %s: %s\n", ledger,
			strerror(errno));
		goto out;
	}
	rc = ctl_tree_load("consistency", fd, b.size, &t);
	close(fd);
	if (rc)
		goto out;
	rc = prove_matches("consistency", &t, &a, old_path);
	if (!rc)
		rc = prove_matches("consistency", &t, &b, new_path);
	if (rc)
		goto out;
	n = merkle_consistency_proof(t.leaves, a.size, b.size, proof);
	printf("ledgerfs/consistency-proof@v1\nold %llu\nnew %llu\n",
	       (unsigned long long)a.size, (unsigned long long)b.size);
	prove_hashes(proof, n);
	rc = 0;
out:
	ctl_tree_free(&t);
	free(old_text);
	free(new_text);
	return rc;
}
