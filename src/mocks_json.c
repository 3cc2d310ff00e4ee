/*
 * mocks_json.c - JSON helpers for policy and mocks: tool patterns, value
 * equality by value, RFC 6901 pointers and dotted-path overrides.
 */
#include "mocks_json.h"

#include "jsoneq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mocks.h"

const char *mocks_pattern_problem(const char *pattern)
{
	const char *star;
	size_t len;

	if (!pattern || !*pattern)
		return "must be a non-empty string";
	len = strlen(pattern);
	star = strchr(pattern, '*');
	if (!star)
		return NULL;
	if (strchr(star + 1, '*'))
		return "only one '*' is allowed";
	if (star != pattern && star != pattern + len - 1)
		return "'*' is a wildcard only alone, at the start or at the end";
	return NULL;
}

bool mocks_key_in(const char *key, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(key, *list))
			return true;
	return false;
}

enum lf_err mocks_check_keys(const json_t *obj, const char *const *keys,
			     const char *at, struct lf_why *why)
{
	const char *k;
	json_t *v;

	if (!json_is_object(obj))
		return lf_fail(why, LF_EINVAL_DOC, "%s: must be a mapping", at);
	json_object_foreach((json_t *)obj, k, v)
	{
		if (!strcmp(k, "cassette_file"))
			return lf_fail(
				why, LF_EINVAL_DOC,
				"%s.cassette_file: cassette_file must be resolved by ledgerctl before loading",
				at);
		if (!mocks_key_in(k, keys))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s: unknown key '%.60s'", at, k);
	}
	return LF_OK;
}

const char *mocks_pointer_problem(const char *ptr)
{
	const char *p;

	if (!ptr || *ptr != '/')
		return "a JSON Pointer starts with '/'";
	for (p = ptr; *p; p++)
		if (*p == '~' && p[1] != '0' && p[1] != '1')
			return "'~' must be followed by 0 or 1";
	return NULL;
}

/* Decode one reference token [s, e) into buf (~1 -> '/', ~0 -> '~'). */
static char *token_dup(const char *s, const char *e)
{
	char *buf = malloc((size_t)(e - s) + 1), *o = buf;

	if (!buf)
		return NULL;
	while (s < e) {
		if (*s == '~' && s + 1 < e && (s[1] == '0' || s[1] == '1')) {
			*o++ = s[1] == '0' ? '~' : '/';
			s += 2;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return buf;
}

/* An array index: "0" or digits without a leading zero. -1 otherwise. */
static long long parse_index(const char *t)
{
	long long n = 0;

	if (!*t || (t[0] == '0' && t[1]))
		return -1;
	for (; *t; t++) {
		if (*t < '0' || *t > '9' || n > 100000000000LL)
			return -1;
		n = n * 10 + (*t - '0');
	}
	return n;
}

const json_t *mocks_pointer_get(const json_t *root, const char *ptr)
{
	const json_t *cur = root;
	const char *s = ptr, *e;
	char *tok;
	long long idx;

	if (!ptr || mocks_pointer_problem(ptr))
		return NULL;
	while (cur && *s == '/') {
		s++;
		e = strchr(s, '/');
		if (!e)
			e = s + strlen(s);
		tok = token_dup(s, e);
		if (!tok)
			return NULL;
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			idx = parse_index(tok);
			cur = idx < 0 ? NULL : json_array_get(cur, (size_t)idx);
		} else {
			cur = NULL;
		}
		free(tok);
		s = e;
	}
	return cur;
}

/*
 * Replace the value at a dotted path (a numeric segment indexes a list).
 * Every segment must resolve: overrides change a recorded value, they
 * never invent one, so a typo is caught when the document is loaded.
 */
static int set_path(json_t *root, const char *path, const json_t *value,
		    struct lf_why *why, size_t n)
{
	json_t *cur = root, *next;
	char *copy, *seg, *save = NULL, *last = NULL;
	long long idx;
	int rc = -1;

	if (!*path) {
		lf_fail(why, LF_EINVAL_DOC, "overrides[%zu].path: empty path",
			n);
		return -1;
	}
	copy = strdup(path);
	if (!copy) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return -1;
	}
	if (copy[0] == '.' || copy[strlen(copy) - 1] == '.' ||
	    strstr(copy, "..")) {
		lf_fail(why, LF_EINVAL_DOC,
			"overrides[%zu].path: empty segment in '%.80s'", n,
			path);
		goto out;
	}
	for (seg = strtok_r(copy, ".", &save); seg;
	     seg = strtok_r(NULL, ".", &save)) {
		if (last) {
			cur = next;
			if (!json_is_object(cur) && !json_is_array(cur))
				goto unresolved;
		}
		last = seg;
		if (json_is_object(cur)) {
			next = json_object_get(cur, seg);
		} else {
			idx = parse_index(seg);
			next = idx < 0 ? NULL
				       : json_array_get(cur, (size_t)idx);
		}
		if (!next)
			goto unresolved;
	}
	/* A copy: the document stays untouched and shared across threads. */
	if (json_is_object(cur))
		rc = json_object_set_new(cur, last, json_deep_copy(value));
	else
		rc = json_array_set_new(cur, (size_t)parse_index(last),
					json_deep_copy(value));
	if (rc)
		lf_fail(why, LF_NOMEM, "out of memory");
	goto out;
unresolved:
	lf_fail(why, LF_EINVAL_DOC,
		"overrides[%zu].path: '%.80s' does not resolve in the cassette",
		n, path);
out:
	free(copy);
	return rc;
}

json_t *mocks_apply_overrides(const json_t *cassette, const json_t *overrides,
			      struct lf_why *why)
{
	json_t *copy, *o;
	const json_t *path;
	size_t i;
	const char *k;
	json_t *v;

	copy = json_deep_copy(cassette);
	if (!copy) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	if (!overrides)
		return copy;
	if (!json_is_array(overrides)) {
		lf_fail(why, LF_EINVAL_DOC, "overrides: must be a list");
		goto bad;
	}
	json_array_foreach(overrides, i, o)
	{
		if (!json_is_object(o)) {
			lf_fail(why, LF_EINVAL_DOC,
				"overrides[%zu]: must be a mapping", i);
			goto bad;
		}
		json_object_foreach(o, k, v)
		{
			if (strcmp(k, "path") && strcmp(k, "value")) {
				lf_fail(why, LF_EINVAL_DOC,
					"overrides[%zu]: unknown key '%.60s'",
					i, k);
				goto bad;
			}
		}
		path = json_object_get(o, "path");
		if (!json_is_string(path) || !json_object_get(o, "value")) {
			lf_fail(why, LF_EINVAL_DOC,
				"overrides[%zu]: needs a string path and a value",
				i);
			goto bad;
		}
		if (set_path(copy, json_string_value(path),
			     json_object_get(o, "value"), why, i))
			goto bad;
	}
	return copy;
bad:
	json_decref(copy);
	return NULL;
}
