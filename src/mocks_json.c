/* SPDX-License-Identifier: MIT */
/*
 * mocks_json.c - JSON helpers for policy and mocks: tool patterns, value
 * ASSERT's dotted-path overrides and cassette names.
 */
#include "mocks_json.h"

#include "jsoneq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mocks.h"
#include "pyval.h"

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
		if (!mocks_key_in(k, keys))
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s: unknown key '%.60s'", at, k);
	}
	return LF_OK;
}

/* Python's int(seg): blanks, a sign, digits with single underscores. */
static int py_int(const char *seg, long long *out)
{
	const char *p = seg;
	long long v = 0;
	int sign = 1, digits = 0;

	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	for (; *p; p++) {
		if (*p == '_' && digits && p[1] >= '0' && p[1] <= '9')
			continue;
		if (*p < '0' || *p > '9')
			break;
		if (v > (1LL << 53))
			return -1;
		v = v * 10 + (*p - '0');
		digits++;
	}
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (!digits || *p)
		return -1;
	*out = sign * v;
	return 0;
}

/* A list index as Python takes it (negative counts from the end). */
static json_t *list_slot(json_t *list, const char *seg, size_t *at,
			 struct lf_why *why, bool assign)
{
	long long i;
	size_t n = json_array_size(list);
	char *r;

	if (py_int(seg, &i)) {
		r = pyval_repr_text(seg);
		lf_fail(why, LF_EINVAL_JSON,
			"invalid literal for int() with base 10: %.80s",
			r ? r : "''");
		free(r);
		return NULL;
	}
	if (i < 0)
		i += (long long)n;
	if (i < 0 || (size_t)i >= n) {
		lf_fail(why, LF_EINVAL_JSON, "%s",
			assign ? "list assignment index out of range"
			       : "list index out of range");
		return NULL;
	}
	*at = (size_t)i;
	return json_array_get(list, (size_t)i);
}

/* One override, ASSERT's _apply_overrides step by step. */
static int set_path(json_t *root, const char *path, const json_t *value,
		    struct lf_why *why)
{
	json_t *cur = root, *next;
	char *copy = strdup(path), *seg, *dot;
	size_t at;
	int rc = -1;

	if (!copy)
		return lf_fail(why, LF_NOMEM, "out of memory"), -1;
	for (seg = copy; (dot = strchr(seg, '.')); seg = dot + 1) {
		*dot = '\0';
		if (json_is_array(cur)) {
			next = list_slot(cur, seg, &at, why, false);
			if (!next)
				goto out;
		} else if (json_is_object(cur)) {
			next = json_object_get(cur, seg);
			if (!next) {
				/* setdefault(seg, {}): a missing key is added */
				next = json_object();
				if (!next ||
				    json_object_set_new(cur, seg, next)) {
					lf_fail(why, LF_NOMEM, "out of memory");
					goto out;
				}
			}
		} else {
			lf_fail(why, LF_EINVAL_JSON,
				"'%s' object has no attribute 'setdefault'",
				pyval_type_name(cur));
			goto out;
		}
		cur = next;
	}
	/* A copy: the document stays untouched and shared across threads. */
	if (json_is_array(cur)) {
		if (!list_slot(cur, seg, &at, why, true))
			goto out;
		rc = json_array_set_new(cur, at, json_deep_copy(value));
	} else if (json_is_object(cur)) {
		rc = json_object_set_new(cur, seg, json_deep_copy(value));
	} else {
		lf_fail(why, LF_EINVAL_JSON,
			"'%s' object does not support item assignment",
			pyval_type_name(cur));
		goto out;
	}
	if (rc)
		lf_fail(why, LF_NOMEM, "out of memory");
out:
	free(copy);
	return rc;
}

json_t *mocks_apply_overrides(const json_t *base, const json_t *overrides,
			      struct lf_why *why)
{
	json_t *copy, *o;
	char *path;
	size_t i;

	copy = json_deep_copy(base);
	if (!copy) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	json_array_foreach(overrides, i, o)
	{
		path = pyval_str(json_object_get(o, "path"));
		if (!path ||
		    set_path(copy, path, json_object_get(o, "value"), why)) {
			if (!path)
				lf_fail(why, LF_NOMEM, "out of memory");
			free(path);
			json_decref(copy);
			return NULL;
		}
		free(path);
	}
	return copy;
}

char *mocks_cassette_stem(const char *name, struct lf_why *why)
{
	const char *s = name;
	size_t n;
	char *stem, *r;

	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r')))
		n--;
	stem = strndup(s, n);
	if (!stem) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	if (!*stem || strstr(stem, "..") || strchr(stem, '/') ||
	    strchr(stem, '\\')) {
		r = pyval_repr_text(stem);
		lf_fail(why, LF_EINVAL_JSON,
			"cassette name must be a single safe filename stem, got "
			"%.120s",
			r ? r : "''");
		free(r);
		free(stem);
		return NULL;
	}
	return stem;
}
