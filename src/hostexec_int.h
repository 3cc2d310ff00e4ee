/* SPDX-License-Identifier: MIT */
/*
 * hostexec_int.h - one running executor inside the helper, shared by
 * hostexec_spawn.c (start it, judge its end) and hostexec_helper.c (the
 * loop that feeds it, reads it and watches its clock).
 */
#ifndef LF_HOSTEXEC_INT_H
#define LF_HOSTEXEC_INT_H

#include "hostexec.h"

struct hx_job {
	uint64_t id;
	pid_t pid;
	int pidfd, in_fd, out_fd; /* -1 once closed */
	char *in;		  /* the call's args, fed to stdin (owned) */
	size_t in_len, in_off;
	char *out; /* stdout so far, up to max_output + 1 */
	size_t out_len;
	uint64_t max_output, timeout_ms, start_ms, deadline_ms;
	bool exited, timed_out, over_cap, cancelled;
	int wstatus;
};

/* Monotonic milliseconds. */
uint64_t hx_now_ms(void);

/*
 * Check and start rq's executor (ledgerfs(8) HOST EXECUTORS) into job.
 * 0: running, and job->in borrows rq's stdin text: the caller hands it
 * over (rq->stdin_text = NULL).  -1: not started; res holds the error.
 */
int hx_spawn(const struct hostexec_request *rq, const char *default_user,
	     struct hx_job *job, struct hostexec_result *res);

/* The result of a job that ended (exited, reaped, stdout closed). */
void hx_finish(struct hx_job *job, struct hostexec_result *res);

/* End a job's whole process group now. */
void hx_kill(struct hx_job *job);

/* Close a job's descriptors and free its buffers. */
void hx_job_clear(struct hx_job *job);

/* An error result of kind with reason (printf-style). */
void hx_error(struct hostexec_result *res, const char *kind, const char *fmt,
	      ...) __attribute__((format(printf, 3, 4)));

#endif
