/* SPDX-License-Identifier: MIT */
/*
 * exec_spec.c - the `exec:` mapping of a pass rule (ledgerfs-policy(5)
 * HOST EXECUTORS): strict keys, units.h's durations and sizes, bounds
 * that keep the helper's frames small.  The same parser reads the spec
 * back inside the helper, so what the helper runs was checked the same way.
 */
#include "exec_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mocks_json.h"
#include "units.h"

static const char *const exec_keys[] = {
	"argv", "timeout", "max_output", "env_file", "user", "cwd", NULL,
};

/* A duration or size: a YAML integer (seconds, bytes) or units.h text. */
static enum lf_err exec_quantity(const json_t *v, bool duration, const char *at,
				 const char *key, uint64_t *out,
				 struct lf_why *why)
{
	struct lf_why inner;
	enum lf_err e;

	if (json_is_integer(v) && json_integer_value(v) > 0) {
		*out = (uint64_t)json_integer_value(v);
		if (duration)
			*out *= 1000;
		return LF_OK;
	}
	if (!json_is_string(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec.%s: must be a %s such as %s", at, key,
			       duration ? "duration" : "size",
			       duration ? "10s" : "1MiB");
	e = duration ? units_duration_ms(json_string_value(v), out, &inner)
		     : units_size(json_string_value(v), out, &inner);
	if (e != LF_OK)
		return lf_fail(why, LF_EINVAL_DOC, "%s.exec.%s: %s", at, key,
			       inner.msg);
	if (*out == 0)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec.%s: must be more than 0", at, key);
	return LF_OK;
}

/* A non-empty string without NUL or newline; absent is fine. */
static enum lf_err exec_text(const json_t *obj, const char *at, const char *key,
			     bool path, char **out, struct lf_why *why)
{
	const json_t *v = json_object_get(obj, key);
	const char *s;

	*out = NULL;
	if (!v)
		return LF_OK;
	s = json_string_value(v);
	if (!s || !*s || strlen(s) != json_string_length(v) ||
	    strlen(s) > EXEC_ARG_BYTES_MAX || strchr(s, '\n'))
		return lf_fail(
			why, LF_EINVAL_DOC,
			"%s.exec.%s: must be a non-empty one-line string", at,
			key);
	if (path && s[0] != '/')
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec.%s: must be an absolute path", at, key);
	*out = strdup(s);
	return *out ? LF_OK : lf_fail(why, LF_NOMEM, "out of memory");
}

static enum lf_err exec_argv(const json_t *list, const char *at,
			     struct exec_spec *s, struct lf_why *why)
{
	const json_t *a;
	size_t i;

	if (!json_is_array(list) || !json_array_size(list))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec.argv: required, a non-empty list of "
			       "strings",
			       at);
	if (json_array_size(list) > EXEC_ARGV_MAX)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec.argv: more than %d items", at,
			       EXEC_ARGV_MAX);
	s->argv = calloc(json_array_size(list) + 1, sizeof(*s->argv));
	if (!s->argv)
		return lf_fail(why, LF_NOMEM, "out of memory");
	json_array_foreach(list, i, a)
	{
		const char *t = json_string_value(a);

		if (!t || strlen(t) != json_string_length(a) ||
		    strlen(t) > EXEC_ARG_BYTES_MAX)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.exec.argv[%zu]: must be a string "
				       "(no NUL, up to %d bytes)",
				       at, i, EXEC_ARG_BYTES_MAX);
		if (i == 0 && t[0] != '/')
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s.exec.argv[0]: must be an absolute "
				       "path (the host's PATH is not searched)",
				       at);
		s->argv[i] = strdup(t);
		if (!s->argv[i])
			return lf_fail(why, LF_NOMEM, "out of memory");
		s->argc++;
	}
	return LF_OK;
}

enum lf_err exec_spec_parse(const json_t *v, const char *at,
			    struct exec_spec **out, struct lf_why *why)
{
	struct exec_spec *s;
	const json_t *q;
	enum lf_err e;
	char where[96];

	*out = NULL;
	if (!json_is_object(v))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.exec: must be a mapping with at least argv",
			       at);
	snprintf(where, sizeof(where), "%s.exec", at);
	e = mocks_check_keys(v, exec_keys, where, why);
	if (e != LF_OK)
		return e;
	s = calloc(1, sizeof(*s));
	if (!s)
		return lf_fail(why, LF_NOMEM, "out of memory");
	s->timeout_ms = EXEC_TIMEOUT_DEFAULT_MS;
	s->max_output = EXEC_OUTPUT_DEFAULT;
	e = exec_argv(json_object_get(v, "argv"), at, s, why);
	if (e != LF_OK)
		goto fail;
	q = json_object_get(v, "timeout");
	if (q) {
		e = exec_quantity(q, true, at, "timeout", &s->timeout_ms, why);
		if (e != LF_OK)
			goto fail;
		if (s->timeout_ms > EXEC_TIMEOUT_MAX_MS) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "%s.exec.timeout: at most 1h", at);
			goto fail;
		}
	}
	q = json_object_get(v, "max_output");
	if (q) {
		e = exec_quantity(q, false, at, "max_output", &s->max_output,
				  why);
		if (e != LF_OK)
			goto fail;
		if (s->max_output > EXEC_OUTPUT_MAX) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "%s.exec.max_output: at most 8MiB", at);
			goto fail;
		}
	}
	e = exec_text(v, at, "env_file", true, &s->env_file, why);
	if (e == LF_OK)
		e = exec_text(v, at, "user", false, &s->user, why);
	if (e == LF_OK)
		e = exec_text(v, at, "cwd", true, &s->cwd, why);
	if (e != LF_OK)
		goto fail;
	*out = s;
	return LF_OK;
fail:
	exec_spec_free(s);
	return e;
}

void exec_spec_free(struct exec_spec *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; s->argv && s->argv[i]; i++)
		free(s->argv[i]);
	free(s->argv);
	free(s->env_file);
	free(s->user);
	free(s->cwd);
	free(s);
}

json_t *exec_spec_to_json(const struct exec_spec *s)
{
	json_t *o = json_object(), *a = json_array();
	size_t i;

	if (!o || !a) {
		json_decref(o);
		json_decref(a);
		return NULL;
	}
	for (i = 0; i < s->argc; i++)
		json_array_append_new(a, json_string(s->argv[i]));
	json_object_set_new(o, "argv", a);
	/* Integers in the spec's own units: the parser reads them back. */
	json_object_set_new(
		o, "timeout",
		json_sprintf("%llums", (unsigned long long)s->timeout_ms));
	json_object_set_new(o, "max_output",
			    json_integer((json_int_t)s->max_output));
	if (s->env_file)
		json_object_set_new(o, "env_file", json_string(s->env_file));
	if (s->user)
		json_object_set_new(o, "user", json_string(s->user));
	if (s->cwd)
		json_object_set_new(o, "cwd", json_string(s->cwd));
	return o;
}
