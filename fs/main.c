/*
 * main.c - the ledgerfs daemon: options, the host key, the safety checks
 * on the backing folder, loading every case, then the multithreaded FUSE
 * loop.  Refuses to start, saying why, rather than run unsafely.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"
#include "chain.h"
#include "ops.h"
#include "registry.h"
#include "request.h"
#include "units.h"
#include <fuse_lowlevel.h> /* fuse_parse_cmdline */

#define DEFAULT_BACKING		"/var/lib/ledgerfs"
#define DEFAULT_KEY		"/etc/ledgerfs/host.key"
#define LFS_THREADS		256 /* worker threads unless -o max_threads */
#define LFS_IDLE_THREADS	64 /* idle threads kept unless -o max_idle_threads */
#define LFS_MAX_PENDING_DEFAULT ((size_t)64 << 20)

struct options {
	char *backing;
	char *key;
	char *mountpoint;
	char *sync;
	unsigned long max_line;
	unsigned long max_calls;
	unsigned long max_refused;
	char *max_pending; /* a size (units_size) */
	char *max_ledger;  /* a size (units_size) */
	int show_help;
	int show_version;
};

#define OPT(t, p)                                                              \
	{                                                                      \
		t, offsetof(struct options, p), 1                              \
	}
static const struct fuse_opt option_spec[] = {
	OPT("--backing=%s", backing),
	OPT("--key=%s", key),
	OPT("--max-line=%lu", max_line),
	OPT("--max-calls=%lu", max_calls),
	OPT("--max-refused=%lu", max_refused),
	OPT("--max-pending=%s", max_pending),
	OPT("--max-ledger=%s", max_ledger),
	OPT("--sync=%s", sync),
	OPT("-h", show_help),
	OPT("--help", show_help),
	OPT("-V", show_version),
	OPT("--version", show_version),
	FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct options *o = data;

	(void)outargs;
	if (key == FUSE_OPT_KEY_NONOPT && !o->mountpoint) {
		o->mountpoint = strdup(arg);
		return 1; /* keep it for libfuse too */
	}
	return 1;
}

static void usage(const char *prog)
{
	printf("usage: %s [-f] [--backing=DIR] [--key=FILE] [--max-line=BYTES]\n"
	       "       [--max-calls=N] [--max-refused=N] [--sync=group|file]\n"
	       "       [--max-pending=SIZE] [--max-ledger=SIZE]\n"
	       "       [-o OPTION]... MOUNTPOINT\n\n"
	       "  --backing=DIR     ledgers and case state (default " DEFAULT_BACKING
	       ")\n"
	       "  --key=FILE        host key, created when absent (default " DEFAULT_KEY
	       ")\n"
	       "  --max-line=BYTES  request line limit (default 1048576)\n"
	       "  --max-calls=N     calls per case before calls are blocked (default 100000)\n"
	       "  --max-refused=N   refused rows kept per case (default 64)\n"
	       "  --max-pending=SIZE partial target lines held, daemon-wide (default 64MiB)\n"
	       "  --max-ledger=SIZE ledger bytes per case before calls are blocked (default 1GiB)\n"
	       "  --sync=group      rows appended at once share one flush (default)\n"
	       "  --sync=file       one fdatasync per row\n"
	       "  -f                stay in the foreground\n"
	       "  -o OPTION         a libfuse mount option\n\n"
	       "See ledgerfs(8).\n",
	       prog);
}

/*
 * Mount and run the loop.  fuse_main would do, but its thread pool is
 * fixed at ten busy threads, and every call thread waits for its flush:
 * concurrent cases need as many threads as there are cases calling.
 */
static int lfs_serve(struct fuse_args *args, struct lfs_ctx *ctx)
{
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config *cfg = NULL;
	struct fuse *fuse;
	int rc = 1;

	if (fuse_parse_cmdline(args, &opts) != 0)
		return 2;
	fuse = fuse_new(args, &lfs_ops, sizeof(lfs_ops), ctx);
	if (!fuse)
		goto out;
	if (fuse_mount(fuse, opts.mountpoint) != 0)
		goto out_destroy;
	if (fuse_daemonize(opts.foreground) != 0 ||
	    fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out_unmount;
	if (opts.singlethread) {
		rc = fuse_loop(fuse) ? 1 : 0;
	} else {
		cfg = fuse_loop_cfg_create();
		if (!cfg)
			goto out_signals;
		fuse_loop_cfg_set_clone_fd(cfg, opts.clone_fd);
		/*
		 * libfuse keeps 10 idle threads by default; a burst of
		 * concurrent cases would create and destroy threads on
		 * every wave, so keep as many as typically call at once.
		 */
		fuse_loop_cfg_set_idle_threads(cfg,
					       opts.max_idle_threads <= 100000
						       ? opts.max_idle_threads
						       : LFS_IDLE_THREADS);
		/*
		 * libfuse 3.14 parses -o max_threads into opts but fills in
		 * its own default of 10, which cannot be told from a given
		 * 10: only N > 10 is taken as the caller's.
		 */
		fuse_loop_cfg_set_max_threads(
			cfg, opts.max_threads > 10 && opts.max_threads <= 100000
				     ? opts.max_threads
				     : LFS_THREADS);
		rc = fuse_loop_mt(fuse, cfg) ? 1 : 0;
		fuse_loop_cfg_destroy(cfg);
	}
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
out:
	free(opts.mountpoint);
	return rc;
}

/*
 * Each open case holds two descriptors (its folder and its ledger), so
 * thousands of cases need more than the usual soft limit of 1024.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
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
}

/*
 * --max-pending and --max-ledger (ledgerfs(8) LIMITS): sizes, each with
 * a floor that keeps the daemon usable.  0, or 2 after saying why.
 */
static int parse_bounds(const struct options *o, struct case_limits *lim,
			struct lfs_ctx *ctx)
{
	uint64_t v;
	struct lf_why why;
	unsigned long long min_ledger = case_min_ledger(lim->max_line);

	ctx->max_pending = LFS_MAX_PENDING_DEFAULT;
	if (o->max_pending) {
		if (units_size(o->max_pending, &v, &why) != LF_OK) {
			fprintf(stderr, "ledgerfs: --max-pending: %s\n",
				why.msg);
			return 2;
		}
		if (v <= lim->max_line || v > SIZE_MAX) {
			fprintf(stderr,
				"ledgerfs: --max-pending must be more than "
				"--max-line (%zu bytes)\n",
				lim->max_line);
			return 2;
		}
		ctx->max_pending = (size_t)v;
	}
	lim->max_ledger = CASE_MAX_LEDGER_DEFAULT;
	if (o->max_ledger) {
		if (units_size(o->max_ledger, &v, &why) != LF_OK) {
			fprintf(stderr, "ledgerfs: --max-ledger: %s\n",
				why.msg);
			return 2;
		}
		if (v < min_ledger) {
			fprintf(stderr,
				"ledgerfs: --max-ledger must be at least %llu "
				"bytes with this --max-line (room for the rows "
				"that end a case)\n",
				min_ledger);
			return 2;
		}
		lim->max_ledger = v;
	}
	return 0;
}

static void warn_case(const char *name, const char *reason)
{
	fprintf(stderr, "ledgerfs: case %s not served: %s\n", name, reason);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct options o = {0};
	struct lfs_ctx ctx = {0};
	struct case_limits lim = {0};
	unsigned char key[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	char mnt[PATH_MAX];
	int rc = 1;

	if (fuse_opt_parse(&args, &o, option_spec, opt_proc) < 0)
		return 2;
	if (o.show_help) {
		usage(argv[0]);
		rc = 0;
		goto out;
	}
	if (o.show_version) {
		printf("ledgerfs " LEDGERFS_VERSION "\n");
		rc = 0;
		goto out;
	}
	if (!o.mountpoint) {
		usage(argv[0]);
		rc = 2;
		goto out;
	}
	if (o.sync && strcmp(o.sync, "group") && strcmp(o.sync, "file")) {
		fprintf(stderr,
			"ledgerfs: --sync must be group or file, not %s\n",
			o.sync);
		rc = 2;
		goto out;
	}
	if (!realpath(o.mountpoint, mnt)) {
		fprintf(stderr, "ledgerfs: mount point %s: %s\n", o.mountpoint,
			strerror(errno));
		goto out;
	}
	chain_init();
	raise_fd_limit();
	/*
	 * A fixed mmap threshold: freed partial-line buffers go back to the
	 * kernel at once (glibc's sliding threshold would keep them in the
	 * heap after the first large free).
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	/* Judge the backing folder before a key file is created anywhere. */
	if (backing_check(o.backing ? o.backing : DEFAULT_BACKING, mnt,
			  o.key ? o.key : DEFAULT_KEY, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		goto out;
	}
	/* The key by the backing folder's rules (ledgerfs(8), KEY). */
	if (backing_check_key(o.key ? o.key : DEFAULT_KEY, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: refusing to start: %s\n", why.msg);
		goto out;
	}
	if (chain_load_host_key(o.key ? o.key : DEFAULT_KEY, key, &why) !=
	    LF_OK) {
		fprintf(stderr, "ledgerfs: host key: %s\n", why.msg);
		goto out;
	}
	lim.max_line = o.max_line ? o.max_line : REQUEST_MAX_LINE_DEFAULT;
	lim.max_calls = o.max_calls;
	lim.max_refused = o.max_refused ? o.max_refused : 64;
	rc = parse_bounds(&o, &lim, &ctx);
	if (rc)
		goto out;
	rc = 1;
	if (registry_open(o.backing ? o.backing : DEFAULT_BACKING, key, &lim,
			  warn_case, &ctx.reg, &why) != LF_OK) {
		fprintf(stderr, "ledgerfs: %s\n", why.msg);
		goto out;
	}
	explicit_bzero(key, sizeof(key));
	if ((!o.sync || strcmp(o.sync, "file")) &&
	    !registry_group_commit(ctx.reg))
		fprintf(stderr,
			"ledgerfs: no group commit here (syncfs is not known "
			"to be durable on the backing filesystem); one "
			"fdatasync per row\n");
	ctx.max_line = lim.max_line;
	ctx.started = time(NULL);
	/* Targets run as other users; modes are enforced by the kernel. */
	fuse_opt_add_arg(&args, "-oallow_other,default_permissions");
	fuse_opt_add_arg(&args, "-osubtype=ledgerfs,fsname=ledgerfs");
	rc = lfs_serve(&args, &ctx);
	report_commits(ctx.reg);
	registry_free(ctx.reg);
out:
	fuse_opt_free_args(&args);
	free(o.backing);
	free(o.key);
	free(o.mountpoint);
	free(o.sync);
	free(o.max_pending);
	free(o.max_ledger);
	return rc;
}
