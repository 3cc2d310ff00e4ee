/* SPDX-License-Identifier: MIT */
/*
 * ctl_cassette_case.c - a case of the mount read and verified for
 * `ledgerctl cassette`, and `ledgerctl cassette --compare OUTDIR CASE`:
 * the re-run's calls against OUTDIR/calls.jsonl, the first difference on
 * one line or as JSON (ledgerctl(1) CASSETTES).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cassette_write.h"
#include "ctl.h"
#include "ctl_cassette.h"
#include "ctl_verify.h"
#include "doc.h"
#include "ledger.h"
#include "request.h"

#define CALLS_MAX ((size_t)1 << 30)

void ctl_cassette_case_clear(struct read_case *rc)
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
int ctl_cassette_read(const char *cmd, const char *name, const char *key_path,
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
		ctl_cassette_case_clear(rc);
	return rcode;
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

int ctl_cassette_compare(const char *outdir, const char *name,
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
	r = ctl_cassette_read("cassette", name, key_path, &rc);
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
	/* Absent keys (what when same, a call not there) are left out. */
	if (as_json) {
		o = json_pack("{s:b, s:s*, s:I, s:I, s:I, s:O*, s:O*}", "same",
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
	ctl_cassette_case_clear(&rc);
	return r;
}
