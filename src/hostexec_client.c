/* SPDX-License-Identifier: MIT */
/*
 * hostexec_client.c - the daemon's side of the executor helper
 * (hostexec.h): a call thread sends its request and sleeps until the
 * reader thread hands it the answer, so no FUSE thread forks, and a slow
 * executor holds only its own caller.  Slots bound how many run at once,
 * per case and in all (ledgerfs(8) HOST EXECUTORS).
 */
#include "hostexec.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct waiter {
	uint64_t id;
	bool done;
	struct hostexec_result res;
	struct waiter *next;
};

struct hostexec {
	int sock;
	pthread_t reader;
	bool reader_started;
	pthread_mutex_t lock; /* everything below, and the cases' counters */
	pthread_cond_t cond;
	pthread_mutex_t send_lock; /* one frame at a time on the socket */
	uint64_t next_id;
	unsigned running;
	bool dead;     /* the helper is gone */
	bool stopping; /* the daemon stops: no call waits for a result */
	struct waiter *waiting;
};

/* Hand one answer to its waiter (under lock). */
static void client_deliver(struct hostexec *hx, uint64_t id,
			   struct hostexec_result *r)
{
	struct waiter *w;

	for (w = hx->waiting; w; w = w->next) {
		if (w->id == id && !w->done) {
			w->res = *r;
			w->done = true;
			r->returned = NULL;
			pthread_cond_broadcast(&hx->cond);
			return;
		}
	}
	hostexec_result_clear(r);
}

static void *client_reader(void *arg)
{
	struct hostexec *hx = arg;
	struct hostexec_reader rd = {0};
	struct hostexec_result r;
	struct lf_why why;
	const char *body;
	size_t len;
	uint64_t id;
	ssize_t n;
	char *room;
	int got;

	for (;;) {
		room = hostexec_reader_space(&rd, 65536);
		if (!room)
			break;
		n = read(hx->sock, room, 65536);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		rd.len += (size_t)n;
		while ((got = hostexec_reader_next(&rd, &body, &len)) == 1) {
			if (hostexec_parse_result(body, len, &id, &r, &why) !=
			    LF_OK)
				continue;
			pthread_mutex_lock(&hx->lock);
			client_deliver(hx, id, &r);
			pthread_mutex_unlock(&hx->lock);
		}
		if (got < 0)
			break;
	}
	hostexec_reader_free(&rd);
	pthread_mutex_lock(&hx->lock);
	hx->dead = true;
	pthread_cond_broadcast(&hx->cond);
	pthread_mutex_unlock(&hx->lock);
	return NULL;
}

struct hostexec *hostexec_client_new(int sock)
{
	struct hostexec *hx = calloc(1, sizeof(*hx));

	if (!hx)
		return NULL;
	hx->sock = sock;
	hx->next_id = 1;
	pthread_mutex_init(&hx->lock, NULL);
	pthread_mutex_init(&hx->send_lock, NULL);
	pthread_cond_init(&hx->cond, NULL);
	if (pthread_create(&hx->reader, NULL, client_reader, hx) != 0) {
		pthread_mutex_destroy(&hx->lock);
		pthread_mutex_destroy(&hx->send_lock);
		pthread_cond_destroy(&hx->cond);
		free(hx);
		return NULL;
	}
	hx->reader_started = true;
	return hx;
}

void hostexec_client_free(struct hostexec *hx)
{
	if (!hx)
		return;
	/* The reader ends at the socket's end; the helper sees EOF. */
	shutdown(hx->sock, SHUT_RDWR);
	if (hx->reader_started)
		pthread_join(hx->reader, NULL);
	close(hx->sock);
	pthread_mutex_destroy(&hx->lock);
	pthread_mutex_destroy(&hx->send_lock);
	pthread_cond_destroy(&hx->cond);
	free(hx);
}

/*
 * Send rq and wait for its answer into res.  LF_IO with why when the
 * helper is gone or the frame cannot be sent.
 */
static enum lf_err client_roundtrip(struct hostexec *hx,
				    struct hostexec_request *rq,
				    struct hostexec_result *res,
				    struct lf_why *why)
{
	struct waiter w = {0}, **pp;
	enum lf_err e = LF_OK;
	size_t len = 0;
	char *text;
	int sent;

	pthread_mutex_lock(&hx->lock);
	rq->id = w.id = hx->next_id++;
	w.next = hx->waiting;
	hx->waiting = &w;
	pthread_mutex_unlock(&hx->lock);
	text = hostexec_request_text(rq, &len);
	pthread_mutex_lock(&hx->send_lock);
	sent = text ? hostexec_send_frame(hx->sock, text, len) : -1;
	pthread_mutex_unlock(&hx->send_lock);
	free(text);
	pthread_mutex_lock(&hx->lock);
	if (sent < 0)
		e = lf_fail(why, LF_IO,
			    len > HOSTEXEC_FRAME_MAX
				    ? "the call's arguments are too large for "
				      "the executor helper"
				    : "cannot reach the executor helper");
	while (e == LF_OK && !w.done && !hx->dead &&
	       !(hx->stopping && rq->op == HOSTEXEC_RUN))
		pthread_cond_wait(&hx->cond, &hx->lock);
	if (e == LF_OK && !w.done && !hx->dead)
		e = lf_fail(why, LF_CLOSED, "the daemon is stopping");
	else if (e == LF_OK && !w.done)
		e = lf_fail(why, LF_IO, "the executor helper is gone");
	for (pp = &hx->waiting; *pp; pp = &(*pp)->next) {
		if (*pp == &w) {
			*pp = w.next;
			break;
		}
	}
	pthread_mutex_unlock(&hx->lock);
	if (e == LF_OK)
		*res = w.res;
	else
		hostexec_result_clear(&w.res);
	return e;
}

enum lf_err hostexec_run(struct hostexec *hx, unsigned *case_running,
			 const struct exec_spec *spec, const json_t *args,
			 struct hostexec_result *res, struct lf_why *why)
{
	struct hostexec_request rq = {0};
	enum lf_err e;

	memset(res, 0, sizeof(*res));
	if (!hx)
		return lf_fail(why, LF_IO,
			       "this process has no executor helper");
	rq.op = HOSTEXEC_RUN;
	rq.spec = (struct exec_spec *)spec; /* borrowed: not cleared */
	rq.stdin_text = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!rq.stdin_text)
		return lf_fail(why, LF_NOMEM, "out of memory");
	rq.stdin_len = strlen(rq.stdin_text);
	pthread_mutex_lock(&hx->lock);
	while (!hx->dead && !hx->stopping &&
	       (hx->running >= HOSTEXEC_MAX_TOTAL ||
		*case_running >= HOSTEXEC_MAX_PER_CASE))
		pthread_cond_wait(&hx->cond, &hx->lock);
	if (hx->stopping) {
		pthread_mutex_unlock(&hx->lock);
		free(rq.stdin_text);
		return lf_fail(why, LF_CLOSED, "the daemon is stopping");
	}
	hx->running++;
	(*case_running)++;
	pthread_mutex_unlock(&hx->lock);
	e = client_roundtrip(hx, &rq, res, why);
	pthread_mutex_lock(&hx->lock);
	hx->running--;
	(*case_running)--;
	pthread_cond_broadcast(&hx->cond);
	pthread_mutex_unlock(&hx->lock);
	free(rq.stdin_text);
	return e;
}

void hostexec_client_stop(struct hostexec *hx)
{
	if (!hx)
		return;
	pthread_mutex_lock(&hx->lock);
	hx->stopping = true;
	pthread_cond_broadcast(&hx->cond);
	pthread_mutex_unlock(&hx->lock);
}

enum lf_err hostexec_unmount(struct hostexec *hx, struct lf_why *why)
{
	struct hostexec_request rq = {0};
	struct hostexec_result res;
	enum lf_err e;

	if (!hx)
		return lf_fail(why, LF_IO,
			       "this process has no executor helper");
	rq.op = HOSTEXEC_UNMOUNT;
	e = client_roundtrip(hx, &rq, &res, why);
	if (e != LF_OK)
		return e;
	if (res.is_error)
		e = lf_fail(why, LF_IO, "%s", res.reason);
	hostexec_result_clear(&res);
	return e;
}
