/* SPDX-License-Identifier: MIT */
/*
 * mcp_call.c - tools/call (ledgerfs-mcp(1) TOOLS/CALL): one request line
 * per call, on a thread of its own so ping and cancellation are answered
 * while a call waits; the reply's decision becomes an MCP tool result,
 * and a passed call is forwarded downstream and its result reported.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mcp.h"

/* An MCP tool result whose one text item is text. */
static json_t *call_text_result(const char *text, bool is_error)
{
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text",
			 "text", text, "isError", is_error);
}

/*
 * The tool result for a value the host returned (mock, block, host
 * executed): the value as JSON text, and as structuredContent when it
 * is an object, as the MCP specification asks of structured results.
 * Never for an error: a client checks structuredContent against the
 * tool's outputSchema, and an error's payload (a block's message) is not
 * the tool's output, so the model would get the client's error instead.
 */
static json_t *call_value_result(const json_t *returned, bool is_error,
				 const char *lead)
{
	char *text = json_dumps(returned, JSON_COMPACT | JSON_ENCODE_ANY |
						  JSON_PRESERVE_ORDER);
	json_t *r, *content;

	if (!text)
		return NULL;
	r = call_text_result(text, is_error);
	free(text);
	if (!r)
		return NULL;
	if (lead) {
		/* The host's reason comes first, where a reader looks. */
		content = json_object_get(r, "content");
		json_array_insert_new(
			content, 0,
			json_pack("{s:s, s:s}", "type", "text", "text", lead));
	}
	if (json_is_object(returned) && !is_error)
		json_object_set(r, "structuredContent", (json_t *)returned);
	return r;
}

/* Write the result of a passed call to the view: 0, or an errno. */
static int call_report(struct mcp_call *c, const char *id,
		       const json_t *returned, bool is_error, bool executed)
{
	char *text = json_dumps(returned, JSON_COMPACT | JSON_ENCODE_ANY);
	int err = text ? lfc_result(&c->srv->lc, id, text, is_error, executed)
		       : ENOMEM;
	char why[LFC_REASON_MAX];

	if (err)
		mcp_log("result of %s: %s: %s", id,
			err > 0 ? strerror(err) : "id too long",
			lfc_reason(&c->srv->lc, err, why, sizeof(why)));
	free(text);
	return err;
}

/* A passed call: forward it downstream, report and return its result. */
static json_t *call_forward(struct mcp_call *c, const char *id)
{
	struct mcp_server *s = c->srv;
	json_t *params, *res, *err = NULL, *out;
	bool sent;
	char msg[600];

	if (!s->ds) {
		snprintf(msg, sizeof(msg),
			 "no implementation: ledgerfs-mcp has no downstream "
			 "server to run the passed tool '%s'",
			 c->tool);
		err = json_pack("{s:s}", "error", msg);
		call_report(c, id, err, true, false);
		json_decref(err);
		return call_text_result(msg, true);
	}
	params = json_pack("{s:s, s:O}", "name", c->tool, "arguments", c->args);
	res = mcp_downstream_request(s->ds, "tools/call", params, &c->cancelled,
				     &err, &sent);
	json_decref(params);
	if (res) {
		int rerr = call_report(
			c, id, res,
			json_is_true(json_object_get(res, "isError")), true);
		char why[LFC_REASON_MAX];

		if (rerr == 0)
			return res;
		/*
		 * A result the case did not record is not handed on: the
		 * model would hold what the ledger lacks (ledgerfs-mcp(1)).
		 */
		json_decref(res);
		snprintf(msg, sizeof(msg),
			 "ledgerfs refused the tool's result: %s%s%s",
			 rerr > 0 ? strerror(rerr) : "id too long",
			 *lfc_reason(&c->srv->lc, rerr, why, sizeof(why)) ? ": "
									  : "",
			 why);
		return call_text_result(msg, true);
	}
	snprintf(msg, sizeof(msg), "downstream error: %s",
		 json_string_value(json_object_get(err, "message"))
			 ? json_string_value(json_object_get(err, "message"))
			 : "unknown");
	out = json_pack("{s:O}", "error", err);
	call_report(c, id, out, true, sent);
	json_decref(out);
	json_decref(err);
	return call_text_result(msg, true);
}

/* The tool result for a reply line of the view. */
static json_t *call_from_reply(struct mcp_call *c, const char *id,
			       const char *reply, size_t len)
{
	json_error_t jerr;
	json_t *r = json_loadb(reply, len, 0, &jerr), *out = NULL;
	const char *mode = json_string_value(json_object_get(r, "mode"));
	const char *reason = json_string_value(json_object_get(r, "reason"));
	const char *source =
		json_string_value(json_object_get(r, "result_source"));
	json_t *returned = json_object_get(r, "returned");
	bool is_error = json_is_true(json_object_get(r, "is_error"));

	if (!mode) {
		out = call_text_result("ledgerfs: a reply without a mode",
				       true);
	} else if (strcmp(mode, "block") == 0) {
		out = call_value_result(returned ? returned : json_null(), true,
					reason ? reason : "blocked");
	} else if (strcmp(mode, "mock") == 0 ||
		   (source && strcmp(source, "host_executed") == 0)) {
		/* The host's result; the tool must not run here. */
		out = call_value_result(returned ? returned : json_null(),
					is_error, NULL);
	} else if (strcmp(mode, "pass") == 0) {
		out = call_forward(c, id);
	} else {
		out = call_text_result("ledgerfs: a reply with an unknown mode",
				       true);
	}
	json_decref(r);
	return out;
}

/*
 * mcp-PID-TAG-N: TAG is 16 hex digits drawn once per run (getrandom), so
 * two servers with the same PID (each PID 2 in its own sandbox) or one
 * started twice in a second never collide on an id.
 */
static void call_make_id(struct mcp_server *s, char *buf, size_t size)
{
	unsigned long seq;

	pthread_mutex_lock(&s->lock);
	if (!s->id_tag) {
		struct timespec ts;

		if (getrandom(&s->id_tag, sizeof(s->id_tag), 0) !=
		    (ssize_t)sizeof(s->id_tag)) {
			/* No randomness yet: time and address, still apart. */
			clock_gettime(CLOCK_REALTIME, &ts);
			s->id_tag = (unsigned long long)ts.tv_nsec;
			s->id_tag ^= (unsigned long long)ts.tv_sec << 30;
			s->id_tag ^= (unsigned long long)(uintptr_t)s;
		}
		s->id_tag |= 1; /* never 0: drawn */
	}
	seq = ++s->next_seq;
	pthread_mutex_unlock(&s->lock);
	snprintf(buf, size, "mcp-%ld-%016llx-%lu", (long)getpid(), s->id_tag,
		 seq);
}

static json_t *call_run(struct mcp_call *c)
{
	char id[96], why[LFC_REASON_MAX], msg[LFC_REASON_MAX + 128];
	char *args, *reply = NULL;
	size_t len;
	json_t *out;
	int err;

	call_make_id(c->srv, id, sizeof(id));
	args = json_dumps(c->args, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!args)
		return NULL;
	err = lfc_call(&c->srv->lc, id, c->tool, args, &reply, &len);
	free(args);
	if (err) {
		/* Refused by the view: a tool error the model can read. */
		snprintf(msg, sizeof(msg), "ledgerfs refused the call: %s%s%s",
			 err > 0 ? strerror(err) : "tool name too long",
			 *lfc_reason(&c->srv->lc, err, why, sizeof(why)) ? ": "
									 : "",
			 why);
		return call_text_result(msg, true);
	}
	out = call_from_reply(c, id, reply, len);
	free(reply);
	return out;
}

static void call_unlink(struct mcp_call *c)
{
	struct mcp_server *s = c->srv;
	struct mcp_call **pp;

	pthread_mutex_lock(&s->lock);
	for (pp = &s->calls; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	s->ncalls--;
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
}

static void *call_thread(void *arg)
{
	struct mcp_call *c = arg;
	json_t *result = call_run(c), *msg;
	bool cancelled;

	pthread_mutex_lock(&c->srv->lock);
	cancelled = c->cancelled;
	pthread_mutex_unlock(&c->srv->lock);
	/* A cancelled request gets no response (MCP cancellation). */
	if (!cancelled) {
		msg = result ? json_pack("{s:s, s:O, s:O}", "jsonrpc", "2.0",
					 "id", c->id, "result", result)
			     : mcp_error(c->id, -32603, "out of memory");
		if (msg)
			mcp_send(c->srv->out_fd, &c->srv->out_lock, msg);
		json_decref(msg);
	}
	json_decref(result);
	call_unlink(c);
	json_decref(c->id);
	json_decref(c->args);
	free(c->tool);
	free(c);
	return NULL;
}

int mcp_call_start(struct mcp_server *s, json_t *id, const char *tool,
		   json_t *args)
{
	struct mcp_call *c;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	pthread_mutex_lock(&s->lock);
	/* Back-pressure: past the bound, read no more input until one ends. */
	while (s->ncalls >= MCP_CALLS_MAX)
		pthread_cond_wait(&s->idle, &s->lock);
	s->ncalls++;
	pthread_mutex_unlock(&s->lock);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->tool = strdup(tool)))
		goto fail;
	c->srv = s;
	c->id = json_incref(id);
	c->args = args ? json_incref(args) : json_object();
	pthread_mutex_lock(&s->lock);
	c->next = s->calls;
	s->calls = c;
	pthread_mutex_unlock(&s->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&t, &attr, call_thread, c);
	pthread_attr_destroy(&attr);
	if (rc == 0)
		return 0;
	call_unlink(c);
	json_decref(c->id);
	json_decref(c->args);
	free(c->tool);
	free(c);
	return -1;
fail:
	if (c)
		free(c);
	pthread_mutex_lock(&s->lock);
	s->ncalls--;
	pthread_mutex_unlock(&s->lock);
	return -1;
}

void mcp_call_cancel(struct mcp_server *s, const json_t *id)
{
	struct mcp_call *c;

	pthread_mutex_lock(&s->lock);
	for (c = s->calls; c; c = c->next)
		if (json_equal(c->id, (json_t *)id))
			/* A call waiting downstream looks at its flag again. */
			mcp_downstream_set(s->ds, &c->cancelled);
	pthread_mutex_unlock(&s->lock);
}

void mcp_calls_wait(struct mcp_server *s)
{
	pthread_mutex_lock(&s->lock);
	while (s->ncalls)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
}
