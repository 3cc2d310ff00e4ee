/* SPDX-License-Identifier: MIT */
/*
 * ctl_cassette.c - `ledgerctl cassette CASE OUTDIR` writes the replay of
 * a closed, verified case (ASSERT's mocks file and cassette folder, the
 * replay policy, the recorded calls), and `ledgerctl cassette --compare
 * OUTDIR CASE` names the first call where a re-run left it
 * (ledgerctl(1) CASSETTES).  The conversion is src/cassette_write.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cassette_write.h"
#include "ctl.h"
#include "ctl_verify.h"
#include "doc.h"
#include "ledger.h"
#include "mocks.h"
#include "policy.h"
#include "request.h"

#define CASSETTE_USAGE                                                         \
	"usage: ledgerctl cassette CASE OUTDIR [--key FILE]\n"                 \
	"       ledgerctl cassette --compare OUTDIR CASE [--key FILE] "        \
	"[--json]\n"
#define CALLS_FILE "calls.jsonl"
#define CALLS_MAX  ((size_t)1 << 30)

/* One case of the mount, read and verified. */
struct read_case {
	json_t *rows;	/* every verified row */
	json_t *status; /* the view's status */
	json_t *policy; /* the case's policy document */
	char head[CHAIN_HEX_LEN + 1];
	unsigned long long nrows;
};

static void read_case_clear(struct read_case *rc)
{
	json_decref(rc->rows);
	json_decref(rc->status);
	json_decref(rc->policy);
	memset(rc, 0, sizeof(*rc));
}

static int collect(void *ctx, const json_t *row, long long off, size_t len)
{
	(void)off;
	(void)len;
	return json_array_append((json_t *)ctx, (json_t *)row) ? 1 : 0;
}

static json_t *load_at(int dirfd, const char *name)
{
	struct lf_why why;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	json_t *v = fd >= 0 ? doc_load_fd(fd, &why) : NULL;

	if (fd >= 0)
		close(fd);
	return v;
}

/*
 * A case that is over appends nothing more, so the snapshot must end
 * where the daemon's status says (ledgerfs-ledger(5) CHECKPOINTS); an
 * open case may have moved on since.
 */
static bool over_and_matches(const struct read_case *rc)
{
	const char *state =
		json_string_value(json_object_get(rc->status, "state"));

	if (!state || (strcmp(state, "closed") && strcmp(state, "failed")))
		return true;
	return json_integer_value(json_object_get(rc->status, "rows")) ==
		       (json_int_t)rc->nrows &&
	       json_string_value(json_object_get(rc->status, "head")) &&
	       !strcmp(json_string_value(json_object_get(rc->status, "head")),
		       rc->head);
}

/*
 * Read CASE from the mount and verify its ledger as `export` does (the
 * host key when there is one, ledgerctl(1) KEYS).  0, 1 (does not
 * verify) or 2 (no such case, unreadable key or files); says why.
 */
static int read_case(const char *cmd, const char *name, const char *key_path,
		     struct read_case *rc)
{
	const char *mount = getenv("LEDGERFS_MOUNT");
	unsigned char key[CHAIN_KEY_BYTES];
	struct ledger_report rep;
	struct ctl_verdict v;
	struct lf_why why = {{0}};
	char dir[4096];
	int dirfd, mfd = -1, kr, rcode = 2;

	memset(rc, 0, sizeof(*rc));
	if (!request_valid_id(name, strlen(name))) {
		fprintf(stderr, "ledgerctl %s: bad case name '%s'\n", cmd,
			name);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/cases/%s", mount ? mount : ".", name);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "ledgerctl %s: no case %s: %s: %s\n", cmd, name,
			dir, strerror(errno));
		return 2;
	}
	kr = ctl_read_key(cmd, key_path ? key_path : CTL_DEFAULT_KEY, key);
	if (kr < 0 || (kr == 1 && key_path)) {
		if (kr == 1)
			fprintf(stderr,
				"ledgerctl %s: cannot read key %s: %s\n", cmd,
				key_path, strerror(errno));
		goto out;
	}
	rc->status = load_at(dirfd, "status");
	rc->policy = load_at(dirfd, "policy");
	mfd = ctl_snapshot_ledger(dirfd);
	if (!rc->status || !rc->policy || mfd < 0) {
		fprintf(stderr,
			"ledgerctl %s: %s: cannot read its status, policy "
			"or ledger\n",
			cmd, name);
		goto out;
	}
	if (ctl_verify_check(mfd, kr == 0 ? key : NULL, NULL, &v) != 0) {
		fprintf(stderr,
			"ledgerctl %s: %s: the ledger does not verify: %s\n",
			cmd, name, v.reason);
		rcode = v.status == 1 ? 1 : 2;
		goto out;
	}
	rc->rows = json_array();
	if (!rc->rows || ledger_verify_fd(mfd, NULL, NULL, collect, rc->rows,
					  &rep, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl %s: %s: %s\n", cmd, name, why.msg);
		rcode = 1;
		goto out;
	}
	rc->nrows = v.rows;
	memcpy(rc->head, v.head, sizeof(rc->head));
	if (!over_and_matches(rc)) {
		fprintf(stderr,
			"ledgerctl %s: %s: the ledger read does not end where "
			"the daemon's status says\n",
			cmd, name);
		rcode = 1;
		goto out;
	}
	rcode = 0;
out:
	if (mfd >= 0)
		close(mfd);
	close(dirfd);
	if (rcode)
		read_case_clear(rc);
	return rcode;
}

/* ---- writing ---------------------------------------------------------- */

/* Write text as a new file name in dirfd (never through a link), 0644,
 * flushed.  0, or -1 with errno. */
static int put_file(int dirfd, const char *name, const char *text, size_t len)
{
	int fd = openat(dirfd, name,
			O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0644);
	size_t done = 0;
	int err = 0;

	if (fd < 0)
		return -1;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		done += (size_t)n;
	}
	/* The mode the page promises, whatever the umask. */
	if (!err && (fchmod(fd, 0644) || fsync(fd)))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	errno = err;
	return err ? -1 : 0;
}

/* v as JSON text with a final newline (malloc'd). */
static char *json_text(const json_t *v, size_t flags)
{
	char *s = json_dumps(v, flags | JSON_ENCODE_ANY), *t;
	size_t n;

	if (!s)
		return NULL;
	n = strlen(s);
	t = realloc(s, n + 2);
	if (!t) {
		free(s);
		return NULL;
	}
	t[n] = '\n';
	t[n + 1] = '\0';
	return t;
}

static int put_json(int dirfd, const char *name, const json_t *v, size_t flags)
{
	char *t = json_text(v, flags);
	int r;

	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	r = put_file(dirfd, name, t, strlen(t));
	free(t);
	return r;
}

/* calls.jsonl: one call a line, compact, keys sorted. */
static int put_calls(int dirfd, const json_t *calls)
{
	char *out = NULL, *line;
	size_t cap = 0, i;
	const json_t *c;
	FILE *f = open_memstream(&out, &cap);
	int r = -1;

	if (!f)
		return -1;
	json_array_foreach(calls, i, c)
	{
		line = json_text(c, JSON_COMPACT | JSON_SORT_KEYS);
		if (!line || fputs(line, f) == EOF) {
			free(line);
			fclose(f);
			free(out);
			errno = ENOMEM;
			return -1;
		}
		free(line);
	}
	if (fclose(f) == 0)
		r = put_file(dirfd, CALLS_FILE, out ? out : "",
			     out ? strlen(out) : 0);
	free(out);
	return r;
}

/*
 * OUTDIR must be absent (it is made, 0755) or an empty folder that is
 * not a link.  Its descriptor, or -1 after saying why.  *made: created.
 */
static int open_outdir(const char *path, bool *made)
{
	struct dirent *de;
	DIR *d;
	int fd, dup_fd;

	*made = false;
	if (mkdir(path, 0755) == 0)
		*made = true;
	else if (errno != EEXIST) {
		fprintf(stderr, "ledgerctl cassette: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl cassette: %s: %s\n", path,
			errno == ELOOP || errno == ENOTDIR
				? "not a folder (or a symbolic link): refused"
				: strerror(errno));
		return -1;
	}
	dup_fd = dup(fd);
	d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		close(fd);
		fprintf(stderr, "ledgerctl cassette: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			break;
	closedir(d);
	if (de) {
		close(fd);
		fprintf(stderr,
			"ledgerctl cassette: %s is not empty: refused (give a "
			"new or empty folder)\n",
			path);
		return -1;
	}
	if (*made)
		fchmod(fd, 0755);
	return fd;
}

/* The parent folder of path, flushed so a new OUTDIR's entry lasts. */
static void sync_parent(const char *path)
{
	char *p = strdup(path), *slash;
	int fd;

	if (!p)
		return;
	while ((slash = strrchr(p, '/')) && slash[1] == '\0' && slash != p)
		*slash = '\0';
	slash = strrchr(p, '/');
	if (!slash)
		strcpy(p, ".");
	else if (slash == p)
		p[1] = '\0';
	else
		*slash = '\0';
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(p);
}

/* Every file of the set into outfd.  0, or -1 after saying why. */
static int write_set(int outfd, const char *outdir,
		     const struct cassette_set *set, const json_t *policy)
{
	const char *stem;
	json_t *v;
	char name[64];
	int cfd = -1;

	if (mkdirat(outfd, CASSETTE_DIR, 0755) ||
	    (cfd = openat(outfd, CASSETTE_DIR,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
		    0 ||
	    fchmod(cfd, 0755))
		goto fail;
	json_object_foreach(set->recordings, stem, v)
	{
		snprintf(name, sizeof(name), "%s.json", stem);
		if (put_json(cfd, name, v, JSON_INDENT(2) | JSON_SORT_KEYS))
			goto fail;
	}
	if (fsync(cfd) ||
	    put_file(outfd, "mocks.yaml", set->mocks_yaml,
		     strlen(set->mocks_yaml)) ||
	    put_json(outfd, "policy.json", policy,
		     JSON_INDENT(2) | JSON_PRESERVE_ORDER) ||
	    put_calls(outfd, set->calls) || fsync(outfd))
		goto fail;
	close(cfd);
	return 0;
fail:
	fprintf(stderr,
		"ledgerctl cassette: writing %s: %s (the folder is "
		"incomplete)\n",
		outdir, strerror(errno));
	if (cfd >= 0)
		close(cfd);
	return -1;
}

/*
 * The files must load where they will be used: ledgerctl open inlines
 * the cassette folder into both documents.  0, or -1 after saying why.
 */
static int check_loads(const struct cassette_set *set, json_t *policy)
{
	struct lf_why why = {{0}};
	struct policy *p = NULL;
	struct mocks *m = NULL;
	json_t *md = json_deep_copy(set->mocks);
	json_t *pd = json_deep_copy(policy);
	int r = -1;

	if (!md || !pd)
		goto out;
	json_object_del(md, "cassette_dir");
	json_object_set(md, "cassettes", set->recordings);
	json_object_set(pd, "cassettes", set->recordings);
	if (policy_load(pd, &p, &why) == LF_OK &&
	    mocks_load(md, &m, &why) == LF_OK)
		r = 0;
	else
		fprintf(stderr,
			"ledgerctl cassette: the replay would not load: %s\n",
			why.msg);
out:
	policy_free(p);
	mocks_free(m);
	json_decref(md);
	json_decref(pd);
	return r;
}

static int cassette_write(const char *name, const char *outdir,
			  const char *key_path)
{
	struct cassette_set set = {0};
	struct read_case rc;
	struct lf_why why = {{0}};
	json_t *policy = NULL;
	const char *state;
	char header[512];
	size_t nmocks = 0, nblocks = 0, i;
	const json_t *c;
	bool made;
	int outfd = -1, r;

	r = read_case("cassette", name, key_path, &rc);
	if (r)
		return r;
	state = json_string_value(json_object_get(rc.status, "state"));
	if (!state || (strcmp(state, "closed") && strcmp(state, "failed"))) {
		fprintf(stderr,
			"ledgerctl cassette: case %s is %s, not closed: "
			"refused (close it first: ledgerctl close %s)\n",
			name, state ? state : "in an unknown state", name);
		r = 2;
		goto out;
	}
	snprintf(header, sizeof(header),
		 "# The replay of ledgerfs case %s, from its verified ledger:\n"
		 "# %llu rows, head %s.\n"
		 "# ASSERT's mocks format; see ledgerctl(1) CASSETTES.\n",
		 name, rc.nrows, rc.head);
	policy = cassette_replay_policy(rc.policy, &why);
	if (!policy ||
	    cassette_build(rc.rows, name, header, &set, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl cassette: %s: refused: %s\n", name,
			why.msg);
		r = 2;
		goto out;
	}
	r = 2;
	if (check_loads(&set, policy))
		goto out;
	outfd = open_outdir(outdir, &made);
	if (outfd < 0 || write_set(outfd, outdir, &set, policy))
		goto out;
	if (made)
		sync_parent(outdir);
	json_array_foreach(set.calls, i, c)
	{
		if (!strcmp(json_string_value(json_object_get(c, "replay")),
			    "mocks"))
			nmocks++;
		else
			nblocks++;
	}
	printf("%s: %zu calls: %zu replayed by mocks.yaml, %zu blocked by "
	       "policy.json; %zu recordings\n",
	       outdir, json_array_size(set.calls), nmocks, nblocks,
	       json_object_size(set.recordings));
	r = 0;
out:
	if (outfd >= 0)
		close(outfd);
	json_decref(policy);
	cassette_set_clear(&set);
	read_case_clear(&rc);
	return r;
}

/* ---- comparing -------------------------------------------------------- */

/* OUTDIR/calls.jsonl as an array.  New ref, or NULL after saying why. */
static json_t *read_calls(const char *outdir)
{
	json_t *calls = json_array(), *c;
	json_error_t jerr;
	char path[4096], *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", outdir, CALLS_FILE);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f || !calls) {
		fprintf(stderr, "ledgerctl cassette: %s: %s\n", path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		json_decref(calls);
		return NULL;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		n += (size_t)len;
		c = n <= CALLS_MAX ? json_loadb(line, (size_t)len, 0, &jerr)
				   : NULL;
		if (!json_is_object(c) || json_array_append_new(calls, c)) {
			fprintf(stderr,
				"ledgerctl cassette: %s: line %zu: not a "
				"call\n",
				path, json_array_size(calls) + 1);
			json_decref(json_is_object(c) ? NULL : c);
			json_decref(calls);
			calls = NULL;
			break;
		}
	}
	free(line);
	fclose(f);
	return calls;
}

static int cassette_compare_main(const char *outdir, const char *name,
				 const char *key_path, bool as_json)
{
	struct cassette_diff d = {0};
	struct read_case rc;
	struct lf_why why = {{0}};
	json_t *expected, *actual = NULL, *o;
	char *line;
	int r;

	expected = read_calls(outdir);
	if (!expected)
		return 2;
	r = read_case("cassette", name, key_path, &rc);
	if (r) {
		json_decref(expected);
		return r == 1 ? 3 : 2;
	}
	actual = cassette_calls(rc.rows, &why);
	if (!actual) {
		fprintf(stderr, "ledgerctl cassette: %s: %s\n", name, why.msg);
		r = 3;
		goto out;
	}
	cassette_compare(expected, actual, &d);
	if (as_json) {
		o = json_pack("{s:b, s:s?, s:I, s:I, s:I, s:O?, s:O?}", "same",
			      d.same, "what", d.what, "sequence",
			      (json_int_t)d.sequence, "expected_calls",
			      (json_int_t)d.expected_calls, "actual_calls",
			      (json_int_t)d.actual_calls, "expected",
			      d.expected, "actual", d.actual);
		line = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(o);
	} else {
		line = cassette_diff_line(&d);
	}
	if (!line) {
		fprintf(stderr, "ledgerctl cassette: out of memory\n");
		r = 2;
		goto out;
	}
	printf("%s\n", line);
	free(line);
	r = d.same ? 0 : 1;
out:
	cassette_diff_clear(&d);
	json_decref(expected);
	json_decref(actual);
	read_case_clear(&rc);
	return r;
}

int ctl_cassette_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"key", required_argument, NULL, 'k'},
		{"compare", no_argument, NULL, 'c'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *key_path = NULL;
	bool compare = false, as_json = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			key_path = optarg;
			break;
		case 'c':
			compare = true;
			break;
		case 'j':
			as_json = true;
			break;
		case 'h':
			fputs(CASSETTE_USAGE, stdout);
			return 0;
		default:
			fputs(CASSETTE_USAGE, stderr);
			return 2;
		}
	}
	if (argc - optind != 2 || (as_json && !compare)) {
		fputs(CASSETTE_USAGE, stderr);
		return 2;
	}
	if (compare)
		return cassette_compare_main(argv[optind], argv[optind + 1],
					     key_path, as_json);
	return cassette_write(argv[optind], argv[optind + 1], key_path);
}
