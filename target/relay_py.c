/* SPDX-License-Identifier: MIT */
/*
 * relay_py.c - Python's truthiness, str(), strip() and repr() of a
 * string, as far as ASSERT's host mediator applies them to a request
 * (see relay_py.h).
 */
#include "relay_py.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool py_truthy(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_TRUE:
		return true;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0.0;
	case JSON_STRING:
		return json_string_length(v) > 0;
	case JSON_ARRAY:
		return json_array_size(v) > 0;
	case JSON_OBJECT:
		return json_object_size(v) > 0;
	default:
		return false;
	}
}

int py_str(const json_t *v, char **out)
{
	char num[32];

	*out = NULL;
	if (!py_truthy(v))
		return 0;
	if (json_is_string(v)) {
		*out = strdup(json_string_value(v));
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		*out = strdup(num);
	} else if (json_is_true(v)) {
		*out = strdup("True");
	} else {
		return -1;
	}
	return *out ? 0 : -1;
}

static bool py_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

void py_strip(char *s)
{
	size_t n = strlen(s), a = 0;

	while (n && py_space((unsigned char)s[n - 1]))
		n--;
	while (a < n && py_space((unsigned char)s[a]))
		a++;
	memmove(s, s + a, n - a);
	s[n - a] = '\0';
}

void py_repr(const char *s, char *buf, size_t size, const char *prefix)
{
	char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
	size_t n;
	int k;

	if (!size)
		return;
	k = snprintf(buf, size, "%s%c", prefix, q);
	n = k < 0 ? 0 : (size_t)k;
	for (; *s && n + 8 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' || c == (unsigned char)q)
			n += (size_t)snprintf(buf + n, size - n, "\\%c", c);
		else if (c == '\t')
			n += (size_t)snprintf(buf + n, size - n, "\\t");
		else if (c == '\n')
			n += (size_t)snprintf(buf + n, size - n, "\\n");
		else if (c == '\r')
			n += (size_t)snprintf(buf + n, size - n, "\\r");
		else if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	if (n + 2 <= size) {
		buf[n++] = q;
		buf[n] = '\0';
	} else {
		buf[size - 1] = '\0';
	}
}
