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

/* Python's str.isspace() for one code point. */
static bool py_space(unsigned long c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') ||
	       (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xa0 ||
	       c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 ||
	       c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/* The code point of the UTF-8 sequence at s (len bytes there). */
static unsigned long py_cp(const unsigned char *s, size_t len)
{
	if (len == 1)
		return s[0];
	if (len == 2)
		return (unsigned long)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
	if (len == 3)
		return (unsigned long)(s[0] & 0x0f) << 12 |
		       (unsigned long)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
	return 0; /* four bytes: no white space there */
}

/* Bytes of the character starting at s[a] (s valid UTF-8, a < n). */
static size_t py_len_at(const unsigned char *s, size_t a, size_t n)
{
	size_t k = s[a] < 0x80 ? 1 : s[a] < 0xe0 ? 2 : s[a] < 0xf0 ? 3 : 4;

	return a + k <= n ? k : n - a;
}

/* str.strip() in place, on UTF-8 (JSON strings are), by code point. */
void py_strip(char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), a = 0, b, k;

	for (;;) { /* trailing: step back to the last character's start */
		b = n;
		while (b && (s[b - 1] & 0xc0) == 0x80 && n - b < 3)
			b--;
		if (!n || !b)
			break;
		b--;
		if ((s[b] & 0xc0) == 0x80 || !py_space(py_cp(s + b, n - b)))
			break;
		n = b;
	}
	while (a < n) {
		k = py_len_at(s, a, n);
		if (!py_space(py_cp(s + a, k)))
			break;
		a += k;
	}
	memmove(str, str + a, n - a);
	str[n - a] = '\0';
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
