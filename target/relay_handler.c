/* SPDX-License-Identifier: MIT */
/*
 * relay_handler.c - ASSERT's host-mediator HTTP (host_mediator.py) over
 * the file protocol: the same checks in the same order, the same answers
 * and details, the reply object trimmed to ASSERT's decision payload
 * (ledgerfs-relay(1) PROTOCOL, DIFFERENCES FROM ASSERT).
 */
#include "relay_handler.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "relay_py.h"

#define MSG_REG_CASE                                                           \
	"mediator registration case_id does not match the ASSERT-owned sandbox case"
#define MSG_CALL_CASE                                                          \
	"mediated call case_id does not match the ASSERT-owned sandbox case"
#define MSG_TOOL_CALL                                                          \
	"host mediator requires tool_call.id, tool_call.name, and object args"

/* Keys of the reply object that are ledgerfs's own (ledgerfs(8)). */
static const char *const own_keys[] = {
	"call_id",    "sequence", "result_source", "result_authoritative",
	"over_limit",
};

int relay_init(struct relay *r, const struct relay_backend *be,
	       const char *bearer, const char *env_case, const char *token)
{
	memset(r, 0, sizeof(*r));
	r->be = be;
	r->bearer = bearer;
	r->env_case = env_case && *env_case ? env_case : NULL;
	r->token = token && *token ? token : NULL;
	r->completed = json_object();
	if (!r->completed || pthread_mutex_init(&r->lock, NULL) != 0) {
		json_decref(r->completed);
		return -1;
	}
	return 0;
}

void relay_fini(struct relay *r)
{
	json_decref(r->completed);
	free(r->case_id);
	pthread_mutex_destroy(&r->lock);
}

static void answer(struct relay_response *out, unsigned status, json_t *v)
{
	out->status = status;
	out->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (!out->body) {
		out->status = 500;
		out->body = strdup("{\"error\":\"out_of_memory\"}");
	}
}

static void answer_error(struct relay_response *out, unsigned status,
			 const char *error, const char *detail)
{
	answer(out, status,
	       detail ? json_pack("{s:s, s:s}", "error", error, "detail",
				  detail)
		      : json_pack("{s:s}", "error", error));
}

/* 400 invalid_request, as host_mediator.py answers a ValueError. */
static void invalid(struct relay_response *out, const char *detail)
{
	answer_error(out, 400, "invalid_request", detail);
}

/* The view's reason without its errno name ("EINVAL why" -> "why"). */
static const char *const view_files[] = {"request: ", "result: ", "register: "};

static void view_reason(struct relay *r, int err, char *buf, size_t size)
{
	char raw[600];
	const char *s = raw;

	r->be->reason(r->be->ctx, err, raw, sizeof(raw));
	if (s[0] == 'E') {
		const char *sp = strchr(s, ' ');

		if (sp &&
		    strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == (size_t)(sp - s))
			s = sp + 1;
	}
	/* Then the file it was written to ("request: "): ASSERT's detail
	 * is what follows (ledgerfs(8) Errors of the target folder). */
	for (size_t i = 0; i < sizeof(view_files) / sizeof(view_files[0]); i++)
		if (!strncmp(s, view_files[i], strlen(view_files[i]))) {
			s += strlen(view_files[i]);
			break;
		}
	if (!*s)
		s = err > 0 ? strerror(err) : "argument too long";
	snprintf(buf, size, "%s", s);
}

/* The case calls are checked against: registered, else LEDGERFS_CASE. */
static char *expected_case(struct relay *r)
{
	char *s;

	pthread_mutex_lock(&r->lock);
	s = r->case_id	  ? strdup(r->case_id)
	    : r->env_case ? strdup(r->env_case)
			  : NULL;
	pthread_mutex_unlock(&r->lock);
	return s;
}

/*
 * Register case_id with the view (when a token is known) and remember
 * it.  0, or the errno; -2 when another case is registered already.
 */
static int do_register(struct relay *r, const char *case_id)
{
	int err = 0;
	bool done;

	pthread_mutex_lock(&r->lock);
	if (r->case_id && strcmp(r->case_id, case_id) != 0)
		err = -2;
	/* Registered through here already: a repeat would change nothing. */
	done = r->case_id != NULL;
	pthread_mutex_unlock(&r->lock);
	if (err || done)
		return err;
	if (r->token)
		err = r->be->reg(r->be->ctx, case_id, r->token);
	if (err)
		return err;
	pthread_mutex_lock(&r->lock);
	if (!r->case_id)
		r->case_id = strdup(case_id);
	err = r->case_id ? 0 : ENOMEM;
	pthread_mutex_unlock(&r->lock);
	return err;
}

static void on_register(struct relay *r, const json_t *payload,
			struct relay_response *out)
{
	char *claimed = NULL, detail[700];
	const char *use;
	int err;

	if (py_str(json_object_get(payload, "case_id"), &claimed) < 0)
		return invalid(out, MSG_REG_CASE);
	use = claimed ? claimed : r->env_case;
	if (!use) {
		invalid(out,
			"no case_id given and LEDGERFS_CASE is not set: nothing to register");
	} else if (r->env_case && strcmp(use, r->env_case) != 0) {
		invalid(out, MSG_REG_CASE);
	} else if ((err = do_register(r, use)) == -2 || err == EACCES ||
		   err == EINVAL) {
		/* A wrong token, or one the daemon cannot read (malformed). */
		invalid(out, MSG_REG_CASE);
	} else if (err) {
		view_reason(r, err, detail, sizeof(detail));
		invalid(out, detail);
	} else {
		answer(out, 200, json_pack("{s:s}", "status", "registered"));
	}
	free(claimed);
}

/*
 * The reply object as ASSERT's decision payload: ledgerfs's own keys
 * dropped; a host-executed call shown as mode mock with mock_source
 * host_executed, the only way ASSERT's client does not run a tool
 * (ledgerfs-relay(1) HOST-EXECUTED CALLS).  New reference, NULL when the
 * reply is no decision.
 */
static json_t *decision_of(const char *reply)
{
	json_t *rep = json_loads(reply, 0, NULL), *d = json_object(), *v;
	const char *key,
		*mode = json_string_value(json_object_get(rep, "mode"));
	const char *src =
		json_string_value(json_object_get(rep, "result_source"));
	bool host_exec = src && !strcmp(src, "host_executed"), ms_done = false;
	size_t i;

	if (!rep || !d || !mode ||
	    (strcmp(mode, "pass") && strcmp(mode, "mock") &&
	     strcmp(mode, "block"))) {
		json_decref(rep);
		json_decref(d);
		return NULL;
	}
	json_object_foreach(rep, key, v)
	{
		bool own = false;

		for (i = 0; i < sizeof(own_keys) / sizeof(own_keys[0]); i++)
			own = own || !strcmp(key, own_keys[i]);
		if (own || (host_exec && !strcmp(key, "mock_source")))
			continue;
		if (host_exec && !ms_done &&
		    (!strcmp(key, "replay") || !strcmp(key, "is_error"))) {
			json_object_set_new(d, "mock_source",
					    json_string("host_executed"));
			ms_done = true;
		}
		if (host_exec && !strcmp(key, "mode"))
			json_object_set_new(d, key, json_string("mock"));
		else if (host_exec && !strcmp(key, "flagged"))
			json_object_set_new(d, key, json_true());
		else
			json_object_set(d, key, v);
	}
	if (host_exec && !ms_done)
		json_object_set_new(d, "mock_source",
				    json_string("host_executed"));
	json_decref(rep);
	return d;
}

/* tool_call.id / .name as host_mediator.py reads them.  -1: refuse. */
static int tool_call_str(const json_t *tc, const char *key, char **out)
{
	if (py_str(json_object_get(tc, key), out) < 0)
		return -1;
	if (*out)
		py_strip(*out);
	if (*out && !**out) {
		free(*out);
		*out = NULL;
	}
	return *out ? 0 : -1;
}

static void send_call(struct relay *r, const char *id, const char *tool,
		      const json_t *args, struct relay_response *out)
{
	char *text = json_dumps(args, JSON_COMPACT), *reply = NULL, *cs;
	char detail[700];
	json_t *d;
	int err;

	if (!text)
		return answer_error(out, 500, "out_of_memory", NULL);
	/* ASSERT does not ask for /register first; the view does. */
	cs = expected_case(r);
	if (cs)
		do_register(r, cs);
	free(cs);
	err = r->be->call(r->be->ctx, id, tool, text, &reply);
	free(text);
	if (err == EEXIST) {
		py_repr(id, detail, sizeof(detail),
			"duplicate mediation call id ");
		invalid(out, detail);
	} else if (err == EPROTO) {
		answer_error(out, 502, "mediator_unavailable",
			     "the case gave no reply");
	} else if (err == ENOENT || err == ENOTDIR || err == ENOTCONN ||
		   err == ENXIO) {
		/* The folder is not there: the relay's trouble, not the call's. */
		snprintf(detail, sizeof(detail),
			 "cannot reach the case's target folder: %s",
			 strerror(err));
		answer_error(out, 502, "mediator_unavailable", detail);
	} else if (err) {
		view_reason(r, err, detail, sizeof(detail));
		invalid(out, detail);
	} else if (!(d = decision_of(reply))) {
		answer_error(out, 502, "mediator_unavailable",
			     "the case's reply is not a decision");
	} else {
		answer(out, 200, json_pack("{s:o}", "decision", d));
	}
	free(reply);
}

static void on_mediate(struct relay *r, const json_t *payload,
		       struct relay_response *out)
{
	const json_t *pre = json_object_get(payload, "pre_context"), *tc, *args;
	const json_t *session;
	char *id = NULL, *tool = NULL, *claimed = NULL, *expected = NULL;

	if (!json_is_object(pre))
		return invalid(out, "mediate requires object pre_context");
	tc = json_object_get(pre, "tool_call");
	if (!py_truthy(tc))
		tc = NULL;
	args = json_object_get(tc, "args");
	if (!py_truthy(args))
		args = NULL;
	if ((tc && !json_is_object(tc)) || tool_call_str(tc, "id", &id) < 0 ||
	    tool_call_str(tc, "name", &tool) < 0 ||
	    (args && !json_is_object(args))) {
		invalid(out, MSG_TOOL_CALL);
		goto out;
	}
	session = json_object_get(pre, "session");
	if (!json_is_object(session) && py_truthy(session)) {
		invalid(out, MSG_CALL_CASE);
		goto out;
	}
	expected = expected_case(r);
	if (py_str(json_object_get(session, "case_id"), &claimed) < 0 ||
	    (expected && (!claimed || strcmp(claimed, expected) != 0))) {
		invalid(out, MSG_CALL_CASE);
		goto out;
	}
	/* ASSERT's ActionMediator.plan: nothing is decided or recorded. */
	if (strcmp(json_string_value(json_object_get(pre, "interception_point"))
			   ?: "",
		   "pre_tool_call") != 0) {
		invalid(out, "ActionMediator expects a pre_tool_call context");
		goto out;
	}
	/*
	 * host_mediator.py strips the name only to see that there is one:
	 * the policy decides on the name as sent (ActionMediator.plan).
	 */
	free(tool);
	tool = NULL;
	if (py_str(json_object_get(tc, "name"), &tool) < 0 || !tool) {
		invalid(out, MSG_TOOL_CALL);
		goto out;
	}
	if (args) {
		send_call(r, id, tool, args, out);
	} else {
		json_t *empty = json_object();

		send_call(r, id, tool, empty, out);
		json_decref(empty);
	}
out:
	free(id);
	free(tool);
	free(claimed);
	free(expected);
}

static void on_complete(struct relay *r, const json_t *payload,
			struct relay_response *out)
{
	const json_t *ret = json_object_get(payload, "returned");
	char *id = NULL, *text = NULL, detail[700];
	bool seen;
	int err;

	if (py_str(json_object_get(payload, "call_id"), &id) < 0 || !id) {
		free(id);
		id = NULL;
	}
	pthread_mutex_lock(&r->lock);
	seen = !id || json_object_get(r->completed, id);
	if (!seen)
		json_object_set_new(r->completed, id, json_true());
	pthread_mutex_unlock(&r->lock);
	if (seen) {
		py_repr(id ? id : "", detail, sizeof(detail),
			"unknown or already-completed mediation call ");
		invalid(out, detail);
		goto out;
	}
	text = json_dumps(ret ? ret : json_null(),
			  JSON_COMPACT | JSON_ENCODE_ANY);
	err = text ? r->be->result(
			     r->be->ctx, id, text,
			     py_truthy(json_object_get(payload, "is_error")),
			     py_truthy(
				     json_object_get(payload, "real_executed")))
		   : ENOMEM;
	if (!err) {
		answer(out, 200, json_pack("{s:s}", "status", "recorded"));
		goto out;
	}
	pthread_mutex_lock(&r->lock);
	json_object_del(r->completed, id);
	pthread_mutex_unlock(&r->lock);
	if (err == ENXIO || err == ENOTDIR || err == ENOTCONN) {
		/* The folder is not there: the relay's trouble, as for /mediate. */
		snprintf(detail, sizeof(detail),
			 "cannot reach the case's target folder: %s",
			 strerror(err == ENXIO ? ENOENT : err));
		answer_error(out, 502, "mediator_unavailable", detail);
		goto out;
	}
	if (err == ENOENT || err == EINVAL || err == EEXIST)
		py_repr(id, detail, sizeof(detail),
			"unknown or already-completed mediation call ");
	else
		view_reason(r, err, detail, sizeof(detail));
	invalid(out, detail);
out:
	free(text);
	free(id);
}

/* host_mediator.py: int(content-length or 0), then 0 < length <= 1 MiB. */
static bool size_ok(const char *cl, size_t *n)
{
	unsigned long long v = 0;
	const char *s = cl ? cl : "";

	s += strspn(s, " \t");
	if (*s == '+')
		s++;
	if (!*s)
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned)(*s - '0');
		if (v > RELAY_BODY_MAX)
			return false;
	}
	s += strspn(s, " \t");
	if (*s || v == 0)
		return false;
	*n = (size_t)v;
	return true;
}

void relay_handle(struct relay *r, const struct relay_request *q,
		  struct relay_response *out)
{
	struct lf_why why = {{0}};
	json_error_t jerr;
	json_t *payload;
	size_t want, skip;

	out->status = 0;
	out->body = NULL;
	if (q->via && http_guard_host(q->via->l, q->via->port, q->hosts,
				      q->nhosts, &why) != LF_OK)
		return answer_error(out, 403, "forbidden_host", why.msg);
	if (!strcmp(q->method, "GET"))
		return !strcmp(q->path, "/health")
			       ? answer(out, 200,
					json_pack("{s:s}", "status", "ok"))
			       : answer_error(out, 404, "not_found", NULL);
	if (strcmp(q->method, "POST") != 0)
		return answer_error(out, 501, "unsupported_method", NULL);
	if (!q->authorization ||
	    !http_token_equal(q->authorization, strlen(q->authorization),
			      r->bearer))
		return answer_error(out, 401, "invalid_mediator_token", NULL);
	if (!size_ok(q->content_length, &want))
		return invalid(out, "invalid mediation request size");
	if (!q->body)
		return; /* status 0: read the body */
	/* Python's json.loads of bytes reads UTF-8 after a byte-order mark. */
	skip = q->body_len >= 3 && !memcmp(q->body, "\xef\xbb\xbf", 3) ? 3 : 0;
	payload = json_loadb(q->body + skip, q->body_len - skip,
			     JSON_DECODE_ANY, &jerr);
	if (!payload)
		return invalid(out, jerr.text);
	if (!json_is_object(payload))
		invalid(out, "mediation request must be a JSON object");
	else if (!strcmp(q->path, "/mediate"))
		on_mediate(r, payload, out);
	else if (!strcmp(q->path, "/register"))
		on_register(r, payload, out);
	else if (!strcmp(q->path, "/complete"))
		on_complete(r, payload, out);
	else
		answer_error(out, 404, "not_found", NULL);
	json_decref(payload);
}
