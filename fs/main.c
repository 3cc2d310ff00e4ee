/* SPDX-License-Identifier: MIT */
/*
 * main.c - the ledgerfs daemon: options, the host key, the safety checks
 * on the backing folder, loading every case, then the multithreaded FUSE
 * loop.  Refuses to start, saying why, rather than run unsafely.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"
#include "case_ckpt.h"
#include "chain.h"
#include "errlog.h"
#include "fh.h"
#include "ledger.h"
#include "ops.h"
#include "options.h"
#include "privilege.h"
#include "registry.h"
#include "request.h"
#include "serve.h"
#include "write.h"
#include <fuse_lowlevel.h> /* fuse_parse_cmdline */

/* configure's directories (ledgerfs(8) FILES); Makefile.am passes them. */
#ifndef LEDGERFS_SYSCONFDIR
#define LEDGERFS_SYSCONFDIR "/etc"
#endif
#ifndef LEDGERFS_LOCALSTATEDIR
#define LEDGERFS_LOCALSTATEDIR "/var"
#endif
#ifndef LEDGERFS_RUNSTATEDIR
#define LEDGERFS_RUNSTATEDIR "/run"
#endif
#define DEFAULT_BACKING		LEDGERFS_LOCALSTATEDIR "/lib/ledgerfs"
#define DEFAULT_KEY		LEDGERFS_SYSCONFDIR "/ledgerfs/host.key"
#define DEFAULT_MOUNT		LEDGERFS_RUNSTATEDIR "/ledgerfs"
#define LFS_MAX_PENDING_DEFAULT ((uint64_t)64 << 20)
#define LFS_PAD_LEDGER_MAX	((uint64_t)64 << 20)
#define LFS_MAX_LEDGER_MAX	((uint64_t)4 << 30) /* what an export carries */

struct options {
	char *backing;
	char *key;
	char *sync;
	char *user; /* --user: drop to this user after mounting */
	uint64_t max_line;
	uint64_t max_calls;
	uint64_t max_refused;
	uint64_t max_pending;  /* partial target lines, daemon-wide */
	uint64_t max_ledger;   /* ledger bytes per case */
	uint64_t pad_ledger;   /* zeros written ahead (ledgerfs-ledger(5)) */
	uint64_t journal_size; /* --sync=journal's file */
};

/*
 * Every daemon option, once: each is taken as --NAME=VALUE, --NAME VALUE
 * and -o NAME=VALUE (ledgerfs(8) OPTIONS).  A new option is one row here
 * and one field above.
 */
#define OPT(n, t, f, w, a, h)                                                  \
	{                                                                      \
		n, t, offsetof(struct options, f), w, a, h                     \
	}
static const struct lfs_opt option_table[] = {
	OPT("backing", LFS_OPT_PATH, backing, NULL, "DIR",
	    "ledgers and case state (default " DEFAULT_BACKING ")"),
	OPT("key", LFS_OPT_PATH, key, NULL, "FILE",
	    "host key, created when absent (default " DEFAULT_KEY ")"),
	OPT("max-line", LFS_OPT_SIZE, max_line, NULL, "BYTES",
	    "request line limit (default 1MiB)"),
	OPT("max-calls", LFS_OPT_COUNT, max_calls, NULL, "N",
	    "calls per case before calls are blocked (default 100000)"),
	OPT("max-refused", LFS_OPT_COUNT, max_refused, NULL, "N",
	    "refused rows kept per case (default 64)"),
	OPT("max-pending", LFS_OPT_SIZE, max_pending, NULL, "BYTES",
	    "partial target lines held, daemon-wide (default 64MiB)"),
	OPT("max-ledger", LFS_OPT_SIZE, max_ledger, NULL, "BYTES",
	    "ledger bytes per case before calls are blocked (default 1GiB)"),
	OPT("sync", LFS_OPT_WORD, sync, "group|file|journal",
	    "group|file|journal",
	    "one flush shared by rows (group, default), one per row, or "
	    "one of a commit journal"),
	OPT("user", LFS_OPT_NAME, user, NULL, "NAME",
	    "after mounting, run as this unprivileged user"),
	OPT("pad-ledger", LFS_OPT_SIZE, pad_ledger, NULL, "BYTES",
	    "grow ledgers into zeros written ahead (default 0: off)"),
	OPT("journal-size", LFS_OPT_SIZE, journal_size, NULL, "BYTES",
	    "the commit journal of --sync=journal (default 64MiB)"),
	{NULL, 0, 0, NULL, NULL, NULL},
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [-f] [--OPTION=VALUE | --OPTION VALUE | -o OPTION=VALUE]...\n"
		"       [-o FUSE_OPTION]... [SOURCE] [MOUNTPOINT]\n\n",
		prog);
	lfs_opts_usage(f, option_table);
	fprintf(f,
		"  %-22s stay in the foreground (as under systemd)\n"
		"  %-22s a libfuse mount option, or one of the above\n"
		"  %-22s print this, or the version\n\n"
		"SOURCE (as mount(8) passes it) is the backing folder; 'ledgerfs'\n"
		"or 'none' mean --backing or its default.  MOUNTPOINT defaults to\n"
		"" DEFAULT_MOUNT ".  See ledgerfs(8).\n",
		"-f", "-o OPTION[,OPTION]", "-h, -V");
}

/* path made absolute against the working folder (the daemon leaves it). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out = NULL;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)) ||
	    asprintf(&out, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < 0)
		return NULL;
	return out;
}

/*
 * Settle the three paths before anything is created: SOURCE, when given
 * and not a placeholder, is the backing folder; relative paths are made
 * absolute (a daemon leaves its folder); the mount point must be one.
 * 0, or the exit status after one line on stderr.
 */
static int settle_paths(struct options *o, const struct lfs_cmdline *cl,
			char mnt[PATH_MAX])
{
	const char *src = cl->npos == 2 ? cl->pos[0] : NULL;
	const char *mp = cl->npos ? cl->pos[cl->npos - 1] : DEFAULT_MOUNT;
	char *t;
	struct stat st;

	if (src && strcmp(src, "ledgerfs") && strcmp(src, "none")) {
		char *given = o->backing ? absolute(o->backing) : NULL;

		t = absolute(src);
		if (t && given && !lfs_same_folder_path(t, given)) {
			fprintf(stderr,
				"ledgerfs: SOURCE %s and --backing=%s disagree; give one\n",
				t, o->backing);
			free(t);
			free(given);
			return 2;
		}
		free(given);
		free(o->backing);
		o->backing = t;
	} else if (o->backing) {
		t = absolute(o->backing);
		free(o->backing);
		o->backing = t;
	} else {
		o->backing = strdup(DEFAULT_BACKING);
	}
	t = absolute(o->key ? o->key : DEFAULT_KEY);
	free(o->key);
	o->key = t;
	if (!o->backing || !o->key) {
		fprintf(stderr, "ledgerfs: out of memory\n");
		return 1;
	}
	if (!realpath(mp, mnt) || stat(mnt, &st) < 0) {
		fprintf(stderr, "ledgerfs: mount point %s: %s\n", mp,
			strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "ledgerfs: mount point %s is not a folder\n",
			mp);
		return 1;
	}
	return 0;
}

/*
 * Each open case holds a descriptor (its ledger), and each call in
 * flight a few, so thousands of cases need more than the usual limits: the soft limit goes
 * up to the hard one, and a daemon allowed to (root, CAP_SYS_RESOURCE)
 * lifts the hard one to the kernel's nr_open first (ledgerfs(8) LIMITS).
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	unsigned long long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%llu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (nr_open > rl.rlim_max) {
		struct rlimit up = {(rlim_t)nr_open, (rlim_t)nr_open};

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* What the start wrote back from the commit journal (ledgerfs(8) RESTART). */
static void report_journal(const struct journal_report *rep)
{
	if (!rep->rows)
		return;
	fprintf(stderr,
		"ledgerfs: commit journal: %llu rows of the last run, %llu "
		"written back into their ledgers, %llu skipped%s%s\n",
		rep->rows, rep->written, rep->skipped, rep->skipped ? ": " : "",
		rep->skip_reason);
}

/* How much the group commit shared, for the log of a foreground daemon. */
static void report_commits(struct registry *reg)
{
	unsigned long long flushes, rows;

	registry_commit_counts(reg, &flushes, &rows);
	if (flushes)
		fprintf(stderr,
			"ledgerfs: stopped; %llu rows made durable by %llu flushes\n",
			rows, flushes);
	if (lfs_write_count())
		fprintf(stderr,
			"ledgerfs: %llu writes of targets answered with no "
			"thread waiting for their flush\n",
			lfs_write_count());
}

#define UNSET UINT64_MAX

/*
 * The bounds that take no 0 (ledgerfs(8) OPTIONS): a given 0 is refused,
 * one not given becomes 0, the daemon's "use the default".  0, or 2.
 */
static int settle_zeros(struct options *o)
{
	struct {
		const char *name;
		uint64_t *v;
	} const t[] = {
		{"max-line", &o->max_line},
		{"max-calls", &o->max_calls},
		{"max-refused", &o->max_refused},
		{"max-pending", &o->max_pending},
		{"max-ledger", &o->max_ledger},
		{"journal-size", &o->journal_size},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (*t[i].v == 0) {
			fprintf(stderr, "ledgerfs: --%s must be above 0\n",
				t[i].name);
			return 2;
		}
		if (*t[i].v == UNSET)
			*t[i].v = 0;
	}
	return 0;
}

/*
 * --max-pending and --max-ledger (ledgerfs(8) LIMITS), each with a floor
 * that keeps the daemon usable.  0, or 2 after saying why.
 */
static int settle_bounds(const struct options *o, struct case_limits *lim,
			 struct lfs_ctx *ctx)
{
	unsigned long long min_ledger = case_min_ledger(lim->max_line);

	ctx->max_pending =
		o->max_pending ? o->max_pending : LFS_MAX_PENDING_DEFAULT;
	if (ctx->max_pending <= lim->max_line) {
		fprintf(stderr,
			"ledgerfs: --max-pending must be more than --max-line "
			"(%zu bytes)\n",
			lim->max_line);
		return 2;
	}
	lim->max_ledger =
		o->max_ledger ? o->max_ledger : CASE_MAX_LEDGER_DEFAULT;
	if (lim->max_ledger < min_ledger) {
		fprintf(stderr,
			"ledgerfs: --max-ledger must be at least %llu bytes "
			"with this --max-line (room for the rows that end a "
			"case)\n",
			min_ledger);
		return 2;
	}
	return 0;
}

static void warn_case(const char *name, const char *reason)
{
	fprintf(stderr, "ledgerfs: case %s not served: %s\n", name, reason);
}

/*
 * --user (ledgerfs(8) PRIVILEGE): the user must exist, not be root, and
 * own the backing folder (made for it when missing).  0, or exit status.
 */
static int settle_user(const struct options *o, struct priv_user *u)
{
	struct lf_why why;

	if (!o->user)
		return 0;
	if (priv_lookup(o->user, u, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		return 2;
	}
	/* "This user" of the safety checks is --user's from here on. */
	backing_set_user(u->uid);
	if (mkdir(o->backing, 0700) == 0 && chown(o->backing, u->uid, u->gid))
		fprintf(stderr, "ledgerfs: chown %s: %s\n", o->backing,
			strerror(errno));
	return 0;
}

/*
 * The checkpoint signing key, beside the host key (KEY.sign), under the
 * same rules, created on first start like the host key (ledgerfs(8),
 * --key).  0, or -1 said on stderr.
 */
static int lfs_load_signing_key(const char *host_key_path,
				const unsigned char host_key[CHAIN_KEY_BYTES])
{
	unsigned char seed[SIGN_SEED_BYTES];
	char fp[CHAIN_FP_LEN + 1], *path = sign_key_path(host_key_path);
	struct lf_why why = {{0}};
	int rc = -1;

	if (!path) {
		fputs("ledgerfs: out of memory\n", stderr);
		return -1;
	}
	if (backing_check_key(path, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		goto out;
	}
	if (chain_load_host_key(path, seed, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: checkpoint signing key: %s\n",
			why.msg);
		goto out;
	}
	chain_key_fingerprint(host_key, CHAIN_KEY_BYTES, fp);
	case_ckpt_set_signer(seed, fp);
	rc = 0;
out:
	explicit_bzero(seed, sizeof(seed));
	free(path);
	return rc;
}

/*
 * The sizes of --max-ledger, --pad-ledger and --journal-size and how they
 * go with --sync, judged with the other options: 0, or 2 said on stderr.
 */
static int settle_sync(struct options *o)
{
	bool journal = o->sync && !strcmp(o->sync, "journal");

	/* ledgerctl export hands on a ledger of at most 4 GiB. */
	if (o->max_ledger > LFS_MAX_LEDGER_MAX) {
		fprintf(stderr, "ledgerfs: --max-ledger is at most 4GiB\n");
		return 2;
	}

	if (o->pad_ledger > LFS_PAD_LEDGER_MAX) {
		fprintf(stderr, "ledgerfs: --pad-ledger is at most 64MiB\n");
		return 2;
	}
	if (!o->journal_size)
		o->journal_size = JOURNAL_SIZE_DEFAULT;
	if (o->journal_size < JOURNAL_SIZE_MIN ||
	    o->journal_size > JOURNAL_SIZE_MAX) {
		fprintf(stderr, "ledgerfs: --journal-size is 256KiB to 1GiB\n");
		return 2;
	}
	/* Both exist to spare a flush its journal commit: one is enough. */
	if (journal && o->pad_ledger) {
		fprintf(stderr, "ledgerfs: --pad-ledger and --sync=journal "
				"do not go together\n");
		return 2;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	struct options o = {0};
	struct lfs_cmdline cl;
	struct fuse_cmdline_opts fo = {0};
	struct fuse *fuse = NULL;
	struct lfs_ctx ctx = {0};
	struct case_limits lim = {0};
	struct priv_user user = {0};
	unsigned char key[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	char mnt[PATH_MAX];
	struct backing_made made;
	pid_t helper = -1;
	int rc, hsock = -1;
	bool mounted = false, journal, noticed = false, served = false;

	/* Not given: UNSET, so that a given 0 can be told apart and refused. */
	o.max_line = o.max_calls = o.max_refused = o.max_pending =
		o.max_ledger = o.journal_size = UNSET;
	rc = lfs_opts_parse(option_table, &o, argc, argv, &cl);
	if (rc)
		goto out;
	rc = settle_zeros(&o);
	if (rc)
		goto out;
	if (cl.help || cl.version) {
		if (cl.help)
			usage(stdout, argv[0]);
		else
			printf("ledgerfs " LEDGERFS_VERSION "\n");
		goto out;
	}
	rc = settle_paths(&o, &cl, mnt);
	if (rc)
		goto out;
	/* From here a refused start takes away what it made (OPTIONS). */
	backing_made_notice(o.backing, o.key, &made);
	noticed = true;
	lim.max_line = o.max_line ? o.max_line : REQUEST_MAX_LINE_DEFAULT;
	lim.max_calls = o.max_calls;
	lim.max_refused = o.max_refused ? o.max_refused : 64;
	rc = settle_bounds(&o, &lim, &ctx);
	if (rc)
		goto out;
	rc = settle_user(&o, &user);
	if (rc)
		goto out;
	rc = settle_sync(&o);
	if (rc)
		goto out;
	rc = 2;
	if (fuse_parse_cmdline(&cl.fuse, &fo) != 0)
		goto out;
	/* Targets run as other users; modes are enforced by the kernel. */
	fuse_opt_add_arg(&cl.fuse, "-oallow_other,default_permissions");
	fuse_opt_add_arg(&cl.fuse, "-osubtype=ledgerfs,fsname=ledgerfs");
	/*
	 * libfuse judges its own options here, before anything is created;
	 * what it says becomes part of our one line (OPTIONS).
	 */
	fuse_set_log_func(lfs_libfuse_log_keep);
	fuse = fuse_new(&cl.fuse, &lfs_ops, sizeof(lfs_ops), &ctx);
	fuse_set_log_func(NULL);
	if (!fuse) {
		fprintf(stderr,
			"ledgerfs: refusing to start: libfuse options not "
			"accepted: %s\n",
			lfs_libfuse_said());
		goto out;
	}
	rc = 1;
	chain_init();
	raise_fd_limit();
	/*
	 * A fixed mmap threshold: freed partial-line buffers go back to the
	 * kernel at once (glibc's sliding threshold would keep them in the
	 * heap after the first large free).
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/*
	 * The key by the backing folder's rules (ledgerfs(8), SAFETY
	 * CHECKS), before the backing folder is made; then the backing
	 * folder, before a key file is created anywhere.
	 */
	if (backing_check_key(o.key, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		goto out;
	}
	if (backing_check(o.backing, mnt, o.key, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		goto out;
	}
	if (chain_load_host_key(o.key, key, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: host key: %s\n", why.msg);
		goto out;
	}
	/* Before any case loads: its checkpoints are checked at load. */
	if (lfs_load_signing_key(o.key, key) < 0) {
		explicit_bzero(key, sizeof(key));
		goto out;
	}
	journal = o.sync && !strcmp(o.sync, "journal");
	ledger_set_padding((long long)o.pad_ledger);
	hsock = lfs_start_helper(mnt, o.user, &helper);
	if (hsock < 0) {
		fprintf(stderr,
			"ledgerfs: cannot start the executor helper: %s\n",
			strerror(errno));
		explicit_bzero(key, sizeof(key));
		goto out;
	}
	if (o.user) {
		/* Mount as root, then drop before any case is touched. */
		if (fuse_mount(fuse, mnt) != 0) {
			explicit_bzero(key, sizeof(key));
			goto out;
		}
		mounted = true;
		if (priv_drop(&user, &why) != LF_OK) {
			fprintf(stderr, "ledgerfs: refusing to serve: %s\n",
				why.msg);
			explicit_bzero(key, sizeof(key));
			goto out;
		}
	}
	if (registry_open(o.backing, key, &lim, warn_case, &ctx.reg, &why) !=
	    LF_OK) {
		fprintf(stderr, "ledgerfs: %s\n", why.msg);
		explicit_bzero(key, sizeof(key));
		goto out;
	}
	explicit_bzero(key, sizeof(key));
	report_journal(registry_journal_report(ctx.reg));
	if ((!o.sync || strcmp(o.sync, "file")) &&
	    !registry_group_commit(ctx.reg) && !journal)
		fprintf(stderr,
			"ledgerfs: no group commit here (syncfs is not known "
			"to be durable on the backing filesystem); one "
			"fdatasync per row\n");
	if (registry_journal(ctx.reg, journal ? o.journal_size : 0, &why) !=
	    LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		registry_free(ctx.reg);
		goto out;
	}
	ctx.max_line = lim.max_line;
	ctx.started = time(NULL);
	if (!mounted && fuse_mount(fuse, mnt) != 0) {
		registry_free(ctx.reg);
		goto out;
	}
	mounted = false; /* lfs_serve unmounts */
	served = true;
	rc = lfs_serve(fuse, &fo, mnt, &ctx, hsock, o.user != NULL);
	hsock = -1;
	/* Deferred writes are told (write.c) before their files go. */
	registry_drain(ctx.reg);
	lfs_fh_free_all();
	report_commits(ctx.reg);
	registry_free(ctx.reg);
out:
	if (hsock >= 0) {
		/* Not served: the helper ends, and detaches a mount after --user. */
		if (mounted && !o.user)
			fuse_unmount(fuse);
		close(hsock);
	}
	if (helper > 0)
		waitpid(helper, NULL, 0);
	if (rc && noticed && !served)
		backing_made_undo(o.backing, o.key, &made);
	if (fuse)
		fuse_destroy(fuse);
	free(fo.mountpoint);
	lfs_opts_free(option_table, &o, &cl);
	errlog_end();
	return rc;
}
