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
#include "ctl_checkpoints.h"
#include "ctl_tree.h"
#include "ctl_verify.h"
#include "optarg.h"

#define VERIFY_PUB_USAGE                                                       \
	"usage: ledgerctl verify --pubkey=VKEY LEDGER [CHECKPOINT ...]\n"

/*
 * Every kept checkpoint a sealed case's turns and close need (verify
 * --key holds it too).  A live case signs the one of a turn or of its
 * close right after the row is flushed, so checkpoints read before the
 * ledger may lack one of a row the ledger read holds: a folder's are then
 * read again for a while, those within the rows read checked against the
 * tree too.
 */
static int verify_pub_required(struct ctl_ckpts *s, const char *folder, int fd,
			       const struct ctl_tree *t,
			       const struct note_key *k)
{
	struct ctl_ckpts late = {0};
	size_t i, n;
	int rc = ctl_ckpts_required(s, fd, t->good_bytes), tries;

	/* The daemon signs right after the row's flush: a second at most. */
	for (tries = 0; rc == 1 && folder && tries < 20; tries++) {
		usleep(50000);
		rc = ctl_ckpts_add_folder(&late, folder, k);
		for (i = n = 0; !rc && i < late.n; i++)
			if (late.v[i].cp.size <= t->n)
				late.v[n++] = late.v[i];
			else
				free(late.v[i].label);
		if (!rc) {
			late.n = n;
			rc = ctl_ckpts_check(&late, t, k);
		}
		if (!rc)
			rc = ctl_ckpts_required(&late, fd, t->good_bytes);
		if (rc == 1 && late.bad[0])
			memcpy(s->bad, late.bad, sizeof(s->bad));
		ctl_ckpts_free(&late);
	}
	return rc;
}

int ctl_verify_pub_main(int argc, char **argv)
{
	const char *vkey = NULL, *ledger = NULL, *folder = NULL;
	struct ctl_ckpts s = {0};
	struct ctl_tree t = {0};
	struct note_key k;
	struct stat st;
	merkle_hash root;
	char b64[48], label[4200], *tar_ckpts = NULL;
	int i, fd = -1, rc = 2;
	size_t j, tar_len = 0;
	unsigned long long signed_rows = 0;
	bool is_tar, own;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opt_value(argc, argv, &i, "--pubkey", &vkey))
			continue;
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
	is_tar = ctl_is_tar(ledger);
	rc = is_tar ? ctl_export_public(ledger, &fd, &tar_ckpts, &tar_len) : 0;
	if (rc)
		goto out;
	/*
	 * The checkpoints first, then the ledger: a live case signs on
	 * while it is read, and a checkpoint read before the ledger never
	 * covers rows the ledger read after it lacks.
	 * Checkpoints named after LEDGER, else the folder's own.
	 */
	for (i = 1; i < argc && !rc; i++) {
		if (!strcmp(argv[i], "--pubkey")) {
			i++;
			continue;
		}
		if (argv[i][0] == '-' || argv[i] == ledger)
			continue;
		rc = ctl_ckpts_add(&s, argv[i], &k);
	}
	/* None given: the case's own, every one it keeps (below). */
	own = s.n == 0;
	if (!rc && s.n == 0 && tar_ckpts) {
		snprintf(label, sizeof(label), "%s:checkpoints", ledger);
		rc = ctl_ckpts_add_text(&s, label, tar_ckpts, tar_len, &k);
	}
	if (!rc && s.n == 0 && stat(ledger, &st) == 0 && S_ISDIR(st.st_mode)) {
		folder = ledger;
		rc = ctl_ckpts_add_folder(&s, ledger, &k);
		/* A mounted case shows its latest checkpoint alone. */
		snprintf(label, sizeof(label), "%s/checkpoints", ledger);
		if (stat(label, &st) != 0)
			own = false;
	}
	if (rc)
		goto out;
	if (!is_tar)
		fd = ctl_tree_open("verify", ledger);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n",
			ledger, strerror(errno));
		rc = 2;
		goto out;
	}
	/*
	 * Each checkpoint's signature verified as it was read: the rows the
	 * largest covers are held by its root, checked against the tree
	 * below, so only the rows after them need their canonical form.
	 */
	for (j = 0; j < s.n; j++)
		if (s.v[j].cp.size > signed_rows)
			signed_rows = s.v[j].cp.size;
	rc = ctl_tree_load("verify", fd, signed_rows, &t);
	if (rc)
		goto out;
	if (s.n == 0) {
		printf("bad: no signed checkpoint to check the tree against\n");
		rc = 1;
		goto out;
	}
	rc = ctl_ckpts_check(&s, &t, &k);
	/*
	 * A folder's or an export's checkpoints are all the daemon kept; a
	 * sealed case lacking one of a turn or of its close had them
	 * removed.  Checkpoints given by name may be any of them.
	 */
	if (!rc && own && t.sealed)
		rc = verify_pub_required(&s, folder, fd, &t, &k);
	if (rc)
		goto out;
	merkle_root_of(t.leaves, t.n, root);
	checkpoint_b64(root, MERKLE_HASH, b64);
	printf("ok: %llu rows, tree root %s, %zu checkpoint%s signed by %s (latest at %llu rows), MACs not checked\n",
	       (unsigned long long)t.n, b64, s.n, s.n == 1 ? "" : "s", k.name,
	       (unsigned long long)s.v[s.n - 1].cp.size);
out:
	if (fd >= 0)
		close(fd);
	if (rc == 1 && s.bad[0])
		printf("bad: %s\n", s.bad);
	free(tar_ckpts);
	ctl_ckpts_free(&s);
	ctl_tree_free(&t);
	return rc;
}
