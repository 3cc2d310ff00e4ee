/* SPDX-License-Identifier: MIT */
/*
 * relay_handler.h - one HTTP request of ASSERT's host-mediator protocol
 * turned into the case's target/ files and back (ledgerfs-relay(1)).
 * No libmicrohttpd here: the server hands it a request already read, so
 * the handler is fuzzed whole (tests/fuzz/fuzz_relay.c).
 */
#ifndef LF_RELAY_HANDLER_H
#define LF_RELAY_HANDLER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "listen.h"

/* ASSERT's _MAX_REQUEST_BYTES. */
#define RELAY_BODY_MAX (1024u * 1024u)
/* Most Host headers looked at (more than one is refused anyway). */
#define RELAY_HOSTS_MAX 4

/*
 * The file protocol, as lfclient speaks it; the fuzzer plugs in its own.
 * Each returns 0 or an errno (-1: an argument too long to send).
 */
struct relay_backend {
	void *ctx;
	int (*reg)(void *ctx, const char *case_id, const char *token);
	/* On 0, *reply is a new NUL-terminated string. */
	int (*call)(void *ctx, const char *id, const char *tool,
		    const char *args, char **reply);
	int (*result)(void *ctx, const char *id, const char *returned,
		      int is_error, int real_executed);
	/*
	 * The reason of the last refusal, "" when none, or when it names
	 * another errno than err (another write's: lfc_reason).
	 */
	void (*reason)(void *ctx, int err, char *buf, size_t size);
};

struct relay {
	const struct relay_backend *be;
	const char *bearer;   /* "Bearer TOKEN", compared in constant time */
	const char *env_case; /* LEDGERFS_CASE, or NULL */
	const char *token;    /* LEDGERFS_TOKEN, or NULL */
	pthread_mutex_t lock; /* guards what follows */
	char *case_id;	      /* the registered case, or NULL */
	void *completed;      /* json_t object: ids completed through here */
};

/* The listener a request came in on, for the Host guard. */
struct relay_listener {
	const struct http_listen *l;
	unsigned port; /* the bound port */
};

struct relay_request {
	const struct relay_listener *via; /* NULL: no Host guard (tests) */
	const char *method, *path;
	const char *const *hosts; /* values of every Host header */
	size_t nhosts;
	const char *authorization;  /* NULL when absent */
	const char *content_length; /* the header as sent, NULL when absent */
	const char *body;	    /* NULL: not read yet */
	size_t body_len;
};

struct relay_response {
	unsigned status; /* 0: read the body, then call again */
	char *body;	 /* new JSON text (free it) */
};

/* Set up r; 0, or -1 out of memory.  relay_fini frees what it holds. */
int relay_init(struct relay *r, const struct relay_backend *be,
	       const char *bearer, const char *env_case, const char *token);
void relay_fini(struct relay *r);

/*
 * Answer q as ASSERT's host mediator answers it (ledgerfs-relay(1)
 * PROTOCOL).  With q->body NULL, answers what needs no body (the Host
 * guard, GET, the token, the size) and else sets status 0.
 */
void relay_handle(struct relay *r, const struct relay_request *q,
		  struct relay_response *out);

/* The backend that speaks the real file protocol through lfclient. */
extern const struct relay_backend relay_lfclient_backend;

#endif
