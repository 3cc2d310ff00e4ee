/* SPDX-License-Identifier: MIT */
/*
 * fuzz_relay.c - fuzz harness for ledgerfs-relay's request handler
 * (target/relay_handler.h), the part that reads what the sandbox sends.
 * An input is: one byte choosing method, path, LEDGERFS_CASE, token and
 * Content-Length, one byte choosing the backend's errno; the body up to a 0xff byte; then the reply text
 * the fake backend hands back for a call.  Each request is handled as
 * the server does (headers first, then the body); a broken promise
 * (an answer that is not one JSON object, an unknown status, ledgerfs's
 * own keys in a decision) aborts.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_request.h"
#include "relay_handler.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

#define BEARER "Bearer fuzz-token"

struct fake {
	const char *reply;
	size_t reply_len;
	int err;
};

static int fk_reg(void *ctx, const char *case_id, const char *token)
{
	CHECK(case_id && *case_id && token);
	return ((struct fake *)ctx)->err == EACCES ? EACCES : 0;
}

static int fk_call(void *ctx, const char *id, const char *tool,
		   const char *args, char **reply)
{
	struct fake *f = ctx;
	json_t *a = json_loads(args, 0, NULL);

	/* The handler sends a non-empty id and tool and object args. */
	CHECK(*id && *tool && json_is_object(a));
	json_decref(a);
	*reply = NULL;
	if (f->err)
		return f->err;
	*reply = malloc(f->reply_len + 1);
	if (!*reply)
		return ENOMEM;
	memcpy(*reply, f->reply, f->reply_len);
	(*reply)[f->reply_len] = '\0';
	return 0;
}

static int fk_result(void *ctx, const char *id, const char *returned,
		     int is_error, int real_executed)
{
	json_t *v = json_loads(returned, JSON_DECODE_ANY, NULL);

	CHECK(*id && v);
	CHECK(is_error == 0 || is_error == 1);
	CHECK(real_executed == 0 || real_executed == 1);
	json_decref(v);
	return ((struct fake *)ctx)->err;
}

static void fk_reason(void *ctx, int err, char *buf, size_t size)
{
	(void)ctx;
	(void)err;
	snprintf(buf, size, "EINVAL a reason from the view");
}

static const char *const methods[] = {"GET", "POST", "PUT", "POST"};
static const char *const paths[] = {"/mediate", "/register", "/complete",
				    "/health"};
static const int errs[] = {0, EEXIST, EINVAL, ENOENT, EACCES, EPROTO, 0, 0};

static void check_answer(const struct relay_response *res, const char *path)
{
	json_t *v, *d;
	json_error_t e;

	CHECK(res->body);
	v = json_loads(res->body, 0, &e);
	CHECK(json_is_object(v));
	CHECK(res->status == 200 || res->status == 400 || res->status == 401 ||
	      res->status == 403 || res->status == 404 || res->status == 500 ||
	      res->status == 501 || res->status == 502);
	if (res->status != 200)
		CHECK(json_is_string(json_object_get(v, "error")));
	d = json_object_get(v, "decision");
	if (res->status == 200 && !strcmp(path, "/mediate")) {
		CHECK(json_is_object(d));
		CHECK(json_is_string(json_object_get(d, "mode")));
		CHECK(!json_object_get(d, "call_id"));
		CHECK(!json_object_get(d, "sequence"));
		CHECK(!json_object_get(d, "result_source"));
	}
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake f = {"", 0, 0};
	struct relay_backend be = {&f, fk_reg, fk_call, fk_result, fk_reason};
	struct relay_request q = {0};
	struct relay_response res;
	struct relay r;
	const uint8_t *sep;
	char cl[32], *body;
	size_t blen;
	uint8_t flags, errsel;

	if (size < 2)
		return 0;
	flags = data[0];
	errsel = data[1];
	data += 2;
	size -= 2;
	sep = memchr(data, 0xff, size);
	blen = sep ? (size_t)(sep - data) : size;
	if (sep) {
		f.reply = (const char *)sep + 1;
		f.reply_len = size - blen - 1;
	}
	f.err = errs[errsel & 7];
	body = malloc(blen + 1);
	if (!body ||
	    relay_init(&r, &be, BEARER, (flags & 16) ? "C" : NULL, "tok") < 0) {
		free(body);
		return 0;
	}
	memcpy(body, data, blen);
	body[blen] = '\0';
	snprintf(cl, sizeof(cl), "%zu", blen);
	q.method = methods[flags & 3];
	q.path = paths[(flags >> 2) & 3];
	q.authorization = (flags & 32) ? "Bearer nope" : BEARER;
	q.content_length = (flags & 64) ? "12x" : (flags & 128) ? NULL : cl;
	relay_handle(&r, &q, &res);
	if (!res.status) {
		q.body = body;
		q.body_len = blen;
		relay_handle(&r, &q, &res);
		CHECK(res.status);
	}
	check_answer(&res, q.path);
	free(res.body);
	/* The same request again: a repeat meets the relay's memory. */
	relay_handle(&r, &q, &res);
	if (res.status)
		check_answer(&res, q.path);
	free(res.body);
	relay_fini(&r);
	free(body);
	return 0;
}
