/* SPDX-License-Identifier: MIT */
/*
 * hostexec_helper.c - the executor helper's loop (ledgerfs(8) HOST
 * EXECUTORS): one process, one thread, forked by the daemon before it
 * drops privileges.  It reads the daemon's frames, starts executors,
 * feeds their stdin, reads their stdout up to the cap, kills a whole
 * process group at its timeout, and answers each call; it unmounts the
 * view when asked, and at the daemon's end after --user.
 */
#include "hostexec_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

struct helper {
	int sock;
	const struct hostexec_helper_conf *conf;
	struct hx_job jobs[HOSTEXEC_MAX_TOTAL];
	bool busy[HOSTEXEC_MAX_TOTAL];
	struct hostexec_reader rd;
	bool sock_open;
};

static int helper_answer(struct helper *h, uint64_t id,
			 struct hostexec_result *res)
{
	size_t len = 0;
	char *text = hostexec_result_text(id, res, &len);
	int rc;

	if (!text) {
		hx_error(res, "spawn_failed", "out of memory");
		json_decref(res->returned);
		res->returned = NULL;
		text = hostexec_result_text(id, res, &len);
	}
	rc = text ? hostexec_send_frame(h->sock, text, len) : -1;
	free(text);
	hostexec_result_clear(res);
	return rc;
}

static void helper_unmount(struct helper *h, struct hostexec_result *res)
{
	if (!h->conf->mountpoint)
		return hx_error(res, "unmount", "no mount point");
	if (umount2(h->conf->mountpoint, MNT_DETACH) < 0 && errno != EINVAL)
		hx_error(res, "unmount", "unmount %s: %s", h->conf->mountpoint,
			 strerror(errno));
}

/* One request from the daemon: start it, or answer it at once. */
static int helper_request(struct helper *h, const char *body, size_t len)
{
	struct hostexec_request rq;
	struct hostexec_result res = {0};
	struct lf_why why;
	int slot, rc = 0;

	if (hostexec_parse_request(body, len, &rq, &why) != LF_OK) {
		hx_error(&res, "bad_request",
			 "the helper refused a request: %s", why.msg);
		return helper_answer(h, rq.id, &res);
	}
	if (rq.op == HOSTEXEC_UNMOUNT) {
		helper_unmount(h, &res);
		rc = helper_answer(h, rq.id, &res);
		goto out;
	}
	if (rq.op == HOSTEXEC_CANCEL) {
		/* Its result, "cancelled", is the run's answer. */
		for (slot = 0; slot < HOSTEXEC_MAX_TOTAL; slot++)
			if (h->busy[slot] && h->jobs[slot].id == rq.id &&
			    !h->jobs[slot].exited) {
				h->jobs[slot].cancelled = true;
				hx_kill(&h->jobs[slot]);
			}
		goto out;
	}
	for (slot = 0; slot < HOSTEXEC_MAX_TOTAL && h->busy[slot]; slot++)
		;
	if (slot == HOSTEXEC_MAX_TOTAL) {
		hx_error(&res, "busy", "more than %d executors at once",
			 HOSTEXEC_MAX_TOTAL);
		rc = helper_answer(h, rq.id, &res);
		goto out;
	}
	if (hx_spawn(&rq, h->conf->default_user, &h->jobs[slot], &res) < 0) {
		hx_job_clear(&h->jobs[slot]);
		rc = helper_answer(h, rq.id, &res);
		goto out;
	}
	rq.stdin_text = NULL; /* the job's now */
	h->busy[slot] = true;
out:
	hostexec_request_clear(&rq);
	return rc;
}

static void job_feed(struct hx_job *j)
{
	ssize_t n = write(j->in_fd, j->in + j->in_off, j->in_len - j->in_off);

	if (n > 0)
		j->in_off += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
	    j->in_off == j->in_len) {
		close(j->in_fd);
		j->in_fd = -1;
	}
}

static void job_read(struct hx_job *j)
{
	ssize_t n;

	for (;;) {
		n = read(j->out_fd, j->out + j->out_len,
			 j->max_output + 1 - j->out_len);
		if (n > 0) {
			j->out_len += (size_t)n;
			if (j->out_len > j->max_output) {
				j->over_cap = true;
				hx_kill(j);
				break;
			}
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		break;
	}
	close(j->out_fd);
	j->out_fd = -1;
}

static void job_reap(struct hx_job *j)
{
	if (waitpid(j->pid, &j->wstatus, WNOHANG) == j->pid) {
		j->exited = true;
		/* What it left running in its group goes with it. */
		kill(-j->pid, SIGKILL);
		close(j->pidfd);
		j->pidfd = -1;
	}
}

/* A job past its deadline: the whole group dies; stop waiting for output. */
static void job_clock(struct hx_job *j, uint64_t now)
{
	if (now < j->deadline_ms)
		return;
	if (!j->exited && !j->timed_out) {
		j->timed_out = true;
		hx_kill(j);
	}
	if (j->exited && j->out_fd >= 0) {
		close(j->out_fd);
		j->out_fd = -1;
	}
}

static int helper_settle(struct helper *h)
{
	struct hostexec_result res;
	int i, rc = 0;

	for (i = 0; i < HOSTEXEC_MAX_TOTAL; i++) {
		struct hx_job *j = &h->jobs[i];

		if (!h->busy[i] || !j->exited || j->out_fd >= 0)
			continue;
		memset(&res, 0, sizeof(res));
		hx_finish(j, &res);
		if (helper_answer(h, j->id, &res) < 0)
			rc = -1;
		hx_job_clear(j);
		h->busy[i] = false;
	}
	return rc;
}

/* Read what the socket has; -1 at its end or a broken frame. */
static int helper_read_sock(struct helper *h)
{
	const char *body;
	size_t len;
	char *room = hostexec_reader_space(&h->rd, 65536);
	ssize_t n;
	int got;

	if (!room)
		return -1;
	n = read(h->sock, room, 65536);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	h->rd.len += (size_t)n;
	while ((got = hostexec_reader_next(&h->rd, &body, &len)) == 1)
		if (helper_request(h, body, len) < 0)
			return -1;
	return got < 0 ? -1 : 0;
}

static int helper_poll(struct helper *h)
{
	struct pollfd fds[1 + 3 * HOSTEXEC_MAX_TOTAL];
	struct hx_job *owner[1 + 3 * HOSTEXEC_MAX_TOTAL];
	uint64_t now = hx_now_ms(), next = UINT64_MAX;
	int nfds = 0, i, timeout;

	fds[nfds].fd = h->sock;
	fds[nfds].events = POLLIN;
	owner[nfds++] = NULL;
	for (i = 0; i < HOSTEXEC_MAX_TOTAL; i++) {
		struct hx_job *j = &h->jobs[i];

		if (!h->busy[i])
			continue;
		if (j->deadline_ms < next)
			next = j->deadline_ms;
		if (j->in_fd >= 0) {
			fds[nfds] = (struct pollfd){j->in_fd, POLLOUT, 0};
			owner[nfds++] = j;
		}
		if (j->out_fd >= 0) {
			fds[nfds] = (struct pollfd){j->out_fd, POLLIN, 0};
			owner[nfds++] = j;
		}
		if (j->pidfd >= 0) {
			fds[nfds] = (struct pollfd){j->pidfd, POLLIN, 0};
			owner[nfds++] = j;
		}
	}
	timeout = next == UINT64_MAX ? -1 : next <= now ? 0 : (int)(next - now);
	if (poll(fds, (nfds_t)nfds, timeout) < 0 && errno != EINTR)
		return -1;
	for (i = 1; i < nfds; i++) {
		struct hx_job *j = owner[i];

		if (!fds[i].revents)
			continue;
		if (fds[i].fd == j->in_fd)
			job_feed(j);
		else if (fds[i].fd == j->out_fd)
			job_read(j);
		else if (fds[i].fd == j->pidfd)
			job_reap(j);
	}
	now = hx_now_ms();
	for (i = 0; i < HOSTEXEC_MAX_TOTAL; i++)
		if (h->busy[i])
			job_clock(&h->jobs[i], now);
	if (helper_settle(h) < 0)
		return -1;
	if (fds[0].revents)
		return helper_read_sock(h);
	return 0;
}

/*
 * The daemon ended without unmounting (killed): its mount answers
 * ENOTCONN.  A live mount there, or none, is left alone.
 */
static bool helper_view_dead(const char *mountpoint)
{
	struct statfs sf;

	return statfs(mountpoint, &sf) < 0 && errno == ENOTCONN;
}

int hostexec_helper_main(int sock, const struct hostexec_helper_conf *conf)
{
	struct helper h = {.sock = sock, .conf = conf, .sock_open = true};
	int i;

	/* It outlives the daemon's signals: it goes when the socket ends. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	while (helper_poll(&h) == 0)
		;
	for (i = 0; i < HOSTEXEC_MAX_TOTAL; i++) {
		if (!h.busy[i])
			continue;
		hx_kill(&h.jobs[i]);
		waitpid(h.jobs[i].pid, NULL, 0);
		hx_job_clear(&h.jobs[i]);
	}
	hostexec_reader_free(&h.rd);
	if (conf->unmount_at_end && conf->mountpoint)
		umount2(conf->mountpoint, MNT_DETACH);
	else if (conf->mountpoint && helper_view_dead(conf->mountpoint))
		umount2(conf->mountpoint, MNT_DETACH);
	close(sock);
	return 0;
}
