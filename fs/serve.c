/* SPDX-License-Identifier: MIT */
/*
 * serve.c - the daemon once it is ready: the executor helper forked
 * while it still has one thread, then the multithreaded FUSE loop, its
 * signals, systemd's notifications and the unmount at the end.
 */
#include "serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "errlog.h"
#include "hostexec.h"
#include "loop.h"

#define LFS_THREADS	 256 /* worker threads unless -o max_threads */
#define LFS_IDLE_THREADS 64  /* idle threads kept unless -o max_idle_threads */

/*
 * A stop by SIGTERM, SIGINT or SIGHUP is a clean stop (libfuse ends the
 * loop with the signal's number): every acknowledged row is durable and
 * the cases resume at the next start.
 */
static int loop_status(int r)
{
	return r == 0 || r == SIGTERM || r == SIGINT || r == SIGHUP ? 0 : 1;
}

/*
 * The executor helper (ledgerfs(8) HOST EXECUTORS): forked while the
 * daemon is still whole and has one thread, before it drops privileges
 * and before it serves.  It keeps nothing of the daemon's but the
 * socket: no key, no /dev/fuse, no ledger.  The daemon's end, or -1.
 */
int lfs_start_helper(const char *mnt, const char *user, pid_t *pid)
{
	struct hostexec_helper_conf conf = {
		.mountpoint = mnt,
		.unmount_at_end = user != NULL,
		.default_user = user ? user : "nobody",
	};
	int sv[2], devnull;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	*pid = fork();
	if (*pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (*pid == 0) {
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		syscall(SYS_close_range, 4U, ~0U, 0U);
		/*
		 * No stdio either: a caller reading the daemon's output (a
		 * shell's $(...), mount(8)) must see its end when the daemon
		 * goes to the background, not when the helper does.
		 */
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
			dup2(devnull, 2);
			if (devnull > 3)
				close(devnull);
		}
		_exit(hostexec_helper_main(3, &conf));
	}
	close(sv[1]);
	return sv[0];
}

/*
 * Run the loop on the mounted fuse.  fuse_main would do, but its thread
 * pool is fixed at ten busy threads, and a request can wait for a flush
 * (a host's write, a target's view read of a case being written): the
 * view's own loop (loop.c) sends the target's calls to write.c.
 */
/*
 * A stop (SIGTERM, SIGINT, umount) does not wait for executors: calls
 * waiting on one return and stay pending, and the helper kills them when
 * the socket closes (ledgerfs(8) SIGNALS).
 */
static void serve_stop_executors(void *hx)
{
	hostexec_client_stop(hx);
}

int lfs_serve(struct fuse *fuse, struct fuse_cmdline_opts *opts,
	      const char *mnt, struct lfs_ctx *ctx, int hsock, bool dropped)
{
	struct hostexec *hx = NULL;
	struct lf_why why;
	int rc = 1;

	/*
	 * libfuse leaves an ignored signal ignored, and a shell starts
	 * background jobs with SIGINT ignored: SIGTERM and SIGINT stop the
	 * daemon however it was started (SIGHUP stays as nohup left it).
	 */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	if (fuse_daemonize(opts->foreground) != 0 ||
	    fuse_set_signal_handlers(fuse_get_session(fuse)) != 0)
		goto out_unmount;
	/* Detached (mount(8), fstab): standard error is /dev/null now. */
	if (!opts->foreground)
		errlog_to_syslog();
	/* Threads only now: fuse_daemonize forks and keeps one. */
	hx = hostexec_client_new(hsock);
	if (!hx) {
		close(hsock);
		hsock = -1;
		fprintf(stderr,
			"ledgerfs: cannot talk to the executor helper\n");
		goto out_signals;
	}
	case_set_hostexec(hx);
	/* Under systemd (Type=notify): serving from here on. */
	sd_notifyf(0, "READY=1\nMAINPID=%lu\nSTATUS=serving %s",
		   (unsigned long)getpid(), mnt);
	if (opts->singlethread) {
		rc = loop_status(fuse_loop(fuse));
	} else {
		/*
		 * libfuse 3.14 parses -o max_threads into opts but fills in
		 * its own default of 10, which cannot be told from a given
		 * 10: only N > 10 is taken as the caller's.  Idle threads:
		 * libfuse keeps 10; a burst of concurrent cases would create
		 * and destroy threads on every wave, so keep as many as
		 * typically call at once.
		 */
		rc = loop_status(lfs_loop_mt(
			fuse_get_session(fuse),
			opts->max_threads > 10 && opts->max_threads <= 100000
				? (int)opts->max_threads
				: LFS_THREADS,
			opts->max_idle_threads <= 100000
				? (int)opts->max_idle_threads
				: LFS_IDLE_THREADS,
			serve_stop_executors, hx));
	}
	sd_notify(0, "STOPPING=1");
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
	/*
	 * The loop has ended: a stop signal now (systemd sends SIGTERM right
	 * after ExecStop's unmount) must not cut the clean stop short, which
	 * makes the last rows durable and saves the cases (ledgerfs(8)
	 * SIGNALS).  A stop that hangs is for SIGKILL.
	 */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
out_unmount:
	/* After --user only the helper, still root, may unmount. */
	if (dropped && hx && hostexec_unmount(hx, &why) != LF_OK)
		fprintf(stderr, "ledgerfs: unmount: %s\n", why.msg);
	/*
	 * After the helper's detach libfuse finds the connection gone and
	 * only frees its copy of the mount point.
	 */
	fuse_unmount(fuse);
	/*
	 * A call whose decision row is told now starts its executor
	 * (write.c): on the stopping client, which ends it at once.  No
	 * such call may come once the client is gone.
	 */
	registry_drain(ctx->reg);
	case_set_hostexec(NULL);
	if (hx)
		hostexec_client_free(hx);
	else if (hsock >= 0)
		close(hsock);
	return rc;
}
