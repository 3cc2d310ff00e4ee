/* SPDX-License-Identifier: MIT */
/*
 * ctl_export.c - `ledgerctl export CASE FILE.tar` and `ledgerctl verify
 * FILE.tar` (ledgerctl(1) EXPORT): one case handed on as a plain ustar
 * archive a reader can open with tar(1) and check with sha256sum(1) or
 * with ledgerctl alone.  The archive is written here, in ustar, so no
 * archive library is needed and the reader below takes only this shape.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_export_int.h"
#include "ctl_tree.h"
#include "ctl_verify.h"
#include "evidence.h"
#include "ledger.h"
#include "optarg.h"
#include "request.h"

#define EXPORT_USAGE                                                           \
	"usage: ledgerctl export CASE FILE.tar [--backing DIR] [--key FILE]\n"

/* Whole file at dirfd/path into a new buffer, at most max bytes. */
static char *slurp_at(int dirfd, const char *path, size_t max, size_t *len)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t cap = 65536, n = 0;
	char *buf = NULL, *t;
	ssize_t r;

	if (fd < 0)
		return NULL;
	for (;;) {
		if (n + 1 >= cap || !buf) {
			if (buf)
				cap *= 2;
			if (cap > max + 1)
				cap = max + 1;
			t = realloc(buf, cap);
			if (!t)
				goto fail;
			buf = t;
		}
		if (n + 1 >= cap)
			goto fail; /* larger than max */
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

/* dirfd/path as member name.  0, or -1 when it cannot be read. */
static int member_slurp(struct export *x, const char *name, int dirfd,
			const char *path)
{
	size_t len = 0;
	char *data = slurp_at(dirfd, path, TAR_MAX_DOC, &len);

	return member_add(x, name, data, len);
}

static char *json_text(json_t *o, size_t *len)
{
	char *s = o ? json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	char *t = s ? realloc(s, strlen(s) + 2) : NULL;

	json_decref(o);
	if (!t) {
		free(s);
		return NULL;
	}
	strcat(t, "\n");
	*len = strlen(t);
	return t;
}

/*
 * evidence.json: the events byte for byte as `ledgerctl evidence` prints
 * them (ledgerctl(1) export), written an event at a time, so a large
 * case's are never all parsed at once.
 */
static char *evidence_text(struct evidence_folder *rows, size_t *len)
{
	struct lf_why why = {{0}};
	char *out = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&out, &cap);

	if (!f)
		return NULL;
	if (evidence_folder_print(rows, 0, f, &why) != LF_OK) {
		fclose(f);
		free(out);
		return NULL;
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	*len = cap;
	return out;
}

/* The SHA256SUMS text of every member so far (sha256sum -c reads it). */
static char *sums_text(const struct export *x, size_t *len)
{
	char hex[CHAIN_HEX_LEN + 1], *out = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&out, &cap);
	int i;

	if (!f)
		return NULL;
	for (i = 0; i < x->n; i++) {
		chain_sha256_hex(x->m[i].data, x->m[i].len, hex);
		fprintf(f, "%s  %s\n", hex, x->m[i].name);
	}
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	*len = strlen(out);
	return out;
}

/* ---- ustar ---- */

static void octal(char *field, size_t width, unsigned long long v)
{
	snprintf(field, width, "%0*llo", (int)width - 1, v);
}

static int tar_header(FILE *f, const char *prefix, const char *name,
		      size_t size, time_t mtime)
{
	unsigned char h[TAR_BLOCK];
	unsigned sum = 0;
	size_t i;

	memset(h, 0, sizeof(h));
	snprintf((char *)h, 100, "%s", name);
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (unsigned long long)mtime);
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	snprintf((char *)h + 345, 155, "%s", prefix);
	for (i = 0; i < sizeof(h); i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return fwrite(h, 1, sizeof(h), f) == sizeof(h) ? 0 : -1;
}

static int tar_write(const char *path, const char *prefix,
		     const struct export *x)
{
	static const char zero[TAR_BLOCK * 2];
	time_t now = time(NULL);
	char tmp[4096];
	FILE *f;
	int i, fd, rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (i = 0; i < x->n; i++) {
		size_t pad = (TAR_BLOCK - x->m[i].len % TAR_BLOCK) % TAR_BLOCK;

		if (tar_header(f, prefix, x->m[i].name, x->m[i].len, now) ||
		    fwrite(x->m[i].data, 1, x->m[i].len, f) != x->m[i].len ||
		    fwrite(zero, 1, pad, f) != pad)
			goto out;
	}
	if (fwrite(zero, 1, sizeof(zero), f) != sizeof(zero) || fflush(f) ||
	    fsync(fileno(f)))
		goto out;
	rc = 0;
out:
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -1;
	if (rc)
		unlink(tmp);
	return rc;
}

/* ---- export ---- */

/*
 * The snapshot does not verify: say why (a bad verdict only on the last
 * try, say_bad; an error always).  Returns the verdict's status.
 */
static int export_not_verified(const char *name, const struct ctl_verdict *v,
			       bool say_bad)
{
	if (v->verdict && !strcmp(v->verdict, "wrong_key"))
		fprintf(stderr, "ledgerctl export: %s: wrong key: %s\n", name,
			v->reason);
	else if (say_bad || v->status != 1)
		fprintf(stderr,
			"ledgerctl export: %s: the ledger does not verify: %s\n",
			name, v->reason);
	return v->status;
}

/* A checkpoint's size line (its second): rows it covers, 0 if none. */
static unsigned long long export_ckpt_rows(const char *text)
{
	const char *nl = strchr(text, '\n');

	return nl ? strtoull(nl + 1, NULL, 10) : 0;
}

/*
 * Verify the snapshot (with the key when there is one), then gather the
 * members.  0, 1 (the ledger does not verify) or 2; says why.
 */
static int export_gather(const char *mount, const char *backing,
			 const char *key_path, const char *name,
			 struct export *x, bool say_bad)
{
	char dir[4096], hex[CHAIN_HEX_LEN + 1];
	unsigned char key[CHAIN_KEY_BYTES];
	const unsigned char *kp = NULL;
	struct ctl_verdict v;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	struct evidence_folder *rows = evidence_folder_new();
	int dirfd, bfd = -1, mfd = -1, rc = 2, kr;
	size_t len = 0, l1 = 0, l2 = 0;
	char *text, *one = NULL, *many = NULL;

	/* The case in the view, then in the backing folder: each said apart. */
	snprintf(dir, sizeof(dir), "%s/cases/%s", mount, name);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr,
			"ledgerctl export: %s: %s (the case is read through "
			"the view mounted at %s)\n",
			dir, strerror(errno), mount);
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s/cases/%s", backing, name);
	bfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0) {
		fprintf(stderr,
			"ledgerctl export: %s: %s (--backing names the "
			"daemon's backing folder)\n",
			dir, strerror(errno));
		goto out;
	}
	kr = ctl_read_key("export", key_path ? key_path : CTL_DEFAULT_KEY, key);
	if (kr < 0 || (kr == 1 && key_path)) {
		if (kr == 1)
			fprintf(stderr,
				"ledgerctl export: cannot read key %s: %s\n",
				key_path, strerror(errno));
		goto out;
	}
	kp = kr == 0 ? key : NULL;
	mfd = ctl_snapshot_ledger(dirfd);
	if (mfd < 0) {
		fprintf(stderr, "ledgerctl export: cannot read %s/ledger\n",
			mount);
		goto out;
	}
	if (ctl_verify_check(mfd, kp, NULL, &v) != 0) {
		rc = export_not_verified(name, &v, say_bad);
		goto out;
	}
	/* Folded as they are read: a large case's rows are never all held. */
	if (!rows || ledger_verify_fd(mfd, NULL, NULL, evidence_folder_cb, rows,
				      &rep, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl export: %s: %s\n", name,
			evidence_folder_why(rows) ? evidence_folder_why(rows)
			: rows			  ? why.msg
						  : "out of memory");
		rc = 1;
		goto out;
	}
	text = malloc((size_t)rep.good_bytes + 1);
	if (!text ||
	    pread(mfd, text, (size_t)rep.good_bytes, 0) != rep.good_bytes) {
		free(text);
		goto out;
	}
	chain_sha256_hex(text, (size_t)rep.good_bytes, hex);
	if (member_add(x, "ledger.jsonl", text, (size_t)rep.good_bytes) ||
	    member_slurp(x, "case.json", bfd, "case.json") ||
	    member_slurp(x, "status.json", dirfd, "status") ||
	    member_slurp(x, "policy.json", dirfd, "policy")) {
		fprintf(stderr, "ledgerctl export: %s: cannot read %s\n", name,
			x->n < 2 ? "the ledger"
				 : "case.json, status or policy");
		goto out;
	}
	text = slurp_at(dirfd, "mocks", TAR_MAX_DOC, &len);
	if (text && len)
		member_add(x, "mocks.json", text, len);
	else
		free(text);
	/* The tools file given at open, as the target saw it. */
	text = slurp_at(dirfd, "tools", TAR_MAX_DOC, &len);
	if (text && len)
		member_add(x, "tools.json", text, len);
	else
		free(text);
	/*
	 * Signed checkpoints (ledgerfs-ledger(5) SIGNED CHECKPOINTS),
	 * checked against the ledger with the host key as verify --key
	 * checks them, so the report inside counts them.  Read after the
	 * snapshot, those of more rows than it are of rows a live case
	 * appended since: they belong to a later export, not this one.
	 */
	one = slurp_at(bfd, "checkpoint", TAR_MAX_DOC, &l1);
	if (one && export_ckpt_rows(one) > v.rows) {
		free(one);
		one = NULL;
	}
	many = ctl_tree_kept_checkpoints(bfd, v.rows ? v.rows : 1, &l2);
	{
		char *both = malloc(l1 + l2 + 1);

		if (both && kp) {
			if (one)
				memcpy(both, one, l1);
			if (many)
				memcpy(both + (one ? l1 : 0), many, l2);
			ctl_verify_own_checkpoints(
				NULL, both, (one ? l1 : 0) + (many ? l2 : 0),
				"checkpoints", mfd,
				key_path ? key_path : CTL_DEFAULT_KEY, &v);
		}
		free(both);
		if (one)
			member_add(x, "checkpoint", one, l1);
		if (many)
			member_add(x, "checkpoints", many, l2);
		one = many = NULL;
		if (v.status != 0) {
			rc = export_not_verified(name, &v, say_bad);
			goto out;
		}
	}
	text = evidence_text(rows, &len);
	if (member_add(x, "evidence.json", text, len))
		goto out;
	text = json_text(
		ctl_verdict_json(&v, "ledger.jsonl",
				 kp ? (key_path ? key_path : CTL_DEFAULT_KEY)
				    : NULL,
				 kp ? (key_path ? "given" : "default") : NULL),
		&len);
	if (member_add(x, "verify.json", text, len))
		goto out;
	rc = 0;
out:
	free(one);
	free(many);
	explicit_bzero(key, sizeof(key));
	evidence_folder_free(rows);
	if (mfd >= 0)
		close(mfd);
	if (dirfd >= 0)
		close(dirfd);
	if (bfd >= 0)
		close(bfd);
	return rc;
}

int ctl_export_main(int argc, char **argv)
{
	const char *name = NULL, *out = NULL, *key_path = NULL;
	const char *backing = CTL_DEFAULT_BACKING, *mount;
	struct export x = {0};
	size_t len = 0;
	int i, rc, tries;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (opt_value(argc, argv, &i, "--key", &key_path) ||
		    opt_value(argc, argv, &i, "--backing", &backing))
			continue;
		else if (a[0] != '-' && !name)
			name = a;
		else if (a[0] != '-' && !out)
			out = a;
		else {
			fputs(EXPORT_USAGE, stderr);
			return 2;
		}
	}
	if (!name || !out) {
		fputs(EXPORT_USAGE, stderr);
		return 2;
	}
	if (!request_valid_id(name, strlen(name))) {
		fprintf(stderr, "ledgerctl export: bad case name '%s'\n", name);
		return 2;
	}
	mount = getenv("LEDGERFS_MOUNT");
	if (!mount || !*mount)
		mount = CTL_DEFAULT_MOUNT;
	/*
	 * A live case's turn row can be read a moment before its
	 * checkpoint is written: try again, briefly, before calling the
	 * ledger bad.
	 */
	for (tries = 0; tries < 3; tries++) {
		struct timespec pause = {0, 150 * 1000 * 1000};

		rc = export_gather(mount, backing, key_path, name, &x,
				   tries == 2);
		if (rc != 1)
			break;
		export_free(&x);
		memset(&x, 0, sizeof(x));
		nanosleep(&pause, NULL);
	}
	if (rc == 0) {
		char *sums = sums_text(&x, &len);

		if (member_add(&x, SUMS, sums, len))
			rc = 2;
	}
	if (rc == 0 && tar_write(out, name, &x) < 0) {
		fprintf(stderr, "ledgerctl export: %s: %s\n", out,
			strerror(errno));
		rc = 2;
	}
	if (rc == 0)
		printf("exported %s: %d files to %s\n", name, x.n, out);
	export_free(&x);
	return rc;
}
