/* SPDX-License-Identifier: MIT */
/*
 * ctl_cassette.c - `ledgerctl cassette CASE OUTDIR` writes the replay of
 * a closed, verified case (ASSERT's mocks file and cassette folder, the
 * replay policy, the recorded calls), and `ledgerctl cassette --compare
 * OUTDIR CASE` names the first call where a re-run left it
 * (ledgerctl(1) CASSETTES).  The conversion is src/cassette_write.c;
 * reading the case and comparing, ctl/ctl_cassette_case.c.
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
#include "ctl_cassette.h"
#include "decision.h"
#include "mocks.h"
#include "policy.h"

#define CASSETTE_USAGE                                                         \
	"usage: ledgerctl cassette CASE OUTDIR [--key FILE]\n"                 \
	"       ledgerctl cassette --compare OUTDIR CASE [--key FILE] "        \
	"[--json]\n"

/* ---- writing ---------------------------------------------------------- */

/* Write text as a new file name in dirfd (never through a link), 0644,
 * flushed unless the caller flushes the whole folder.  0, or -1 with
 * errno. */
static int put_file_as(int dirfd, const char *name, const char *text,
		       size_t len, bool flush)
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
	if (!err && (fchmod(fd, 0644) || (flush && fsync(fd))))
		err = errno;
	if (close(fd) && !err)
		err = errno;
	errno = err;
	return err ? -1 : 0;
}

static int put_file(int dirfd, const char *name, const char *text, size_t len)
{
	return put_file_as(dirfd, name, text, len, true);
}

/* v as JSON text with a final newline (malloc'd). */
static char *json_text(const json_t *v, size_t flags)
{
	return decision_add_newline(json_dumps(v, flags | JSON_ENCODE_ANY));
}

static int put_json_as(int dirfd, const char *name, const json_t *v,
		       size_t flags, bool flush)
{
	char *t = json_text(v, flags);
	int r;

	if (!t) {
		errno = ENOMEM;
		return -1;
	}
	r = put_file_as(dirfd, name, t, strlen(t), flush);
	free(t);
	return r;
}

static int put_json(int dirfd, const char *name, const json_t *v, size_t flags)
{
	return put_json_as(dirfd, name, v, flags, true);
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
	/*
	 * A recording a call: one syncfs flushes them all, where a flush
	 * each cost a journal commit each (55 s for 142,000 calls).  It
	 * reports a write error of any of them, as their fsync would.
	 */
	json_object_foreach(set->recordings, stem, v)
	{
		snprintf(name, sizeof(name), "%s.json", stem);
		if (put_json_as(cfd, name, v, JSON_INDENT(2) | JSON_SORT_KEYS,
				false))
			goto fail;
	}
	if (syncfs(cfd) || fsync(cfd) ||
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

	r = ctl_cassette_read("cassette", name, key_path, &rc);
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
	ctl_cassette_case_clear(&rc);
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
		return ctl_cassette_compare(argv[optind], argv[optind + 1],
					    key_path, as_json);
	return cassette_write(argv[optind], argv[optind + 1], key_path);
}
