/* SPDX-License-Identifier: MIT */
/*
 * mcp_downstream.c - the MCP server a passed call is forwarded to
 * (ledgerfs-mcp(1) DOWNSTREAM): spawned with pipes on its standard input
 * and output, initialized once, then asked tools/call by many threads at
 * once.  A reader thread matches its answers to the waiting requests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcp.h"

extern char **environ;

/* One request waiting for its answer. */
struct ds_wait {
	json_int_t id;
	json_t *result, *error; /* set by the reader */
	bool done;
	struct ds_wait *next;
};

struct mcp_downstream {
	pid_t pid;
	int in_fd, out_fd; /* its stdin (we write), its stdout (we read) */
	pthread_t reader;
	pthread_mutex_t lock, out_lock;
	pthread_cond_t cond;
	json_int_t next_id;
	struct ds_wait *waits;
	bool dead;
};

/* Answer the downstream's own requests: ping, else method not found. */
static void ds_answer(struct mcp_downstream *d, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id"), *r;

	if (!id)
		return; /* a notification */
	if (method && strcmp(method, "ping") == 0)
		r = json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id,
			      "result");
	else
		r = mcp_error(id, -32601, "method not found");
	if (r)
		mcp_send(d->in_fd, &d->out_lock, r);
	json_decref(r);
}

static void ds_deliver(struct mcp_downstream *d, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	struct ds_wait *w;

	if (json_object_get(msg, "method")) {
		ds_answer(d, msg);
		return;
	}
	if (!json_is_integer(id))
		return;
	pthread_mutex_lock(&d->lock);
	for (w = d->waits; w; w = w->next)
		if (w->id == json_integer_value(id) && !w->done) {
			json_t *res = json_object_get(msg, "result");
			json_t *err = json_object_get(msg, "error");

			if (json_is_object(res))
				w->result = json_incref(res);
			else
				w->error =
					json_is_object(err)
						? json_incref(err)
						: json_pack("{s:s}", "message",
							    "malformed answer");
			w->done = true;
			pthread_cond_broadcast(&d->cond);
			break;
		}
	pthread_mutex_unlock(&d->lock);
}

/*
 * A line that cannot be read may have been the answer to any request
 * waiting now, and which one cannot be told: fail them all, so none
 * waits for ever (ledgerfs-mcp(1) DOWNSTREAM).  An answer that still
 * comes later for one of them finds no waiter and is dropped.
 */
static void ds_fail_waiting(struct mcp_downstream *d, const char *why)
{
	struct ds_wait *w;

	pthread_mutex_lock(&d->lock);
	for (w = d->waits; w; w = w->next)
		if (!w->done) {
			w->error = json_pack("{s:s}", "message", why);
			w->done = true;
		}
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static void *ds_reader(void *arg)
{
	struct mcp_downstream *d = arg;
	struct mcp_reader r;
	char *line, why[128];
	size_t len;
	enum mcp_read got;

	mcp_reader_init(&r, d->out_fd);
	while ((got = mcp_read_line(&r, &line, &len)) != MCP_EOF) {
		json_t *msg;

		if (got == MCP_TOO_LONG) {
			mcp_log("downstream: a line over the limit, dropped");
			ds_fail_waiting(d, "the downstream server sent a line "
					   "over the limit");
			continue;
		}
		msg = mcp_parse(line, len, why, sizeof(why));
		if (!json_is_object(msg)) {
			if (msg)
				snprintf(why, sizeof(why), "not an object");
			mcp_log("downstream: not a JSON-RPC message: %s", why);
			ds_fail_waiting(d, "the downstream server sent a "
					   "message that is not JSON-RPC");
		} else {
			ds_deliver(d, msg);
		}
		json_decref(msg);
	}
	mcp_reader_free(&r);
	pthread_mutex_lock(&d->lock);
	d->dead = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* As mcp_downstream_request, giving up at *deadline (CLOCK_REALTIME). */
static json_t *ds_request(struct mcp_downstream *d, const char *method,
			  json_t *params, const bool *cancel,
			  const struct timespec *deadline, json_t **error,
			  bool *sent)
{
	bool timed_out = false;
	struct ds_wait w = {0}, **pp;
	json_t *req, *res = NULL;
	bool cancelled;

	*error = NULL;
	*sent = false;
	pthread_mutex_lock(&d->lock);
	if (d->dead || (cancel && *cancel)) {
		/* Cancelled before it left: the tool never ran. */
		bool dead = d->dead;

		pthread_mutex_unlock(&d->lock);
		*error = json_pack("{s:s}", "message",
				   dead ? "the downstream server has exited"
					: "cancelled");
		return NULL;
	}
	w.id = ++d->next_id;
	w.next = d->waits;
	d->waits = &w;
	pthread_mutex_unlock(&d->lock);
	req = json_pack("{s:s, s:I, s:s, s:O}", "jsonrpc", "2.0", "id", w.id,
			"method", method, "params", params);
	*sent = req && mcp_send(d->in_fd, &d->out_lock, req) == 0;
	json_decref(req);
	pthread_mutex_lock(&d->lock);
	while (*sent && !w.done && !d->dead && !(cancel && *cancel) &&
	       !timed_out) {
		if (deadline)
			timed_out =
				pthread_cond_timedwait(&d->cond, &d->lock,
						       deadline) == ETIMEDOUT;
		else
			pthread_cond_wait(&d->cond, &d->lock);
	}
	for (pp = &d->waits; *pp; pp = &(*pp)->next)
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	cancelled = cancel && *cancel;
	pthread_mutex_unlock(&d->lock);
	if (w.done) {
		res = w.result;
		*error = w.error;
	} else if (cancelled) {
		json_t *note = json_pack(
			"{s:s, s:s, s:{s:I, s:s}}", "jsonrpc", "2.0", "method",
			"notifications/cancelled", "params", "requestId", w.id,
			"reason", "cancelled by the client");

		/* Its answer, if one still comes, is dropped by the reader. */
		if (note)
			mcp_send(d->in_fd, &d->out_lock, note);
		json_decref(note);
		*error = json_pack("{s:s}", "message", "cancelled");
	} else if (timed_out) {
		*error = json_pack("{s:s}", "message", "no answer in time");
	} else {
		*error = json_pack("{s:s}", "message",
				   "the downstream server has exited");
	}
	return res;
}

json_t *mcp_downstream_request(struct mcp_downstream *d, const char *method,
			       json_t *params, const bool *cancel,
			       json_t **error, bool *sent)
{
	return ds_request(d, method, params, cancel, NULL, error, sent);
}

void mcp_downstream_set(struct mcp_downstream *d, bool *flag)
{
	if (!d) {
		*flag = true;
		return;
	}
	pthread_mutex_lock(&d->lock);
	*flag = true;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static int ds_spawn(struct mcp_downstream *d, char **argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int to[2], from[2], rc;

	if (pipe2(to, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(from, O_CLOEXEC) < 0) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, to[0], 0);
	posix_spawn_file_actions_adddup2(&fa, from[1], 1);
	/*
	 * A group of its own, so that stopping it reaches what it started
	 * too (npx's node, a shell's children), which may hold its output.
	 */
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&d->pid, argv[0], &fa, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(to[0]);
	close(from[1]);
	if (rc) {
		close(to[1]);
		close(from[0]);
		errno = rc;
		return -1;
	}
	d->in_fd = to[1];
	d->out_fd = from[0];
	return 0;
}

struct mcp_downstream *mcp_downstream_start(char **argv, uint64_t init_ms)
{
	struct mcp_downstream *d = calloc(1, sizeof(*d));
	json_t *params, *res, *err = NULL, *note;
	struct timespec deadline;
	bool sent;

	if (!d)
		return NULL;
	pthread_mutex_init(&d->lock, NULL);
	pthread_mutex_init(&d->out_lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	/* A downstream that exits must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	if (ds_spawn(d, argv) < 0) {
		mcp_log("downstream %s: %s", argv[0], strerror(errno));
		free(d);
		return NULL;
	}
	if (pthread_create(&d->reader, NULL, ds_reader, d)) {
		mcp_log("downstream: no reader thread");
		close(d->in_fd);
		close(d->out_fd);
		waitpid(d->pid, NULL, 0);
		free(d);
		return NULL;
	}
	params = json_pack("{s:s, s:{}, s:{s:s, s:s}}", "protocolVersion",
			   "2025-06-18", "capabilities", "clientInfo", "name",
			   "ledgerfs-mcp", "version", LEDGERFS_VERSION);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += (time_t)(init_ms / 1000);
	deadline.tv_nsec += (long)(init_ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	res = ds_request(d, "initialize", params, NULL, &deadline, &err, &sent);
	json_decref(params);
	if (!res) {
		mcp_log("downstream %s: initialize failed: %s", argv[0],
			json_string_value(json_object_get(err, "message")));
		json_decref(err);
		mcp_downstream_stop(d);
		return NULL;
	}
	json_decref(res);
	note = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method",
			 "notifications/initialized");
	mcp_send(d->in_fd, &d->out_lock, note);
	json_decref(note);
	return d;
}

/* Join t within secs seconds: 0, or an error number. */
static int ds_join_within(pthread_t t, int secs)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += secs;
	return pthread_timedjoin_np(t, NULL, &ts);
}

/* Reap pid within secs seconds (polled): true once it is gone. */
static bool ds_reap_within(pid_t pid, int secs)
{
	int i, st;

	for (i = 0; i < secs * 20; i++) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

void mcp_downstream_stop(struct mcp_downstream *d)
{
	int st;

	if (!d)
		return;
	/*
	 * An MCP stdio server exits when its input closes; then SIGTERM to
	 * its group, then SIGKILL, two seconds each (ledgerfs-mcp(1)), so a
	 * server that ignores SIGTERM cannot keep this one from exiting.
	 */
	close(d->in_fd);
	if (!ds_reap_within(d->pid, 2)) {
		kill(-d->pid, SIGTERM);
		if (!ds_reap_within(d->pid, 2)) {
			kill(-d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
		}
	}
	/* Its output ends when the last of its group lets go of it. */
	if (ds_join_within(d->reader, 2)) {
		kill(-d->pid, SIGKILL);
		if (ds_join_within(d->reader, 2)) {
			/* Still held: leave the reader its state, and go. */
			pthread_detach(d->reader);
			return;
		}
	}
	close(d->out_fd);
	pthread_mutex_destroy(&d->lock);
	pthread_mutex_destroy(&d->out_lock);
	pthread_cond_destroy(&d->cond);
	free(d);
}
