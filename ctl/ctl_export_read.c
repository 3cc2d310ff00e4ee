/* SPDX-License-Identifier: MIT */
/*
 * ctl_export_read.c - reading back what `ledgerctl export` wrote
 * (ledgerctl(1) EXPORT): `ledgerctl verify FILE.tar`, with the key or,
 * for public verification, the ledger and its checkpoints taken out of
 * the archive.  Only the plain ustar shape export writes is taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"
#include "ctl_export_int.h"
#include "ctl_tree.h"
#include "ctl_verify.h"
#include "ledger.h"
#include "optarg.h"

int member_add(struct export *x, const char *name, char *data, size_t len)
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

void export_free(struct export *x)
{
	int i;

	for (i = 0; i < x->n; i++)
		free(x->m[i].data);
	x->n = 0;
}

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
		bool big;
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
		/* The evidence grows with the ledger: each call once. */
		big = !strcmp(name, "ledger.jsonl") ||
		      !strcmp(name, "evidence.json");
		max = big ? TAR_MAX_FILE : TAR_MAX_DOC;
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

/* "bad: NAME: STATE" for each member sums_check found wrong. */
static void sums_print_bad(json_t *files)
{
	const char *k;
	json_t *val;

	json_object_foreach(files, k,
			    val) if (strcmp(json_string_value(val), "ok"))
		printf("bad: %s: %s\n", k, json_string_value(val));
}

/*
 * An export's `checkpoint` and `checkpoints` members, one after the
 * other: *text malloc'd (NULL, *len 0, when it has neither).  0, or -1
 * out of memory.
 */
static int export_checkpoints(const struct export *x, char **text, size_t *len)
{
	const struct member *one = member_get(x, "checkpoint");
	const struct member *many = member_get(x, "checkpoints");
	size_t n = (one ? one->len : 0) + (many ? many->len : 0);

	*text = NULL;
	*len = 0;
	if (!n)
		return 0;
	if (!(*text = malloc(n)))
		return -1;
	if (one)
		memcpy(*text, one->data, one->len);
	if (many)
		memcpy(*text + (one ? one->len : 0), many->data, many->len);
	*len = n;
	return 0;
}

int ctl_export_public(const char *path, int *ledger_fd, char **ckpts,
		      size_t *ckpts_len)
{
	struct export x = {0};
	const struct member *led;
	char prefix[160], err[300];
	json_t *files = json_object();
	FILE *f = fopen(path, "rb");
	int nbad, rc = 2;

	*ledger_fd = -1;
	*ckpts = NULL;
	*ckpts_len = 0;
	if (!f || !files || tar_read(f, &x, prefix, err, sizeof(err)) < 0) {
		fprintf(stderr, "ledgerctl verify: %s: %s\n", path,
			f ? err : strerror(errno));
		goto out;
	}
	/* The bytes checked are the bytes the export's checksums name. */
	nbad = sums_check(&x, files);
	if (nbad) {
		sums_print_bad(files);
		rc = 1;
		goto out;
	}
	led = member_get(&x, "ledger.jsonl");
	*ledger_fd = memfd_create("ledger", MFD_CLOEXEC);
	if (!led || *ledger_fd < 0 ||
	    write(*ledger_fd, led->data, led->len) != (ssize_t)led->len ||
	    lseek(*ledger_fd, 0, SEEK_SET) != 0) {
		fprintf(stderr, "ledgerctl verify: %s: no ledger.jsonl in it\n",
			path);
		goto out;
	}
	if (export_checkpoints(&x, ckpts, ckpts_len) < 0)
		goto out;
	rc = 0;
out:
	if (rc && *ledger_fd >= 0) {
		close(*ledger_fd);
		*ledger_fd = -1;
	}
	if (rc) {
		free(*ckpts);
		*ckpts = NULL;
		*ckpts_len = 0;
	}
	if (f)
		fclose(f);
	json_decref(files);
	export_free(&x);
	return rc;
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
	if (kr < 0 || (kr == 1 && (key_path || (require_mac && !seal_path)))) {
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
	/* Its signed checkpoints, with the host's key (ledgerctl(1) verify). */
	if (kr == 0 && v.status == 0) {
		char *text = NULL, label[4200];
		size_t tlen = 0;

		if (export_checkpoints(&x, &text, &tlen) < 0)
			goto out;
		snprintf(label, sizeof(label), "%s:checkpoints", path);
		ctl_verify_own_checkpoints(
			NULL, text, tlen, label, mfd,
			key_path ? key_path : CTL_DEFAULT_KEY, &v);
		free(text);
	}
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
	if (require_mac)
		ctl_verify_require_mac(&v);
	rc = v.status ? v.status : (nbad ? 1 : 0);
	if (json) {
		out = json_pack(
			"{s:s, s:s, s:s, s:o, s:o}", "archive", path, "case",
			prefix, "verdict",
			rc == 0 ? "ok" : (v.status ? v.verdict : "bad"),
			"files", files, "ledger",
			ctl_verdict_json(
				&v, "ledger.jsonl",
				kr == 0 ? (key_path ? key_path
						    : CTL_DEFAULT_KEY)
					: NULL,
				kr == 0 ? (key_path ? "given" : "default")
					: NULL));
		files = NULL;
		ctl_verify_json_print(out);
		out = NULL;
		goto out;
	}
	if (nbad)
		sums_print_bad(files);
	/* With v.status 0, only members can make the archive bad. */
	if (v.status == 0 && nbad)
		printf("bad: %s: case %s, %d of %zu files do not match " SUMS
		       "; ledger %llu rows, head %s, MACs %s\n",
		       path, prefix, nbad, json_object_size(files), v.rows,
		       v.head, v.macs_checked ? "checked" : "not checked");
	else if (v.status == 0)
		printf("ok: %s: case %s, %d files match " SUMS
		       "; ledger %llu rows, head %s, MACs %s\n",
		       path, prefix, x.n - 1, v.rows, v.head,
		       v.macs_checked ? "checked" : "not checked");
	else if (!strcmp(v.verdict, "error"))
		fprintf(stderr, "ledgerctl verify: %s: ledger.jsonl: %s\n",
			path, v.reason);
	else
		printf("%s: ledger.jsonl: %s\n",
		       v.status == 2 ? "wrong key" : "bad", v.reason);
	if (v.status == 0 && v.checkpoints > 0)
		fprintf(stderr,
			"ledgerctl verify: %lld signed checkpoint(s) match the ledger (the latest at %llu rows)\n",
			v.checkpoints, v.checkpoint_rows);
	if (kr == 0)
		fprintf(stderr, "ledgerctl verify: key %s (%s, %s)%s%s\n",
			v.key_fp, key_path ? key_path : CTL_DEFAULT_KEY,
			key_path ? "given" : "default",
			v.sealed_fp[0] ? "; sealed with key " : "",
			v.sealed_fp);
	else if (!seal_path)
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

/* The last line of text, without its "ledgerctl ...: " prefix. */
static const char *last_reason(char *text)
{
	char *end, *line, *p;

	if (!text)
		return NULL;
	end = text + strlen(text);
	while (end > text && end[-1] == '\n')
		*--end = '\0';
	line = strrchr(text, '\n');
	line = line ? line + 1 : text;
	if (!strncmp(line, "ledgerctl", 9) && (p = strstr(line, ": ")))
		line = p + 2;
	return *line ? line : NULL;
}

int ctl_verify_any_main(int argc, char **argv)
{
	const char *first = NULL, *key_path = NULL, *seal_path = NULL;
	bool json = false, require_mac = false, head = false;
	FILE *real_stderr = stderr, *said = NULL;
	char *said_text = NULL;
	size_t said_len = 0;
	const char *reason;
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		const char *h = NULL;

		if (opt_value(argc, argv, &i, "--key", &key_path) ||
		    opt_value(argc, argv, &i, "--seal-key", &seal_path)) {
			continue;
		} else if (opt_value(argc, argv, &i, "--head", &h)) {
			head = true;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "--require-mac")) {
			require_mac = true;
		} else if (a[0] != '-' && !first) {
			first = a;
		}
	}
	/*
	 * With --json an error's document gives the reason standard error
	 * gives (ledgerctl(1)): what is said there is kept, and passed on.
	 */
	if (json && (said = open_memstream(&said_text, &said_len)))
		stderr = said;
	if (!first || !ctl_is_tar(first)) {
		rc = ctl_verify_main(argc, argv);
	} else if (head) {
		fprintf(stderr,
			"ledgerctl verify: --head is for a ledger, not an export\n");
		rc = 2;
	} else {
		rc = ctl_verify_tar(first, key_path, seal_path, json,
				    require_mac);
	}
	if (said) {
		stderr = real_stderr;
		fclose(said);
		if (said_text)
			fputs(said_text, stderr);
	}
	/* --json prints one object whatever happened (ledgerctl(1)). */
	reason = last_reason(said_text);
	if (json && rc == 2 && !ctl_verify_json_printed)
		ctl_verify_json_print(json_pack(
			"{s:s?, s:s, s:s}", "ledger", first, "verdict", "error",
			"reason", reason ? reason : "cannot verify"));
	free(said_text);
	return rc;
}
