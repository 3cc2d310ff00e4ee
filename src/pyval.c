/* SPDX-License-Identifier: MIT */
/*
 * pyval.c - Python's view of JSON values (see pyval.h): equality,
 * truthiness, str(), repr() and type names, for ASSERT-equal reasons.
 */
#include "pyval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsoneq.h"

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	char *t;
	size_t cap;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		t = realloc(b->s, cap);
		if (!t) {
			b->oom = true;
			return;
		}
		b->s = t;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static char *done(struct buf *b)
{
	if (!b->oom && !b->s)
		put(b, "", 0);
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	return b->s;
}

/* Python treats int and float as one number line; bool is an int. */
static bool as_number(const json_t *v, double *d, json_int_t *i, bool *is_int)
{
	if (json_is_boolean(v)) {
		*i = json_is_true(v);
		*is_int = true;
		*d = (double)*i;
		return true;
	}
	if (json_is_integer(v)) {
		*i = json_integer_value(v);
		*is_int = true;
		*d = (double)*i;
		return true;
	}
	if (json_is_real(v)) {
		*d = json_real_value(v);
		*is_int = false;
		return true;
	}
	return false;
}

bool pyval_equal(const json_t *a, const json_t *b)
{
	/* Python: True == 1, 1 == 1.0, and containers compare item by item. */
	return json_equal_with(a, b, as_number);
}

bool pyval_truthy(const json_t *v)
{
	if (!v)
		return false;
	switch (json_typeof(v)) {
	case JSON_NULL:
	case JSON_FALSE:
		return false;
	case JSON_TRUE:
		return true;
	case JSON_INTEGER:
		return json_integer_value(v) != 0;
	case JSON_REAL:
		return json_real_value(v) != 0.0;
	case JSON_STRING:
		return json_string_length(v) != 0;
	case JSON_ARRAY:
		return json_array_size(v) != 0;
	case JSON_OBJECT:
		return json_object_size(v) != 0;
	}
	return false;
}

const char *pyval_type_name(const json_t *v)
{
	if (!v)
		return "NoneType";
	switch (json_typeof(v)) {
	case JSON_NULL:
		return "NoneType";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_INTEGER:
		return "int";
	case JSON_REAL:
		return "float";
	case JSON_STRING:
		return "str";
	case JSON_ARRAY:
		return "list";
	case JSON_OBJECT:
		return "dict";
	}
	return "object";
}

/* repr(float): the shortest text that reads back, as Python writes it. */
static void put_float(struct buf *b, double x)
{
	char tmp[40], digits[24], out[64];
	int prec, exp10, n = 0, decpt, i;
	char *p;

	if (isnan(x)) {
		puts_(b, "nan");
		return;
	}
	if (isinf(x)) {
		puts_(b, x < 0 ? "-inf" : "inf");
		return;
	}
	if (x == 0) {
		puts_(b, signbit(x) ? "-0.0" : "0.0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, x);
		if (strtod(tmp, NULL) == x)
			break;
	}
	p = tmp;
	if (*p == '-') {
		puts_(b, "-");
		p++;
	}
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	exp10 = atoi(p + 1);
	decpt = exp10 + 1;
	if (decpt > -4 && decpt <= 16) {
		if (decpt <= 0) {
			puts_(b, "0.");
			for (i = 0; i < -decpt; i++)
				puts_(b, "0");
			puts_(b, digits);
		} else if (decpt >= n) {
			puts_(b, digits);
			for (i = n; i < decpt; i++)
				puts_(b, "0");
			puts_(b, ".0");
		} else {
			put(b, digits, (size_t)decpt);
			puts_(b, ".");
			puts_(b, digits + decpt);
		}
		return;
	}
	snprintf(out, sizeof(out), "%c%s%s%se%c%02d", digits[0],
		 n > 1 ? "." : "", digits + 1, "", exp10 < 0 ? '-' : '+',
		 exp10 < 0 ? -exp10 : exp10);
	puts_(b, out);
}

/* One code point from UTF-8 at *p (valid UTF-8: jansson checked it). */
static unsigned long next_cp(const unsigned char **p, size_t *len)
{
	const unsigned char *s = *p;
	unsigned long c = s[0];
	size_t n = 1;

	if (c >= 0xf0) {
		c = ((c & 7ul) << 18) | ((s[1] & 63ul) << 12) |
		    ((s[2] & 63ul) << 6) | (s[3] & 63ul);
		n = 4;
	} else if (c >= 0xe0) {
		c = ((c & 15ul) << 12) | ((s[1] & 63ul) << 6) | (s[2] & 63ul);
		n = 3;
	} else if (c >= 0xc0) {
		c = ((c & 31ul) << 6) | (s[1] & 63ul);
		n = 2;
	}
	*len = n;
	*p += n;
	return c;
}

/* Not str.isprintable(): controls, format characters, separators. */
static bool unprintable(unsigned long c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0xa0) || c == 0xad ||
	       (c >= 0x200b && c <= 0x200f) || (c >= 0x2028 && c <= 0x202e) ||
	       (c >= 0x2060 && c <= 0x2064) || c == 0xfeff ||
	       (c >= 0xe000 && c <= 0xf8ff) || c == 0x3000 ||
	       (c >= 0x2000 && c <= 0x200a) || c == 0x1680 || c == 0x205f;
}

static void put_text(struct buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s,
			    *end = (const unsigned char *)s + len;
	char q = '\'', esc[16];
	size_t n;

	if (memchr(s, '\'', len) && !memchr(s, '"', len))
		q = '"';
	put(b, &q, 1);
	while (p < end) {
		const unsigned char *at = p;
		unsigned long c = next_cp(&p, &n);

		if (c == '\\' || c == (unsigned long)q) {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(b, esc, 2);
		} else if (c == '\t') {
			puts_(b, "\\t");
		} else if (c == '\n') {
			puts_(b, "\\n");
		} else if (c == '\r') {
			puts_(b, "\\r");
		} else if (unprintable(c)) {
			if (c <= 0xff)
				snprintf(esc, sizeof(esc), "\\x%02lx", c);
			else if (c <= 0xffff)
				snprintf(esc, sizeof(esc), "\\u%04lx", c);
			else
				snprintf(esc, sizeof(esc), "\\U%08lx", c);
			puts_(b, esc);
		} else {
			put(b, (const char *)at, n);
		}
	}
	put(b, &q, 1);
}

static void put_repr(struct buf *b, const json_t *v)
{
	char num[32];
	const char *k;
	json_t *e;
	size_t i;
	bool first = true;

	if (!v) {
		puts_(b, "None");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_NULL:
		puts_(b, "None");
		return;
	case JSON_TRUE:
		puts_(b, "True");
		return;
	case JSON_FALSE:
		puts_(b, "False");
		return;
	case JSON_INTEGER:
		snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		puts_(b, num);
		return;
	case JSON_REAL:
		put_float(b, json_real_value(v));
		return;
	case JSON_STRING:
		put_text(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_ARRAY:
		puts_(b, "[");
		json_array_foreach(v, i, e)
		{
			if (i)
				puts_(b, ", ");
			put_repr(b, e);
		}
		puts_(b, "]");
		return;
	case JSON_OBJECT:
		puts_(b, "{");
		json_object_foreach((json_t *)v, k, e)
		{
			if (!first)
				puts_(b, ", ");
			first = false;
			put_text(b, k, strlen(k));
			puts_(b, ": ");
			put_repr(b, e);
		}
		puts_(b, "}");
		return;
	}
}

char *pyval_repr(const json_t *v)
{
	struct buf b = {0};

	put_repr(&b, v);
	return done(&b);
}

char *pyval_str(const json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return pyval_repr(v);
}

char *pyval_repr_text(const char *s)
{
	struct buf b = {0};

	put_text(&b, s, strlen(s));
	return done(&b);
}
