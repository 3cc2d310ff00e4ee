/* SPDX-License-Identifier: MIT */
/*
 * hostexec_client.c - the daemon's side of the executor helper
 * (hostexec.h).  A call becomes a job: started, it waits in line for a
 * slot (per case and in all, ledgerfs(8) HOST EXECUTORS), is sent, and
 * its answer is handed to its callback.  Two threads of the client's own
 * do the work: the reader takes the helper's answers off the socket, and
 * the dispatcher sends jobs as slots free and runs every callback, so no
 * FUSE thread forks, sends or waits for an executor, and a callback may
 * take a case's lock (never the thread that led a flush, which must not).
 */
#include "hostexec.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct hostexec_job {
	uint64_t id;
	char *frame; /* the request's frame body */
	size_t len;
	bool slotted;	   /* takes a slot (a run) */
	bool told_nothing; /* no answer comes (a cancel): freed sent */
	struct hostexec_slots *slots; /* the case's, under hx->lock */
	unsigned cancels;	      /* slots->cancels when made */
	hostexec_done_fn done;
	void *arg;
	enum lf_err err;
	struct lf_why why;
	struct hostexec_result res;
	struct hostexec_job *next;
};

/* A list kept in order: first out is the oldest in. */
struct job_list {
	struct hostexec_job *head, **tail;
};

struct hostexec {
	int sock;
	pthread_t reader, dispatcher;
	bool reader_started, dispatcher_started;
	pthread_mutex_t lock; /* everything below, and the cases' counters */
	pthread_cond_t cond;  /* the dispatcher's: work, or the end */
	atomic_ullong next_id;
	unsigned running;
	bool dead;     /* the helper is gone */
	bool stopping; /* the daemon stops: no job waits for an answer */
	bool quit;     /* the dispatcher ends once nothing is left to tell */
	struct job_list queued;	  /* started, waiting for a slot */
	struct job_list sent;	  /* at the helper */
	struct job_list answered; /* callbacks to run */
};

static void list_init(struct job_list *l)
{
	l->head = NULL;
	l->tail = &l->head;
}

static void list_push(struct job_list *l, struct hostexec_job *j)
{
	j->next = NULL;
	*l->tail = j;
	l->tail = &j->next;
}

/* Take j, found through *pp, off l. */
static void list_cut(struct job_list *l, struct hostexec_job **pp)
{
	struct hostexec_job *j = *pp;

	*pp = j->next;
	if (l->tail == &j->next)
		l->tail = pp;
	j->next = NULL;
}

/* A job is over (under lock): give its slot back, queue its callback. */
static void job_over(struct hostexec *hx, struct hostexec_job *j, bool slot)
{
	if (slot && j->slotted) {
		hx->running--;
		j->slots->running--;
	}
	list_push(&hx->answered, j);
	pthread_cond_signal(&hx->cond);
}

/* End every job, queued and sent, with err (under lock). */
static void jobs_end_all(struct hostexec *hx, enum lf_err err, const char *msg)
{
	struct hostexec_job *j;

	while ((j = hx->queued.head)) {
		list_cut(&hx->queued, &hx->queued.head);
		j->err = lf_fail(&j->why, err, "%s", msg);
		job_over(hx, j, false);
	}
	while ((j = hx->sent.head)) {
		list_cut(&hx->sent, &hx->sent.head);
		j->err = lf_fail(&j->why, err, "%s", msg);
		job_over(hx, j, true);
	}
}

/* Hand one answer to its job (under lock); unknown ids are dropped. */
static void client_deliver(struct hostexec *hx, uint64_t id,
			   struct hostexec_result *r)
{
	struct hostexec_job **pp;

	for (pp = &hx->sent.head; *pp; pp = &(*pp)->next) {
		if ((*pp)->id == id) {
			struct hostexec_job *j = *pp;

			list_cut(&hx->sent, pp);
			j->res = *r;
			r->returned = NULL;
			job_over(hx, j, true);
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
	jobs_end_all(hx, LF_IO, "the executor helper is gone");
	pthread_mutex_unlock(&hx->lock);
	return NULL;
}

/* The oldest queued job a slot is free for, taken off the line. */
static struct hostexec_job *job_next_ready(struct hostexec *hx)
{
	struct hostexec_job **pp, *j;

	for (pp = &hx->queued.head; (j = *pp); pp = &j->next) {
		if (j->slotted &&
		    (hx->stopping || hx->running >= HOSTEXEC_MAX_TOTAL ||
		     j->slots->running >= HOSTEXEC_MAX_PER_CASE))
			continue;
		list_cut(&hx->queued, pp);
		if (j->slotted) {
			hx->running++;
			j->slots->running++;
		}
		return j;
	}
	return NULL;
}

/*
 * Send j (without the lock; the dispatcher alone sends).  On failure it
 * is over with LF_IO.
 */
static void job_send(struct hostexec *hx, struct hostexec_job *j)
{
	bool sent;

	if (j->told_nothing) {
		(void)hostexec_send_frame(hx->sock, j->frame, j->len);
		hostexec_job_free(j);
		return;
	}
	pthread_mutex_lock(&hx->lock);
	list_push(&hx->sent, j);
	pthread_mutex_unlock(&hx->lock);
	sent = j->len <= HOSTEXEC_FRAME_MAX &&
	       hostexec_send_frame(hx->sock, j->frame, j->len) == 0;
	if (sent)
		return;
	pthread_mutex_lock(&hx->lock);
	/* Still at the helper's side of the books: not ended meanwhile. */
	for (struct hostexec_job **pp = &hx->sent.head; *pp;
	     pp = &(*pp)->next) {
		if (*pp == j) {
			list_cut(&hx->sent, pp);
			j->err = lf_fail(
				&j->why, LF_IO, "%s",
				j->len > HOSTEXEC_FRAME_MAX
					? "the call's arguments are too large "
					  "for the executor helper"
					: "cannot reach the executor helper");
			job_over(hx, j, true);
			break;
		}
	}
	pthread_mutex_unlock(&hx->lock);
}

/* Run j's callback and free it (without the lock). */
static void job_tell(struct hostexec_job *j)
{
	if (j->done) /* a cancel has no one to tell */
		j->done(j->arg, j->err, &j->res, &j->why);
	hostexec_result_clear(&j->res);
	free(j->frame);
	free(j);
}

static void *client_dispatcher(void *arg)
{
	struct hostexec *hx = arg;
	struct hostexec_job *j;

	pthread_mutex_lock(&hx->lock);
	for (;;) {
		if ((j = hx->answered.head)) {
			list_cut(&hx->answered, &hx->answered.head);
			pthread_mutex_unlock(&hx->lock);
			job_tell(j);
			pthread_mutex_lock(&hx->lock);
		} else if (!hx->dead && (j = job_next_ready(hx))) {
			pthread_mutex_unlock(&hx->lock);
			job_send(hx, j);
			pthread_mutex_lock(&hx->lock);
		} else if (hx->quit) {
			break;
		} else {
			pthread_cond_wait(&hx->cond, &hx->lock);
		}
	}
	pthread_mutex_unlock(&hx->lock);
	return NULL;
}

struct hostexec *hostexec_client_new(int sock)
{
	struct hostexec *hx = calloc(1, sizeof(*hx));

	if (!hx)
		return NULL;
	hx->sock = sock;
	atomic_init(&hx->next_id, 1);
	list_init(&hx->queued);
	list_init(&hx->sent);
	list_init(&hx->answered);
	pthread_mutex_init(&hx->lock, NULL);
	pthread_cond_init(&hx->cond, NULL);
	if (pthread_create(&hx->dispatcher, NULL, client_dispatcher, hx) != 0)
		goto fail;
	hx->dispatcher_started = true;
	if (pthread_create(&hx->reader, NULL, client_reader, hx) != 0)
		goto fail;
	hx->reader_started = true;
	return hx;
fail:
	hx->sock = -1; /* the caller's still */
	hostexec_client_free(hx);
	return NULL;
}

void hostexec_client_free(struct hostexec *hx)
{
	if (!hx)
		return;
	/* The reader ends at the socket's end; the helper sees EOF. */
	if (hx->sock >= 0)
		shutdown(hx->sock, SHUT_RDWR);
	if (hx->reader_started)
		pthread_join(hx->reader, NULL);
	/* Every job is over now: the dispatcher tells them all, then ends. */
	pthread_mutex_lock(&hx->lock);
	hx->dead = true;
	jobs_end_all(hx, LF_IO, "the executor helper is gone");
	hx->quit = true;
	pthread_cond_signal(&hx->cond);
	pthread_mutex_unlock(&hx->lock);
	if (hx->dispatcher_started)
		pthread_join(hx->dispatcher, NULL);
	if (hx->sock >= 0)
		close(hx->sock);
	pthread_mutex_destroy(&hx->lock);
	pthread_cond_destroy(&hx->cond);
	free(hx);
}

/* A job of request rq (its id set here), or NULL: no memory. */
static struct hostexec_job *job_new(struct hostexec *hx,
				    struct hostexec_request *rq)
{
	struct hostexec_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = rq->id = atomic_fetch_add(&hx->next_id, 1);
	j->slotted = rq->op == HOSTEXEC_RUN;
	j->frame = hostexec_request_text(rq, &j->len);
	if (!j->frame) {
		free(j);
		return NULL;
	}
	return j;
}

enum lf_err hostexec_job_new(struct hostexec *hx, struct hostexec_slots *slots,
			     const struct exec_spec *spec, const json_t *args,
			     struct hostexec_job **out, struct lf_why *why)
{
	struct hostexec_request rq = {0};

	*out = NULL;
	if (!hx)
		return lf_fail(why, LF_IO,
			       "this process has no executor helper");
	rq.op = HOSTEXEC_RUN;
	rq.spec = (struct exec_spec *)spec; /* borrowed: not cleared */
	rq.stdin_text = json_dumps(args, JSON_COMPACT | JSON_ENCODE_ANY);
	if (rq.stdin_text) {
		rq.stdin_len = strlen(rq.stdin_text);
		*out = job_new(hx, &rq);
	}
	if (*out) {
		(*out)->slots = slots;
		/* The caller holds the case's lock, as every cancel does. */
		(*out)->cancels = slots->cancels;
	}
	free(rq.stdin_text);
	return *out ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

void hostexec_job_free(struct hostexec_job *j)
{
	if (!j)
		return;
	free(j->frame);
	free(j);
}

void hostexec_job_start(struct hostexec *hx, struct hostexec_job *j,
			hostexec_done_fn done, void *arg)
{
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&hx->lock);
	if (j->slotted && j->cancels != j->slots->cancels) {
		j->err = lf_fail(&j->why, LF_IO,
				 "its call was settled before its executor "
				 "started");
		job_over(hx, j, false);
	} else if (hx->stopping && j->slotted) {
		j->err = lf_fail(&j->why, LF_CLOSED, "the daemon is stopping");
		job_over(hx, j, false);
	} else if (hx->dead) {
		j->err = lf_fail(&j->why, LF_IO, "the executor helper is gone");
		job_over(hx, j, false);
	} else {
		list_push(&hx->queued, j);
		pthread_cond_signal(&hx->cond);
	}
	pthread_mutex_unlock(&hx->lock);
}

/* A caller that waits for its job's answer (hostexec_run, unmount). */
struct sync_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	enum lf_err err;
	struct lf_why why;
	struct hostexec_result res;
};

static void sync_done(void *arg, enum lf_err err, struct hostexec_result *res,
		      const struct lf_why *why)
{
	struct sync_wait *s = arg;

	pthread_mutex_lock(&s->lock);
	s->err = err;
	s->why = *why;
	s->res = *res;
	res->returned = NULL;
	s->done = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

enum lf_err hostexec_job_wait(struct hostexec *hx, struct hostexec_job *j,
			      struct hostexec_result *res, struct lf_why *why)
{
	struct sync_wait s = {.err = LF_OK};

	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	hostexec_job_start(hx, j, sync_done, &s);
	pthread_mutex_lock(&s.lock);
	while (!s.done)
		pthread_cond_wait(&s.cond, &s.lock);
	pthread_mutex_unlock(&s.lock);
	pthread_cond_destroy(&s.cond);
	pthread_mutex_destroy(&s.lock);
	if (s.err != LF_OK) {
		hostexec_result_clear(&s.res);
		if (why)
			*why = s.why;
		return s.err;
	}
	*res = s.res;
	return LF_OK;
}

enum lf_err hostexec_run(struct hostexec *hx, struct hostexec_slots *slots,
			 const struct exec_spec *spec, const json_t *args,
			 struct hostexec_result *res, struct lf_why *why)
{
	struct hostexec_job *j;
	enum lf_err e;

	memset(res, 0, sizeof(*res));
	e = hostexec_job_new(hx, slots, spec, args, &j, why);
	return e != LF_OK ? e : hostexec_job_wait(hx, j, res, why);
}

void hostexec_cancel(struct hostexec *hx, struct hostexec_slots *slots)
{
	struct hostexec_request rq = {.op = HOSTEXEC_CANCEL};
	struct hostexec_job **pp, *j, *c;

	if (!hx)
		return;
	pthread_mutex_lock(&hx->lock);
	slots->cancels++;
	for (pp = &hx->queued.head; (j = *pp);) {
		if (!j->slotted || j->slots != slots) {
			pp = &j->next;
			continue;
		}
		list_cut(&hx->queued, pp);
		j->err = lf_fail(&j->why, LF_IO,
				 "its call was settled before its executor "
				 "started");
		job_over(hx, j, false);
	}
	/* Those at the helper: a cancel each, sent in turn by the dispatcher. */
	for (j = hx->sent.head; j; j = j->next) {
		if (!j->slotted || j->slots != slots)
			continue;
		rq.id = j->id;
		c = calloc(1, sizeof(*c));
		if (c)
			c->frame = hostexec_request_text(&rq, &c->len);
		if (!c || !c->frame) {
			free(c);
			continue; /* no memory: it runs to its end */
		}
		c->id = j->id;
		c->told_nothing = true;
		list_push(&hx->queued, c);
	}
	pthread_cond_signal(&hx->cond);
	pthread_mutex_unlock(&hx->lock);
}

void hostexec_client_stop(struct hostexec *hx)
{
	if (!hx)
		return;
	pthread_mutex_lock(&hx->lock);
	hx->stopping = true;
	jobs_end_all(hx, LF_CLOSED, "the daemon is stopping");
	pthread_mutex_unlock(&hx->lock);
}

enum lf_err hostexec_unmount(struct hostexec *hx, struct lf_why *why)
{
	struct hostexec_request rq = {0};
	struct hostexec_result res;
	struct hostexec_job *j;
	enum lf_err e;

	if (!hx)
		return lf_fail(why, LF_IO,
			       "this process has no executor helper");
	rq.op = HOSTEXEC_UNMOUNT;
	j = job_new(hx, &rq);
	if (!j)
		return lf_fail(why, LF_NOMEM, "out of memory");
	/* Not a run: no slot, and sent even while the daemon stops. */
	e = hostexec_job_wait(hx, j, &res, why);
	if (e != LF_OK)
		return e;
	if (res.is_error)
		e = lf_fail(why, LF_IO, "%s", res.reason);
	hostexec_result_clear(&res);
	return e;
}
