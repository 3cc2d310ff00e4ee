/* SPDX-License-Identifier: MIT */
/*
 * yaml11.c - a plain YAML scalar resolved as PyYAML's safe_load resolves
 * it (YAML 1.1 booleans, integers in several bases, sexagesimal numbers,
 * floats), for doc.c's YAML reader (ledgerfs-policy(5) DOCUMENT SYNTAX).
 */
#include "yaml11.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of s from the set, after an optional sign; how many. */
static size_t run_of(const char *s, const char *set)
{
	return strspn(s, set);
}

/* s without '_' (PyYAML drops them before converting), malloc'd. */
static char *no_underscores(const char *s)
{
	char *t = malloc(strlen(s) + 1), *o = t;

	if (!t)
		return NULL;
	for (; *s; s++)
		if (*s != '_')
			*o++ = *s;
	*o = '\0';
	return t;
}

/*
 * "A:B:C" in base 60 (PyYAML's sexagesimal): each part after the first is
 * [0-5]?[0-9].  Returns the number of parts, 0 when s is not of that shape
 * (the first part is digits and '_', and fraction, if any, the rest).
 */
static int sexagesimal(const char *s, bool first_nonzero, double *out,
		       const char **frac)
{
	const char *p = s;
	double v = 0;
	size_t n;
	int parts = 1;

	n = run_of(p, "0123456789_");
	if (!n || !(*p >= '0' && *p <= '9') || (first_nonzero && *p == '0'))
		return 0;
	for (; p < s + n; p++)
		if (*p != '_')
			v = v * 10 + (*p - '0');
	if (*p != ':')
		return 0;
	while (*p == ':') {
		p++;
		n = run_of(p, "0123456789");
		if (n < 1 || n > 2 || (n == 2 && p[0] > '5'))
			return 0;
		v = v * 60 +
		    (n == 2 ? (p[0] - '0') * 10 + (p[1] - '0') : (p[0] - '0'));
		p += n;
		parts++;
	}
	*frac = p;
	*out = v;
	return parts;
}

/*
 * The integers written with a base: its prefix, the digits (and _) that
 * may follow, and where the digits strtoull reads start (the octal's
 * leading 0 is one of them: "0_" is 0).
 */
static const struct {
	const char *prefix, *set;
	size_t from;
	int base;
} yaml11_radix[] = {
	{"0b", "01_", 2, 2},
	{"0x", "0123456789abcdefABCDEF_", 2, 16},
	{"0", "01234567_", 0, 8},
};

/*
 * A plain scalar as PyYAML's safe_load resolves it (YAML 1.1): null, the
 * booleans yes/no/on/off/true/false in three casings, integers in base
 * 2, 8 (leading 0), 10, 16 and 60 (12:30), floats that have a point (1e3
 * has none and stays a string), sexagesimal floats; everything else a
 * string (dates too: JSON has no date).  Returns a new reference, or NULL
 * with *problem set (a value JSON cannot hold).
 */
json_t *yaml11_resolve_plain(const char *s, const char **problem)
{
	static const char *const trues[] = {
		"yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
	static const char *const falses[] = {"no",    "No",    "NO",
					     "false", "False", "FALSE",
					     "off",   "Off",   "OFF"};
	const char *d = s, *frac;
	char *clean = NULL, *end;
	double sx;
	int sign = 1;
	size_t i, n;
	json_t *v = NULL;

	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	    !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return json_null();
	for (i = 0; i < sizeof(trues) / sizeof(trues[0]); i++) {
		if (!strcmp(s, trues[i]))
			return json_true();
		if (!strcmp(s, falses[i]))
			return json_false();
	}
	if (*d == '+' || *d == '-')
		sign = *d++ == '-' ? -1 : 1;
	if (!strcmp(d, ".inf") || !strcmp(d, ".Inf") || !strcmp(d, ".INF") ||
	    !strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) {
		*problem = "infinity and NaN cannot be represented in JSON";
		return NULL;
	}
	/* Integers: 0b, 0x, leading-0 octal, decimal, base 60. */
	for (i = 0; i < sizeof(yaml11_radix) / sizeof(yaml11_radix[0]); i++) {
		const char *digits = d + strlen(yaml11_radix[i].prefix);
		unsigned long long u;

		if (strncmp(d, yaml11_radix[i].prefix,
			    strlen(yaml11_radix[i].prefix)) != 0 ||
		    !*digits || digits[run_of(digits, yaml11_radix[i].set)])
			continue;
		clean = no_underscores(d + yaml11_radix[i].from);
		if (!clean)
			goto nomem;
		if (!*clean)
			goto str;
		errno = 0;
		u = strtoull(clean, &end, yaml11_radix[i].base);
		if (errno || u > INT64_MAX)
			goto range;
		v = json_integer(sign * (json_int_t)u);
		goto done;
	}
	n = run_of(d, "0123456789_");
	if (n && !d[n] && (!strcmp(d, "0") || (d[0] >= '1' && d[0] <= '9'))) {
		clean = no_underscores(d);
		if (!clean)
			goto nomem;
		errno = 0;
		{
			unsigned long long u = strtoull(clean, &end, 10);
			if (errno ||
			    u > (unsigned long long)INT64_MAX + (sign < 0))
				goto range;
			v = json_integer(sign < 0 ? (json_int_t)(0 - u)
						  : (json_int_t)u);
		}
		goto done;
	}
	if (sexagesimal(d, true, &sx, &frac) && !*frac) {
		if (sx > 9.2e18)
			goto range;
		v = json_integer(sign * (json_int_t)sx);
		goto done;
	}
	if (sexagesimal(d, false, &sx, &frac) && *frac == '.' &&
	    !frac[1 + run_of(frac + 1, "0123456789_")]) {
		clean = no_underscores(frac);
		if (!clean)
			goto nomem;
		v = json_real(sign * (sx + strtod(clean, NULL)));
		goto done;
	}
	/* Floats: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?, or
	 * \.[0-9][0-9_]* with that exponent and no sign. */
	{
		const char *p = d;

		n = run_of(p, "0123456789_");
		if (n ? *p >= '0' && *p <= '9' : (p == s && *p == '.')) {
			p += n;
			if (*p == '.' && (n || (p[1] >= '0' && p[1] <= '9'))) {
				p++;
				i = run_of(p, "0123456789_");
				p += i;
				if (n || i) {
					if ((*p == 'e' || *p == 'E') &&
					    (p[1] == '+' || p[1] == '-') &&
					    run_of(p + 2, "0123456789"))
						p += 2 + run_of(p + 2,
								"0123456789");
					if (!*p) {
						clean = no_underscores(s);
						if (!clean)
							goto nomem;
						errno = 0;
						{
							double f = strtod(clean,
									  &end);
							if (errno == ERANGE &&
							    (f > 1.0 ||
							     f < -1.0))
								goto range;
							v = json_real(f);
						}
						goto done;
					}
				}
			}
		}
	}
str:
	free(clean);
	return json_string(s);
done:
	free(clean);
	return v;
range:
	free(clean);
	json_decref(v);
	*problem = "number out of range";
	return NULL;
nomem:
	*problem = "out of memory";
	return NULL;
}

/* Python's float(s) on ASCII text: white space around, no hex. */
static int yaml11_py_float(const char *s, size_t n, double *out)
{
	char buf[128], *end;
	size_t a = 0;

	while (a < n && strchr(" \t\n\r\v\f", s[a]))
		a++;
	while (n > a && strchr(" \t\n\r\v\f", s[n - 1]))
		n--;
	if (n == a || n - a >= sizeof(buf) || memchr(s + a, 'x', n - a) ||
	    memchr(s + a, 'X', n - a))
		return -1;
	memcpy(buf, s + a, n - a);
	buf[n - a] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	return *end || (errno == ERANGE && (*out > 1.0 || *out < -1.0)) ? -1
									: 0;
}

json_t *yaml11_construct_float(const char *s, const char **problem)
{
	char *v = no_underscores(s), *p, *part;
	double f = 0, d;
	int sign = 1;

	if (!v) {
		*problem = "out of memory";
		return NULL;
	}
	for (p = v; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	p = v;
	if (*p == '-' || *p == '+')
		sign = *p++ == '-' ? -1 : 1;
	if (!strcmp(p, ".inf") || !strcmp(p, ".nan")) {
		free(v);
		*problem = "infinity and NaN cannot be represented in JSON";
		return NULL;
	}
	if (strchr(p, ':')) {
		/* Base 60, each part a Python float: 1:30.5 is 90.5. */
		for (part = p;; part = strchr(part, ':') + 1) {
			size_t n = strcspn(part, ":");

			if (yaml11_py_float(part, n, &d) < 0)
				goto bad;
			f = f * 60 + d;
			if (!part[n])
				break;
		}
	} else if (yaml11_py_float(p, strlen(p), &f) < 0) {
		goto bad;
	}
	free(v);
	if (!isfinite(f)) {
		*problem = "infinity and NaN cannot be represented in JSON";
		return NULL;
	}
	return json_real(sign * f);
bad:
	free(v);
	*problem = "value does not fit its tag";
	return NULL;
}

json_t *yaml11_construct_bool(const char *s)
{
	static const char *const words[] = {"yes", "true",  "on",
					    "no",  "false", "off"};
	size_t i, n = strlen(s);

	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (n == strlen(words[i]) && !strncasecmp(s, words[i], n))
			return json_boolean(i < 3);
	return NULL;
}
