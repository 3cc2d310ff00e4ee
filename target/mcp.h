/* SPDX-License-Identifier: MIT */
/*
 * mcp.h - the parts of ledgerfs-mcp(1): bounded line input and JSON-RPC
 * output (mcp_io.c), the downstream MCP server a passed call is
 * forwarded to (mcp_downstream.c), and tools/call (mcp_call.c).  Target
 * side: libc, pthreads and jansson, never the host core.
 */
#ifndef LF_MCP_H
#define LF_MCP_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lfclient.h"

/* Bounds on what a peer sends (ledgerfs-mcp(1) LIMITS). */
#define MCP_LINE_MAX  (8u * 1024 * 1024)
#define MCP_DEPTH_MAX 64
#define MCP_CALLS_MAX 64

/* A bounded reader of newline-ended lines from a descriptor. */
struct mcp_reader {
	int fd;
	char *buf;
	size_t len, cap;
	size_t pending; /* the line handed out last, dropped at the next read */
	bool dropping;	/* inside a line past MCP_LINE_MAX */
};

enum mcp_read {
	MCP_LINE,     /* *line holds one line, NUL-terminated, no newline */
	MCP_TOO_LONG, /* a line passed MCP_LINE_MAX and was dropped */
	MCP_EOF,      /* end of input (or a read error) */
};

void mcp_reader_init(struct mcp_reader *r, int fd);
void mcp_reader_free(struct mcp_reader *r);
/* The next line; *line is borrowed until the next call. */
enum mcp_read mcp_read_line(struct mcp_reader *r, char **line, size_t *len);

/*
 * Parse one JSON-RPC message: JSON, nested at most MCP_DEPTH_MAX deep.
 * A new reference, or NULL (why names the problem).
 */
json_t *mcp_parse(const char *line, size_t len, char *why, size_t whysize);

/* Write v as one line to fd, whole, under a lock; v is borrowed. */
int mcp_send(int fd, pthread_mutex_t *lock, const json_t *v);

void mcp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The downstream MCP server (NULL when none was given). */
struct mcp_downstream;

/*
 * Spawn argv, speak MCP to it, initialize, waiting at most init_ms for
 * its answer.  NULL (logged) on failure.
 */
struct mcp_downstream *mcp_downstream_start(char **argv, uint64_t init_ms);
/*
 * Send a request and wait for its answer, or for *cancel to turn true
 * (set by mcp_downstream_set).  Returns the result
 * (new reference), or NULL with *error set to a new reference to the
 * JSON-RPC error object, or to {"message":..} when the server died or
 * the wait was cancelled.  *sent tells whether the request left.
 */
json_t *mcp_downstream_request(struct mcp_downstream *d, const char *method,
			       json_t *params, const bool *cancel,
			       json_t **error, bool *sent);
/*
 * Set *flag under the lock the waiters read it under, and wake them (d
 * may be NULL: then just set it).
 */
void mcp_downstream_set(struct mcp_downstream *d, bool *flag);
/* Close its input, wait a moment for it to exit, free. */
void mcp_downstream_stop(struct mcp_downstream *d);

/* The server: what tools/call needs from it. */
struct mcp_server {
	struct lfc lc;
	int out_fd; /* where responses go: standard output */
	struct mcp_downstream *ds;
	pthread_mutex_t out_lock; /* one line at a time on stdout */
	pthread_mutex_t lock;	  /* guards calls and ncalls */
	pthread_cond_t idle;
	struct mcp_call *calls; /* in flight */
	unsigned ncalls;
	unsigned long next_seq;
	/* Drawn at start: ids stay apart across PID namespaces and runs. */
	unsigned long long id_tag;
};

/* One tools/call in flight. */
struct mcp_call {
	struct mcp_server *srv;
	json_t *id; /* the JSON-RPC id */
	char *tool;
	json_t *args; /* an object */
	bool cancelled;
	struct mcp_call *next;
};

/*
 * Run the call on its own thread (ledgerfs-mcp(1) PROTOCOL); it answers
 * and frees its state.  With MCP_CALLS_MAX in flight, waits for one to
 * end first.  0, or -1 when out of memory or threads (nothing taken).
 */
int mcp_call_start(struct mcp_server *s, json_t *id, const char *tool,
		   json_t *args);
/* notifications/cancelled: mark the call with this id cancelled. */
void mcp_call_cancel(struct mcp_server *s, const json_t *id);
/* Wait until no call is in flight. */
void mcp_calls_wait(struct mcp_server *s);

/* Answer one parsed message (borrowed), mcp_server.c. */
void mcp_handle(struct mcp_server *s, json_t *msg);
/* Read and answer messages from fd until it ends. */
void mcp_serve(struct mcp_server *s, int fd);

/* A JSON-RPC error response (a new reference); id may be NULL. */
json_t *mcp_error(const json_t *id, int code, const char *message);

#endif
