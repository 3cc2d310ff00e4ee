/* SPDX-License-Identifier: MIT */
/*
 * case_tools.c - a case's tools file (src/tools.h): set by the host
 * before registration, kept in case.json with its hash so a change to
 * it between runs is seen at load, shown to the target read-only.
 */
#include "case_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

enum lf_err case_set_tools(struct lf_case *c, const char *text, size_t len,
			   struct lf_why *why)
{
	enum lf_err e;
	char *copy, *old;

	case_lock(c);
	if (c->state == CASE_CLOSED || c->state == CASE_FAILED) {
		e = lf_fail(why, LF_CLOSED, "case is %s",
			    case_state_name(c->state));
		goto out;
	}
	if (c->state == CASE_REGISTERED) {
		e = lf_fail(why, LF_FROZEN,
			    "tools is frozen: the target has registered");
		goto out;
	}
	e = tools_check(text, len, why);
	if (e != LF_OK)
		goto out;
	copy = strndup(text, len);
	if (!copy) {
		e = lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	old = c->tools;
	c->tools = copy;
	if (case_write_meta(c) < 0) {
		e = lf_fail(why, LF_IO, "write case.json: %s", strerror(errno));
		c->tools = old;
		free(copy);
		goto out;
	}
	free(old);
out:
	pthread_mutex_unlock(&c->lock);
	return e;
}

enum lf_err case_load_tools(struct lf_case *c, const char *text,
			    const char *digest, struct lf_why *why)
{
	char got[CHAIN_HEX_LEN + 1];

	chain_sha256_hex(text, strlen(text), got);
	if (!digest || strcmp(got, digest) != 0)
		return lf_fail(why, LF_VERIFY,
			       "case %s: case.json: tools do not match "
			       "tools_sha256",
			       c->name);
	if (tools_check(text, strlen(text), why) != LF_OK)
		return LF_VERIFY;
	free(c->tools);
	c->tools = strdup(text);
	return c->tools ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

char *case_tools_text(struct lf_case *c)
{
	char *s;

	case_lock(c);
	s = strdup(c->tools ? c->tools : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

char *case_target_tools(struct lf_case *c)
{
	char *s;

	case_lock(c);
	if (c->tools)
		s = strdup(c->tools);
	else if (CASE_POLICY(c))
		s = tools_from_policy(policy_doc(CASE_POLICY(c)));
	else
		s = strdup("{\"tools\":[]}\n");
	pthread_mutex_unlock(&c->lock);
	return s;
}
