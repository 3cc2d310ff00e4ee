/* SPDX-License-Identifier: MIT */
/*
 * ctl_verify_mount.c - `ledgerctl verify` of a mounted case folder
 * (ledgerctl(1) verify): the ledger read through the view, one snapshot,
 * must end where the daemon's status says, since the daemon checked its
 * MACs when it loaded the case; and the snapshot and status readers that
 * evidence, export and cassette share.
 */
#include "ctl_verify.h"

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
#include "ledger.h"
#include "merkle.h"

/* The reason of a case the daemon failed at load (ledgerfs(8) FAILURE). */
#define CTL_LOAD_FAULT "at load: "

int ctl_read_status(int dirfd, unsigned long long *rows,
		    char head[CHAIN_HEX_LEN + 1], char fault[CTL_FAULT_MAX])
{
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	json_t *st = fd >= 0 ? json_loadfd(fd, 0, NULL) : NULL;
	const char *state = json_string_value(json_object_get(st, "state"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	int rc = -1;

	if (fd >= 0)
		close(fd);
	fault[0] = '\0';
	/* Its MACs or checkpoints did not hold: the rows shown are not all. */
	if (state && !strcmp(state, "failed") && reason &&
	    !strncmp(reason, CTL_LOAD_FAULT, strlen(CTL_LOAD_FAULT)))
		snprintf(fault, CTL_FAULT_MAX, "%s", reason);
	if (json_is_integer(json_object_get(st, "rows")) &&
	    json_string_length(json_object_get(st, "head")) == CHAIN_HEX_LEN) {
		*rows = (unsigned long long)json_integer_value(
			json_object_get(st, "rows"));
		memcpy(head, json_string_value(json_object_get(st, "head")),
		       CHAIN_HEX_LEN + 1);
		rc = 0;
	}
	json_decref(st);
	return rc;
}

/* Copy the view's `ledger` (size 0: read to EOF) into a fresh memfd. */
int ctl_snapshot_ledger(int dirfd)
{
	char buf[65536];
	int fd = openat(dirfd, "ledger", O_RDONLY | O_CLOEXEC);
	int mfd = fd >= 0 ? memfd_create("ledger", MFD_CLOEXEC) : -1;
	ssize_t n = -1;

	while (mfd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (fd >= 0)
		close(fd);
	if (n != 0 && mfd >= 0) {
		close(mfd);
		mfd = -1;
	}
	return mfd;
}

/*
 * A mounted case folder (it has `status` and `ledger`): checked against
 * the daemon, never with a key file.  One snapshot of the ledger must
 * chain and end exactly where the daemon's status, read after it, says:
 * a row the daemon does not report is bad; rows the daemon appended in
 * between mean a new try.  The daemon checked the MACs when it loaded
 * the case.
 */
/* Print v as text or JSON (no key: a mounted case or no key file). */
static int ctl_report(const struct ctl_verdict *v, const char *label, bool json)
{
	json_t *o;

	if (!json)
		return ctl_verdict_print(v, label);
	o = ctl_verdict_json(v, label, NULL, NULL);
	ctl_verify_json_print(o);
	return v->status;
}

/* What ctl_ledger_end's walk carries. */
struct ledger_end {
	unsigned long long rows;
	char head[CHAIN_HEX_LEN + 1];
};

static bool ledger_end_line(void *ctx, const char *s, size_t n)
{
	struct ledger_end *e = ctx;

	e->rows++;
	chain_sha256_hex(s, n, e->head);
	return false;
}

/*
 * The rows and head of a snapshot, without checking it (that is done
 * once, when it ends where the status says): LF_OK, LF_VERIFY for a
 * last line cut short (read during an append), or LF_IO.
 */
static enum lf_err ctl_ledger_end(int fd, struct ledger_end *e,
				  struct lf_why *why)
{
	struct stat st;

	memset(e, 0, sizeof(*e));
	memset(e->head, '0', CHAIN_HEX_LEN);
	if (fstat(fd, &st) < 0)
		return lf_fail(why, LF_IO, "cannot read the snapshot: %s",
			       strerror(errno));
	return merkle_each_line(fd, st.st_size, ledger_end_line, e, why);
}

int ctl_verify_mounted(const char *dir, const char *head_arg, bool json,
		       const struct ratchet_keys *seal)
{
	struct ctl_verdict v;
	struct timespec pause = {0, 50 * 1000 * 1000};
	struct ledger_end rep;
	struct lf_why why = {{0}};
	unsigned long long srows = 0;
	char shead[CHAIN_HEX_LEN + 1] = "", head[160], fault[CTL_FAULT_MAX];
	int dirfd, mfd = -1, try, rc = 2;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n", dir,
			strerror(errno));
		return 2;
	}
	for (try = 0; try < 40; try++) {
		enum lf_err e;

		if (mfd >= 0)
			close(mfd);
		mfd = ctl_snapshot_ledger(dirfd);
		if (mfd < 0) {
			fprintf(stderr,
				"ledgerctl verify: cannot read %s/ledger\n",
				dir);
			goto out;
		}
		e = ctl_ledger_end(mfd, &rep, &why);
		if (e == LF_VERIFY) {
			nanosleep(&pause, NULL); /* read during an append */
			continue;
		}
		if (e != LF_OK) {
			fprintf(stderr, "ledgerctl verify: %s: %s\n", dir,
				why.msg);
			goto out;
		}
		if (ctl_read_status(dirfd, &srows, shead, fault) < 0) {
			fprintf(stderr,
				"ledgerctl verify: cannot read %s/status\n",
				dir);
			goto out;
		}
		if (srows <= rep.rows || fault[0])
			break;
		nanosleep(&pause, NULL); /* the daemon appended meanwhile */
	}
	if (fault[0]) {
		ctl_verify_check(mfd, NULL, NULL, &v);
		v.status = 1;
		v.verdict = "bad";
		snprintf(v.reason, sizeof(v.reason),
			 "the daemon found it bad when it loaded the case (%s)",
			 fault);
		rc = ctl_report(&v, dir, json);
		goto out;
	}
	if (srows != rep.rows || strcmp(shead, rep.head)) {
		/* A fault of the ledger itself is said first. */
		if (ctl_verify_check(mfd, NULL, NULL, &v) == 1) {
			rc = ctl_report(&v, dir, json);
			goto out;
		}
		v.status = 1;
		v.verdict = "bad";
		snprintf(
			v.reason, sizeof(v.reason),
			"the ledger read through the mount (%llu rows, head %.64s) does not end where the daemon's status says (%llu rows, head %.64s)",
			rep.rows, rep.head, srows, shead);
		rc = ctl_report(&v, dir, json);
		goto out;
	}
	snprintf(head, sizeof(head), "%llu:%s", srows, shead);
	fprintf(stderr,
		"ledgerctl verify: %s is a mounted case: chain checked against the daemon's status (%s); the daemon checked the MACs when it loaded the case\n",
		dir, head);
	/* With --seal-key the snapshot's every MAC is checked as well. */
	rc = ctl_verify_check_sealed(mfd, NULL, seal, head, &v);
	/* A checkpoint given by the caller must hold as well. */
	if (rc == 0 && head_arg)
		ctl_verify_check_sealed(mfd, NULL, seal, head_arg, &v);
	rc = ctl_report(&v, dir, json);
	ctl_say_seal(&v, "");
out:
	if (mfd >= 0)
		close(mfd);
	close(dirfd);
	return rc;
}
