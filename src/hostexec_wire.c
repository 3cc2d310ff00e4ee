/* SPDX-License-Identifier: MIT */
/*
 * hostexec_wire.c - the frames between the daemon and its executor
 * helper (hostexec.h): length-prefixed JSON objects, bounded, parsed
 * strictly on the helper's side because the daemon may be the less
 * trusted of the two (after --user).
 */
#include "hostexec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mocks_json.h"

void hostexec_result_clear(struct hostexec_result *r)
{
	json_decref(r->returned);
	r->returned = NULL;
}

void hostexec_request_clear(struct hostexec_request *rq)
{
	exec_spec_free(rq->spec);
	free(rq->stdin_text);
	memset(rq, 0, sizeof(*rq));
}

static bool wire_id(const json_t *v, uint64_t *id)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*id = (uint64_t)json_integer_value(v);
	return true;
}

enum lf_err hostexec_parse_request(const char *buf, size_t len,
				   struct hostexec_request *rq,
				   struct lf_why *why)
{
	static const char *const run_keys[] = {"op", "id", "spec", "stdin",
					       NULL};
	static const char *const unmount_keys[] = {"op", "id", NULL};
	json_t *o;
	const json_t *v;
	const char *op;
	enum lf_err e;

	memset(rq, 0, sizeof(*rq));
	if (len == 0 || len > HOSTEXEC_FRAME_MAX)
		return lf_fail(why, LF_EINVAL_JSON, "frame of %zu bytes", len);
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o)) {
		e = lf_fail(why, LF_EINVAL_JSON, "frame is not a JSON object");
		goto out;
	}
	op = json_string_value(json_object_get(o, "op"));
	if (!wire_id(json_object_get(o, "id"), &rq->id)) {
		e = lf_fail(why, LF_EINVAL_JSON, "frame without an id");
		goto out;
	}
	if (op && (!strcmp(op, "unmount") || !strcmp(op, "cancel"))) {
		rq->op = *op == 'u' ? HOSTEXEC_UNMOUNT : HOSTEXEC_CANCEL;
		e = mocks_check_keys(o, unmount_keys, "frame", why);
		if (e != LF_OK)
			e = LF_EINVAL_JSON;
		goto out;
	}
	if (!op || strcmp(op, "run")) {
		e = lf_fail(why, LF_EINVAL_JSON, "frame with an unknown op");
		goto out;
	}
	rq->op = HOSTEXEC_RUN;
	e = mocks_check_keys(o, run_keys, "frame", why);
	if (e != LF_OK) {
		e = LF_EINVAL_JSON;
		goto out;
	}
	v = json_object_get(o, "stdin");
	if (!json_is_string(v)) {
		e = lf_fail(why, LF_EINVAL_JSON, "frame without stdin");
		goto out;
	}
	rq->stdin_len = json_string_length(v);
	rq->stdin_text = malloc(rq->stdin_len + 1);
	if (!rq->stdin_text) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	memcpy(rq->stdin_text, json_string_value(v), rq->stdin_len + 1);
	e = exec_spec_parse(json_object_get(o, "spec"), "frame", &rq->spec,
			    why);
	if (e != LF_OK)
		e = LF_EINVAL_JSON;
out:
	json_decref(o);
	if (e != LF_OK) {
		uint64_t id = rq->id;

		hostexec_request_clear(rq);
		rq->id = id;
	}
	return e;
}

char *hostexec_request_text(const struct hostexec_request *rq, size_t *len)
{
	json_t *o;
	char *s;

	if (rq->op != HOSTEXEC_RUN)
		o = json_pack("{s:s, s:I}", "op",
			      rq->op == HOSTEXEC_UNMOUNT ? "unmount" : "cancel",
			      "id", (json_int_t)rq->id);
	else
		o = json_pack("{s:s, s:I, s:o, s:o}", "op", "run", "id",
			      (json_int_t)rq->id, "spec",
			      exec_spec_to_json(rq->spec), "stdin",
			      json_stringn(rq->stdin_text, rq->stdin_len));
	if (!o)
		return NULL;
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s)
		*len = strlen(s);
	return s;
}

char *hostexec_result_text(uint64_t id, const struct hostexec_result *r,
			   size_t *len)
{
	json_t *o = json_pack("{s:I, s:O?, s:b, s:b, s:I, s:I, s:I, s:s, s:s}",
			      "id", (json_int_t)id, "returned", r->returned,
			      "is_error", r->is_error, "ran", r->ran,
			      "exit_status", (json_int_t)r->exit_status,
			      "signal", (json_int_t)r->signal, "duration_ms",
			      (json_int_t)r->duration_ms, "error", r->error,
			      "reason", r->reason);
	char *s;

	if (!o)
		return NULL;
	s = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(o);
	if (s)
		*len = strlen(s);
	return s;
}

enum lf_err hostexec_parse_result(const char *buf, size_t len, uint64_t *id,
				  struct hostexec_result *r, struct lf_why *why)
{
	json_t *o = json_loadb(buf, len, 0, NULL);
	const char *err, *reason;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o) || !wire_id(json_object_get(o, "id"), id)) {
		json_decref(o);
		return lf_fail(why, LF_EINVAL_JSON,
			       "the helper's answer is not a result");
	}
	r->returned = json_incref(json_object_get(o, "returned"));
	if (!r->returned)
		r->returned = json_null();
	r->is_error = json_is_true(json_object_get(o, "is_error"));
	r->ran = json_is_true(json_object_get(o, "ran"));
	r->exit_status =
		(int)json_integer_value(json_object_get(o, "exit_status"));
	r->signal = (int)json_integer_value(json_object_get(o, "signal"));
	r->duration_ms =
		(uint64_t)json_integer_value(json_object_get(o, "duration_ms"));
	err = json_string_value(json_object_get(o, "error"));
	reason = json_string_value(json_object_get(o, "reason"));
	snprintf(r->error, sizeof(r->error), "%s", err ? err : "");
	snprintf(r->reason, sizeof(r->reason), "%s", reason ? reason : "");
	json_decref(o);
	return LF_OK;
}

int hostexec_send_frame(int fd, const char *body, size_t len)
{
	unsigned char hdr[4] = {(unsigned char)(len >> 24),
				(unsigned char)(len >> 16),
				(unsigned char)(len >> 8), (unsigned char)len};
	const char *parts[2] = {(const char *)hdr, body};
	size_t sizes[2] = {4, len}, i, off;
	ssize_t n;

	if (len == 0 || len > HOSTEXEC_FRAME_MAX) {
		errno = EMSGSIZE;
		return -1;
	}
	for (i = 0; i < 2; i++) {
		for (off = 0; off < sizes[i]; off += (size_t)n) {
			n = write(fd, parts[i] + off, sizes[i] - off);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n <= 0)
				return -1;
		}
	}
	return 0;
}

char *hostexec_reader_space(struct hostexec_reader *rd, size_t n)
{
	char *nb;
	size_t ncap;

	if (rd->consumed) {
		memmove(rd->buf, rd->buf + rd->consumed,
			rd->len - rd->consumed);
		rd->len -= rd->consumed;
		rd->consumed = 0;
	}
	if (rd->cap - rd->len >= n)
		return rd->buf + rd->len;
	ncap = rd->cap ? rd->cap : 65536;
	while (ncap - rd->len < n)
		ncap *= 2;
	nb = realloc(rd->buf, ncap);
	if (!nb)
		return NULL;
	rd->buf = nb;
	rd->cap = ncap;
	return rd->buf + rd->len;
}

int hostexec_reader_next(struct hostexec_reader *rd, const char **body,
			 size_t *len)
{
	const unsigned char *p;
	size_t avail, n;

	if (rd->consumed) {
		memmove(rd->buf, rd->buf + rd->consumed,
			rd->len - rd->consumed);
		rd->len -= rd->consumed;
		rd->consumed = 0;
	}
	avail = rd->len;
	if (avail < 4)
		return 0;
	p = (const unsigned char *)rd->buf;
	n = (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 |
	    (size_t)p[3];
	if (n == 0 || n > HOSTEXEC_FRAME_MAX)
		return -1;
	if (avail - 4 < n)
		return 0;
	*body = rd->buf + 4;
	*len = n;
	rd->consumed = 4 + n;
	return 1;
}

void hostexec_reader_free(struct hostexec_reader *rd)
{
	free(rd->buf);
	memset(rd, 0, sizeof(*rd));
}
