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
#include "ctl_tree.h"
#include "ctl_verify.h"
#include "evidence.h"
#include "ledger.h"
#include "request.h"

#define TAR_BLOCK    512
#define TAR_MAX_FILE ((size_t)4 << 30)	/* a ledger under --max-ledger */
#define TAR_MAX_DOC  ((size_t)64 << 20) /* every other member */
#define TAR_MAX_NAME 16			/* members an export holds */
#define SUMS	     "SHA256SUMS"

#define EXPORT_USAGE                                                           \
	"usage: ledgerctl export CASE FILE.tar [--backing DIR] [--key FILE]\n"

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

static int member_add(struct export *x, const char *name, char *data,
		      size_t len)
{
	if (x->n == TAR_MAX_NAME || !data) {
		free(data);
		return -1;
	}
	snprintf(x->m[x->n].name, sizeof(x->m[x->n].name), "%s", name);
	x->m[x->n].data = data;
	x->m[x->n].len = len;
	x->n++;
	return 0;
}

static void export_free(struct export *x)
{
	int i;

	for (i = 0; i < x->n; i++)
		free(x->m[i].data);
	x->n = 0;
}

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

static int collect(void *ctx, const json_t *row, long long off, size_t len)
{
	(void)off;
	(void)len;
	return json_array_append((json_t *)ctx, (json_t *)row) ? 1 : 0;
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
 * Verify the snapshot (with the key when there is one), then gather the
 * members.  0, 1 (the ledger does not verify) or 2; says why.
 */
static int export_gather(const char *mount, const char *backing,
			 const char *key_path, const char *name,
			 struct export *x)
{
	char dir[4096], hex[CHAIN_HEX_LEN + 1];
	unsigned char key[CHAIN_KEY_BYTES];
	const unsigned char *kp = NULL;
	struct ctl_verdict v;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	json_t *rows = json_array(), *ev = NULL;
	int dirfd, bfd, mfd = -1, rc = 2, kr;
	size_t len = 0;
	char *text;

	snprintf(dir, sizeof(dir), "%s/cases/%s", mount, name);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%s/cases/%s", backing, name);
	bfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || bfd < 0) {
		fprintf(stderr,
			"ledgerctl export: no case %s under %s/cases and %s/cases: %s\n",
			name, mount, backing, strerror(errno));
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
		fprintf(stderr,
			"ledgerctl export: %s: the ledger does not verify: %s\n",
			name, v.reason);
		rc = v.status;
		goto out;
	}
	if (ledger_verify_fd(mfd, NULL, NULL, collect, rows, &rep, &why) !=
		    LF_OK ||
	    evidence_fold(rows, 0, &ev, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl export: %s: %s\n", name, why.msg);
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
	/* Signed checkpoints (ledgerfs-ledger(5) SIGNED CHECKPOINTS). */
	text = slurp_at(bfd, "checkpoint", TAR_MAX_DOC, &len);
	if (text)
		member_add(x, "checkpoint", text, len);
	text = ctl_tree_kept_checkpoints(bfd, &len);
	if (text)
		member_add(x, "checkpoints", text, len);
	text = json_text(ev, &len);
	ev = NULL;
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
	ev = NULL;
	rc = 0;
out:
	explicit_bzero(key, sizeof(key));
	json_decref(rows);
	json_decref(ev);
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
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--key") && i + 1 < argc)
			key_path = argv[++i];
		else if (!strncmp(a, "--key=", 6))
			key_path = a + 6;
		else if (!strcmp(a, "--backing") && i + 1 < argc)
			backing = argv[++i];
		else if (!strncmp(a, "--backing=", 10))
			backing = a + 10;
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
	rc = export_gather(mount, backing, key_path, name, &x);
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

/* ---- reading an export back ---- */

bool ctl_is_tar(const char *path)
{
	unsigned char h[TAR_BLOCK];
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool yes = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    pread(fd, h, sizeof(h), 0) == (ssize_t)sizeof(h))
		yes = !memcmp(h + 257, "ustar", 5);
	close(fd);
	return yes;
}

static unsigned long long unoctal(const unsigned char *p, size_t n, int *bad)
{
	unsigned long long v = 0;
	size_t i = 0;

	while (i < n && p[i] == ' ')
		i++;
	for (; i < n && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (unsigned long long)(p[i] - '0');
	if (i < n && p[i] != '\0' && p[i] != ' ')
		*bad = 1;
	return v;
}

static int safe_name(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._:-", *s)))
			return 0;
	return 1;
}

/*
 * Read an export: only plain files in one case folder, names of the safe
 * alphabet, sizes bounded, checksums right.  0, or -1 with why in err.
 */
static int tar_read(FILE *f, struct export *x, char prefix[160], char *err,
		    size_t en)
{
	unsigned char h[TAR_BLOCK];
	char name[101], pre[156];
	int bad = 0, i;

	prefix[0] = '\0';
	for (;;) {
		unsigned long long size, sum, want = 0;
		size_t max, pad;
		char *data;

		if (fread(h, 1, sizeof(h), f) != sizeof(h)) {
			snprintf(err, en,
				 "ends without the end-of-archive blocks");
			return -1;
		}
		for (i = 0; i < TAR_BLOCK && !h[i]; i++)
			;
		if (i == TAR_BLOCK)
			return 0;
		sum = unoctal(h + 148, 8, &bad);
		for (i = 0; i < TAR_BLOCK; i++)
			want += (i >= 148 && i < 156) ? ' ' : h[i];
		size = unoctal(h + 124, 12, &bad);
		memcpy(name, h, 100);
		name[100] = '\0';
		memcpy(pre, h + 345, 155);
		pre[155] = '\0';
		/* tar(1) puts a short path whole in name: CASE/FILE. */
		if (!pre[0] && strchr(name, '/')) {
			char *sl = strchr(name, '/');

			*sl = '\0';
			snprintf(pre, sizeof(pre), "%s", name);
			memmove(name, sl + 1, strlen(sl + 1) + 1);
		}
		if (bad || sum != want || memcmp(h + 257, "ustar", 5)) {
			snprintf(err, en, "a member header is damaged");
			return -1;
		}
		if ((h[156] != '0' && h[156] != '\0') || !safe_name(name) ||
		    !safe_name(pre) || (prefix[0] && strcmp(prefix, pre))) {
			snprintf(
				err, en,
				"member %.100s/%.100s is not a plain file of one case folder",
				pre, name);
			return -1;
		}
		snprintf(prefix, 160, "%s", pre);
		for (i = 0; i < x->n; i++)
			if (!strcmp(x->m[i].name, name)) {
				snprintf(err, en, "member %s appears twice",
					 name);
				return -1;
			}
		max = strcmp(name, "ledger.jsonl") ? TAR_MAX_DOC : TAR_MAX_FILE;
		if (size > max || x->n == TAR_MAX_NAME) {
			snprintf(err, en,
				 "member %s is too large, or too many members",
				 name);
			return -1;
		}
		data = malloc((size_t)size + 1);
		if (!data || fread(data, 1, (size_t)size, f) != size) {
			free(data);
			snprintf(err, en, "member %s is cut short", name);
			return -1;
		}
		data[size] = '\0';
		member_add(x, name, data, (size_t)size);
		pad = (TAR_BLOCK - (size_t)size % TAR_BLOCK) % TAR_BLOCK;
		if (pad && fseek(f, (long)pad, SEEK_CUR) != 0) {
			snprintf(err, en, "member %s is cut short", name);
			return -1;
		}
	}
}

static const struct member *member_get(const struct export *x, const char *n)
{
	int i;

	for (i = 0; i < x->n; i++)
		if (!strcmp(x->m[i].name, n))
			return &x->m[i];
	return NULL;
}

/*
 * Every member against SHA256SUMS, both ways, into files (name ->
 * "ok" | "mismatch" | "unlisted" | "missing").  Returns the bad count.
 */
static int sums_check(const struct export *x, json_t *files)
{
	const struct member *sums = member_get(x, SUMS);
	char hex[CHAIN_HEX_LEN + 1], *line, *save = NULL, *copy;
	int i, nbad = 0;

	for (i = 0; i < x->n; i++)
		if (strcmp(x->m[i].name, SUMS))
			json_object_set_new(files, x->m[i].name,
					    json_string("unlisted"));
	if (!sums)
		return x->n + 1;
	copy = strdup(sums->data);
	for (line = copy ? strtok_r(copy, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		const struct member *m;
		const char *nm = strlen(line) > CHAIN_HEX_LEN + 2
					 ? line + CHAIN_HEX_LEN + 2
					 : "";

		m = safe_name(nm) ? member_get(x, nm) : NULL;
		if (!m) {
			json_object_set_new(files, *nm ? nm : "?",
					    json_string("missing"));
			continue;
		}
		chain_sha256_hex(m->data, m->len, hex);
		json_object_set_new(
			files, nm,
			json_string(strncmp(hex, line, CHAIN_HEX_LEN)
					    ? "mismatch"
					    : "ok"));
	}
	free(copy);
	{
		const char *k;
		json_t *val;

		json_object_foreach(files, k, val) nbad +=
			strcmp(json_string_value(val), "ok") != 0;
	}
	return nbad;
}

int ctl_verify_tar(const char *path, const char *key_path,
		   const char *seal_path, bool json, bool require_mac)
{
	struct export x = {0};
	struct ctl_verdict v = {0};
	struct ratchet_keys seal = {0};
	unsigned char key[CHAIN_KEY_BYTES];
	const struct member *led, *rep;
	char prefix[160], err[300];
	json_t *files = json_object(), *out = NULL, *report = NULL;
	FILE *f = fopen(path, "rb");
	int kr, nbad, mfd = -1, rc = 2;

	if (!f || tar_read(f, &x, prefix, err, sizeof(err)) < 0) {
		fprintf(stderr, "ledgerctl verify: %s: %s\n", path,
			f ? err : strerror(errno));
		goto out;
	}
	kr = ctl_read_key("verify", key_path ? key_path : CTL_DEFAULT_KEY, key);
	if (kr < 0 || (kr == 1 && (key_path || require_mac))) {
		if (kr == 1)
			fprintf(stderr,
				"ledgerctl verify: no key to check MACs with%s\n",
				key_path ? " (cannot read --key)"
					 : " (--require-mac)");
		goto out;
	}
	/* A sealed ledger's MACs: every epoch's with K0 (SEALS). */
	if (seal_path && ctl_seal_read_k0(seal_path, &seal) != 0)
		goto out;
	nbad = sums_check(&x, files);
	led = member_get(&x, "ledger.jsonl");
	rep = member_get(&x, "verify.json");
	mfd = memfd_create("ledger", MFD_CLOEXEC);
	if (!led || mfd < 0 ||
	    write(mfd, led->data, led->len) != (ssize_t)led->len) {
		fprintf(stderr, "ledgerctl verify: %s: no ledger.jsonl in it\n",
			path);
		goto out;
	}
	ctl_verify_check_sealed(mfd, kr == 0 ? key : NULL, &seal, NULL, &v);
	report = rep ? json_loads(rep->data, 0, NULL) : NULL;
	/* The report inside must describe this very ledger. */
	if (v.status == 0 &&
	    (!report ||
	     json_integer_value(json_object_get(report, "rows")) !=
		     (json_int_t)v.rows ||
	     !json_string_value(json_object_get(report, "head")) ||
	     strcmp(json_string_value(json_object_get(report, "head")),
		    v.head))) {
		v.status = 1;
		v.verdict = "bad";
		snprintf(v.reason, sizeof(v.reason),
			 "verify.json does not describe ledger.jsonl");
	}
	rc = v.status ? v.status : (nbad ? 1 : 0);
	if (json) {
		out = json_pack(
			"{s:s, s:s, s:s, s:o, s:o}", "archive", path, "case",
			prefix, "verdict", rc == 0 ? "ok" : "bad", "files",
			files, "ledger",
			ctl_verdict_json(
				&v, "ledger.jsonl",
				kr == 0 ? (key_path ? key_path
						    : CTL_DEFAULT_KEY)
					: NULL,
				kr == 0 ? (key_path ? "given" : "default")
					: NULL));
		files = NULL;
		if (out)
			json_dumpf(out, stdout,
				   JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
		goto out;
	}
	if (nbad) {
		const char *k;
		json_t *val;

		json_object_foreach(
			files, k, val) if (strcmp(json_string_value(val), "ok"))
			printf("bad: %s: %s\n", k, json_string_value(val));
	}
	if (v.status == 0)
		printf("%s: %s: case %s, %d files match " SUMS
		       "; ledger %llu rows, head %s, MACs %s\n",
		       rc ? "bad" : "ok", path, prefix, x.n - 1, v.rows, v.head,
		       v.macs_checked ? "checked" : "not checked");
	else
		printf("%s: ledger.jsonl: %s\n",
		       v.status == 2 ? "wrong key" : "bad", v.reason);
	if (kr == 0)
		fprintf(stderr, "ledgerctl verify: key %s (%s, %s)%s%s\n",
			v.key_fp, key_path ? key_path : CTL_DEFAULT_KEY,
			key_path ? "given" : "default",
			v.sealed_fp[0] ? "; sealed with key " : "",
			v.sealed_fp);
	else
		fputs("ledgerctl verify: MACs not checked (no key)\n", stderr);
out:
	explicit_bzero(key, sizeof(key));
	explicit_bzero(&seal, sizeof(seal));
	if (f)
		fclose(f);
	if (mfd >= 0)
		close(mfd);
	json_decref(files);
	json_decref(out);
	json_decref(report);
	export_free(&x);
	return rc;
}

int ctl_verify_any_main(int argc, char **argv)
{
	const char *first = NULL, *key_path = NULL, *seal_path = NULL;
	bool json = false, require_mac = false, head = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((!strcmp(a, "--key") || !strcmp(a, "--head")) &&
		    i + 1 < argc) {
			if (a[2] == 'k')
				key_path = argv[i + 1];
			else
				head = true;
			i++;
		} else if (!strncmp(a, "--key=", 6)) {
			key_path = a + 6;
		} else if (!strcmp(a, "--seal-key") && i + 1 < argc) {
			seal_path = argv[++i];
		} else if (!strncmp(a, "--seal-key=", 11)) {
			seal_path = a + 11;
		} else if (!strncmp(a, "--head=", 7)) {
			head = true;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--require-mac")) {
			require_mac = true;
		} else if (a[0] != '-' && !first) {
			first = a;
		}
	}
	if (!first || !ctl_is_tar(first))
		return ctl_verify_main(argc, argv);
	if (head) {
		fprintf(stderr,
			"ledgerctl verify: --head is for a ledger, not an export\n");
		return 2;
	}
	return ctl_verify_tar(first, key_path, seal_path, json, require_mac);
}
