/* SPDX-License-Identifier: MIT */
/*
 * hostexec.h - host executors (ledgerfs(8) HOST EXECUTORS): the daemon
 * forks one helper before it drops privileges and before it serves; the
 * helper alone spawns executors and answers over a socketpair.  FUSE
 * threads never fork; a target's call goes on when its executor's answer
 * comes (hostexec_job_start), and only a caller of hostexec_run waits.
 *
 * The socketpair carries frames: a 4-byte big-endian length, then that
 * many bytes of one JSON object (HOSTEXEC_FRAME_MAX at most).  The
 * helper may run with more privilege than the daemon, so it reads the
 * daemon's frames as untrusted input (hostexec_parse_request).
 */
#ifndef LF_HOSTEXEC_H
#define LF_HOSTEXEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "exec_spec.h"

#define HOSTEXEC_FRAME_MAX    ((size_t)65 << 20)
#define HOSTEXEC_MAX_TOTAL    16 /* executors running at once, daemon-wide */
#define HOSTEXEC_MAX_PER_CASE 4	 /* executors running at once per case */

/* One executor's outcome, as the helper reports it. */
struct hostexec_result {
	json_t *returned; /* own reference: stdout's value, or an error */
	bool is_error;
	bool ran;	 /* the executor was started (real_executed) */
	int exit_status; /* -1 when it did not exit by itself */
	int signal;	 /* the signal that ended it, 0 when none */
	uint64_t duration_ms;
	char error[32];	  /* "" or the failure's kind, e.g. "timeout" */
	char reason[512]; /* one line, never the environment's values */
};

void hostexec_result_clear(struct hostexec_result *r);

/* --- the daemon's side (hostexec_client.c) --- */

struct hostexec;

/* A client on sock (taken: closed by hostexec_client_free).  NULL: no memory. */
struct hostexec *hostexec_client_new(int sock);

/* Close the socket (the helper sees the end) and free. */
void hostexec_client_free(struct hostexec *hx);

/*
 * One case's executors, kept by the case and guarded by the client: at
 * most HOSTEXEC_MAX_PER_CASE of them run at once (and HOSTEXEC_MAX_TOTAL
 * in all), and a cancel ends them all (hostexec_cancel).
 */
struct hostexec_slots {
	unsigned running;
	unsigned cancels; /* a job made before a cancel never starts */
};

/*
 * A call's job: made while the case's calls cannot change (its lock
 * held: the spec is serialised now, the case's cancels noted), then
 * started: it waits in line for a slot, runs, and done(arg, err, res,
 * why) runs once on the client's own thread, which may take a case's
 * lock.  err is LF_OK with *res (its returned value may be taken: set it
 * NULL; a failure of the executor is a result, res->is_error), LF_CLOSED
 * when the daemon stops, LF_IO when the helper is gone or the job was
 * cancelled before it ran.  A job never started is freed by
 * hostexec_job_free.
 */
struct hostexec_job;
typedef void (*hostexec_done_fn)(void *arg, enum lf_err err,
				 struct hostexec_result *res,
				 const struct lf_why *why);
enum lf_err hostexec_job_new(struct hostexec *hx, struct hostexec_slots *slots,
			     const struct exec_spec *spec, const json_t *args,
			     struct hostexec_job **out, struct lf_why *why);
void hostexec_job_start(struct hostexec *hx, struct hostexec_job *j,
			hostexec_done_fn done, void *arg);
void hostexec_job_free(struct hostexec_job *j);

/* Start j and wait for its end: done's err, and on LF_OK its *res. */
enum lf_err hostexec_job_wait(struct hostexec *hx, struct hostexec_job *j,
			      struct hostexec_result *res, struct lf_why *why);

/* hostexec_job_new, then hostexec_job_wait. */
enum lf_err hostexec_run(struct hostexec *hx, struct hostexec_slots *slots,
			 const struct exec_spec *spec, const json_t *args,
			 struct hostexec_result *res, struct lf_why *why);

/*
 * The case's calls on executors are settled (a turn, a close, a fail;
 * its lock held): every job of slots made so far ends.  One waiting for
 * a slot, or not started yet, never runs (LF_IO); a running one's
 * process group is killed and its result is the error "cancelled".
 */
void hostexec_cancel(struct hostexec *hx, struct hostexec_slots *slots);

/*
 * The daemon stops: every call waiting for an executor, or for a slot,
 * returns LF_CLOSED at once and records nothing (the call stays
 * pending, as after a crash); the executors still running are killed
 * when the client is freed and the helper sees the socket's end.
 */
void hostexec_client_stop(struct hostexec *hx);

/* Ask the helper to unmount the view (it alone may, after --user). */
enum lf_err hostexec_unmount(struct hostexec *hx, struct lf_why *why);

/* --- the helper (hostexec_helper.c) --- */

struct hostexec_helper_conf {
	const char *mountpoint;	  /* what `unmount` detaches */
	bool unmount_at_end;	  /* also when the daemon goes (--user) */
	const char *default_user; /* executors without exec.user */
};

/* Serve the daemon on sock until it closes; the helper's exit status. */
int hostexec_helper_main(int sock, const struct hostexec_helper_conf *conf);

/* --- the wire (hostexec_wire.c), shared by both ends --- */

/*
 * cancel: end the run whose id it carries (its process group killed, its
 * result the error "cancelled"), or nothing if none runs; no answer.
 */
enum hostexec_op { HOSTEXEC_RUN, HOSTEXEC_UNMOUNT, HOSTEXEC_CANCEL };

struct hostexec_request {
	enum hostexec_op op;
	uint64_t id;
	struct exec_spec *spec; /* HOSTEXEC_RUN */
	char *stdin_text;	/* HOSTEXEC_RUN */
	size_t stdin_len;
};

/*
 * Parse one frame's body (len bytes, not NUL-terminated) from the daemon.
 * Strict: a JSON object with op (run, unmount, cancel) and id, and for
 * run a spec as the policy parser reads it and stdin text; anything else
 * LF_EINVAL_JSON.
 */
enum lf_err hostexec_parse_request(const char *buf, size_t len,
				   struct hostexec_request *rq,
				   struct lf_why *why);
void hostexec_request_clear(struct hostexec_request *rq);

/* The request's frame body (malloc'd JSON text), NULL on no memory. */
char *hostexec_request_text(const struct hostexec_request *rq, size_t *len);

/* A result's frame body for request id; and back (LF_EINVAL_JSON). */
char *hostexec_result_text(uint64_t id, const struct hostexec_result *r,
			   size_t *len);
enum lf_err hostexec_parse_result(const char *buf, size_t len, uint64_t *id,
				  struct hostexec_result *r,
				  struct lf_why *why);

/* Write one whole frame (blocking).  0, or -1 with errno. */
int hostexec_send_frame(int fd, const char *body, size_t len);

/*
 * Take bytes into a frame reader; once a whole frame is in, *body (len)
 * points at it (valid until the next call).  1: a frame; 0: need more;
 * -1: a length of 0 or past HOSTEXEC_FRAME_MAX (the peer is broken).
 */
struct hostexec_reader {
	char *buf;
	size_t len, cap;
	size_t consumed; /* bytes of the last frame handed out */
};
int hostexec_reader_next(struct hostexec_reader *rd, const char **body,
			 size_t *len);
/* Room for at least n more bytes; pointer to write into, or NULL. */
char *hostexec_reader_space(struct hostexec_reader *rd, size_t n);
void hostexec_reader_free(struct hostexec_reader *rd);

#endif
