/* SPDX-License-Identifier: MIT */
/*
 * pattern_python.c - Python `re` syntax to PCRE2 syntax (see pattern.h).
 * Where the two read the same text differently, the text is rewritten to
 * mean what Python means (\Z, \v, octal and group escapes, {,n}, POSIX
 * brackets in a set); syntax Python refuses but PCRE2 would take with a
 * meaning of its own (\p, (?<n>..), (*VERB), (?R), a repeated repeat) is
 * refused here.  ledgerfs-policy(5) PATTERNS lists what is left.
 */
#include "pattern.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out {
	char *buf;
	size_t len, cap;
	bool nomem;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->nomem)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *b = realloc(o->buf, cap);

		if (!b) {
			o->nomem = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* The scanner's place: text, position, and the flags of open groups. */
struct scan {
	const char *s;
	size_t n, i;
	bool verbose[PATTERN_MAX_NEST + 2];
	int depth;
	bool after_repeat; /* the last item was a quantifier */
	bool can_repeat;   /* the last item can take a quantifier */
	bool seen_item;	   /* anything but global flags so far */
	struct lf_why *why;
};

static enum lf_err bad(struct scan *sc, const char *what)
{
	return lf_fail(sc->why, LF_EINVAL_DOC,
		       "invalid regex: %s at offset %zu", what, sc->i);
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_octal(char c)
{
	return c >= '0' && c <= '7';
}

static bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* \xHH, \uHHHH, \UHHHHHHHH: exactly so many hex digits, as Python. */
static enum lf_err hex_escape(struct scan *sc, struct out *o, size_t digits)
{
	char tmp[24];
	unsigned long v;
	size_t k;

	if (sc->i + 2 + digits > sc->n)
		return bad(sc, "incomplete hex escape");
	for (k = 0; k < digits; k++)
		if (!is_hex(sc->s[sc->i + 2 + k]))
			return bad(sc, "incomplete hex escape");
	memcpy(tmp, sc->s + sc->i + 2, digits);
	tmp[digits] = '\0';
	v = strtoul(tmp, NULL, 16);
	if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return bad(sc, "escape outside the Unicode scalar values");
	put(o, "\\x{", 3);
	put(o, tmp, digits);
	put(o, "}", 1);
	sc->i += 2 + digits;
	return LF_OK;
}

/* Up to three octal digits starting at sc->i + 1 (after the backslash). */
static enum lf_err octal_escape(struct scan *sc, struct out *o, size_t max)
{
	size_t k = 0;
	unsigned v = 0;
	char tmp[16];

	while (k < max && sc->i + 1 + k < sc->n &&
	       is_octal(sc->s[sc->i + 1 + k])) {
		v = v * 8 + (unsigned)(sc->s[sc->i + 1 + k] - '0');
		k++;
	}
	if (v > 0377)
		return bad(sc, "octal escape outside 0-0o377");
	snprintf(tmp, sizeof(tmp), "\\o{%o}", v);
	puts_(o, tmp);
	sc->i += 1 + k;
	return LF_OK;
}

/* One escape, in a set (in_set) or not.  sc->i is at the backslash. */
static enum lf_err escape(struct scan *sc, struct out *o, bool in_set)
{
	char c, d1, d2;

	if (sc->i + 1 >= sc->n)
		return bad(sc, "bad escape (end of pattern)");
	c = sc->s[sc->i + 1];
	d1 = sc->i + 2 < sc->n ? sc->s[sc->i + 2] : 0;
	d2 = sc->i + 3 < sc->n ? sc->s[sc->i + 3] : 0;
	switch (c) {
	case 'x':
		return hex_escape(sc, o, 2);
	case 'u':
		return hex_escape(sc, o, 4);
	case 'U':
		return hex_escape(sc, o, 8);
	case 'v':
		put(o, "\\x{b}", 5); /* PCRE2's \v is a class */
		sc->i += 2;
		return LF_OK;
	case 'Z':
	case 'z': /* Python 3.14 spells \Z so too */
		if (in_set)
			return bad(sc, "bad escape in a set");
		put(o, "\\z", 2);
		sc->i += 2;
		return LF_OK;
	case 'A':
	case 'B':
		if (in_set)
			return bad(sc, "bad escape in a set");
		/* fall through */
	case 'b':
	case 'd':
	case 'D':
	case 's':
	case 'S':
	case 'w':
	case 'W':
	case 'a':
	case 'f':
	case 'n':
	case 'r':
	case 't':
		put(o, sc->s + sc->i, 2);
		sc->i += 2;
		return LF_OK;
	case 'N':
		return bad(sc, "\\N{...} named characters are not supported");
	case '0':
		return octal_escape(sc, o, 3);
	default:
		break;
	}
	if (is_digit(c)) {
		char tmp[16];
		unsigned g;

		if (in_set) {
			if (!is_octal(c))
				return bad(sc, "bad escape in a set");
			return octal_escape(sc, o, 3);
		}
		/* Three octal digits are a character; else a group. */
		if (is_octal(c) && is_octal(d1) && is_octal(d2))
			return octal_escape(sc, o, 3);
		g = (unsigned)(c - '0');
		sc->i += 2;
		if (is_digit(d1)) {
			g = g * 10 + (unsigned)(d1 - '0');
			sc->i++;
		}
		snprintf(tmp, sizeof(tmp), "\\g{%u}", g);
		puts_(o, tmp);
		return LF_OK;
	}
	if (is_alpha(c))
		return bad(sc, "bad escape (not Python re syntax)");
	/* Anything else stands for itself, a multi-byte character whole. */
	put(o, "\\", 1);
	sc->i++;
	do {
		put(o, sc->s + sc->i, 1);
		sc->i++;
	} while (sc->i < sc->n && ((unsigned char)sc->s[sc->i] & 0xC0) == 0x80);
	return LF_OK;
}

/* A set [...]; sc->i is at '['. */
static enum lf_err scan_set(struct scan *sc, struct out *o)
{
	enum lf_err e;
	size_t start;

	put(o, "[", 1);
	sc->i++;
	if (sc->i < sc->n && sc->s[sc->i] == '^') {
		put(o, "^", 1);
		sc->i++;
	}
	start = sc->i;
	while (sc->i < sc->n) {
		char c = sc->s[sc->i];

		if (c == ']' && sc->i > start) {
			put(o, "]", 1);
			sc->i++;
			return LF_OK;
		}
		if (c == ']') {
			put(o, "\\]", 2);
			sc->i++;
		} else if (c == '\\') {
			e = escape(sc, o, true);
			if (e)
				return e;
		} else if (c == '[') {
			/* Python reads '[' in a set as itself, never [:alpha:]. */
			put(o, "\\[", 2);
			sc->i++;
		} else {
			put(o, &c, 1);
			sc->i++;
		}
	}
	return bad(sc, "unterminated character set");
}

/*
 * {m,n} as Python reads it: digits, an optional comma and digits, '}'.
 * Returns the length of the quantifier at sc->i, or 0 when '{' is a
 * literal.
 */
static size_t brace_quantifier(const struct scan *sc, size_t *lo_len,
			       bool *comma)
{
	size_t k = sc->i + 1;

	if (k < sc->n && sc->s[k] == '}')
		return 0;
	while (k < sc->n && is_digit(sc->s[k]))
		k++;
	*lo_len = k - sc->i - 1;
	*comma = k < sc->n && sc->s[k] == ',';
	if (*comma) {
		k++;
		while (k < sc->n && is_digit(sc->s[k]))
			k++;
	}
	if (k >= sc->n || sc->s[k] != '}')
		return 0;
	return k + 1 - sc->i;
}

/* A quantifier at sc->i: `*`, `+`, `?` or `{...}`, then `?` or `+`. */
static enum lf_err quantifier(struct scan *sc, struct out *o, size_t qlen,
			      size_t lo_len)
{
	if (sc->after_repeat)
		return bad(sc, "multiple repeat");
	if (!sc->can_repeat)
		return bad(sc, "nothing to repeat");
	if (sc->s[sc->i] == '{' && lo_len == 0) {
		put(o, "{0", 2); /* {,n} and {,}: PCRE2 10.42 wants the 0 */
		put(o, sc->s + sc->i + 1, qlen - 1);
	} else {
		put(o, sc->s + sc->i, qlen);
	}
	sc->i += qlen;
	if (sc->i < sc->n && (sc->s[sc->i] == '?' || sc->s[sc->i] == '+')) {
		put(o, sc->s + sc->i, 1);
		sc->i++;
	}
	sc->after_repeat = true;
	sc->can_repeat = false;
	return LF_OK;
}

/*
 * Inline flags (?aiLmsux) for the whole pattern, only before any item as
 * Python 3.11 wants, or (?imsx-imsx:...) for a group; sc->i is at the
 * first flag.
 */
static enum lf_err flags(struct scan *sc, struct out *o, bool *ascii)
{
	char on[8] = "", off[8] = "";
	bool minus = false, want_ascii = false;
	char c;

	for (; sc->i < sc->n; sc->i++) {
		char *set = minus ? off : on;

		c = sc->s[sc->i];
		if (c == ':' || c == ')')
			break;
		if (c == '-' && !minus) {
			minus = true;
			continue;
		}
		if (!c || !strchr(minus ? "imsx" : "aiLmsux", c))
			return bad(sc, "unknown extension or flag");
		if (c == 'L')
			return bad(sc, "the L flag is for bytes patterns");
		if (c == 'a')
			want_ascii = true;
		else if (c != 'u' && !strchr(set, c) && strlen(set) < 4)
			strncat(set, &c, 1);
	}
	if (sc->i >= sc->n)
		return bad(sc, "missing -, : or )");
	if (sc->s[sc->i] == ')') {
		if (minus)
			return bad(sc, "missing :");
		if (sc->depth || sc->seen_item)
			return bad(sc, "global flags not at the start");
		*ascii |= want_ascii;
		if (strchr(on, 'x'))
			sc->verbose[0] = true;
		if (*on) {
			put(o, "(?", 2);
			puts_(o, on);
			put(o, ")", 1);
		}
		sc->i++;
		return LF_OK;
	}
	if (want_ascii)
		return bad(sc, "the a flag only as (?a) first");
	if (sc->depth >= PATTERN_MAX_NEST)
		return bad(sc, "parentheses nested too deeply");
	sc->depth++;
	sc->verbose[sc->depth] =
		(sc->verbose[sc->depth - 1] || strchr(on, 'x')) &&
		!strchr(off, 'x');
	put(o, "(?", 2);
	puts_(o, on);
	if (*off) {
		put(o, "-", 1);
		puts_(o, off);
	}
	put(o, ":", 1);
	sc->i++;
	sc->seen_item = true;
	return LF_OK;
}

/* A group opening at sc->i ('('). */
static enum lf_err group(struct scan *sc, struct out *o, bool *ascii)
{
	static const char *const same[] = {
		"(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?P<", "(?P="};
	const char *p = sc->s + sc->i;
	size_t rest = sc->n - sc->i, k;
	bool verbose = sc->verbose[sc->depth];

	sc->can_repeat = false;
	sc->after_repeat = false;
	if (rest >= 2 && p[1] == '*')
		return bad(sc, "nothing to repeat");
	if (rest < 2 || p[1] != '?')
		goto open;
	if (rest >= 3 && p[2] == '#') {
		const char *end = memchr(p, ')', rest);

		if (!end)
			return bad(sc, "missing ), unterminated comment");
		sc->i += (size_t)(end - p) + 1; /* a comment: dropped */
		return LF_OK;
	}
	for (k = 0; k < sizeof(same) / sizeof(same[0]); k++) {
		size_t l = strlen(same[k]);

		if (rest >= l && !memcmp(p, same[k], l)) {
			if (!strcmp(same[k], "(?P=")) {
				const char *end = memchr(p, ')', rest);

				if (!end)
					return bad(sc, "missing )");
				put(o, p, (size_t)(end - p) + 1);
				sc->i += (size_t)(end - p) + 1;
				sc->can_repeat = true;
				sc->seen_item = true;
				return LF_OK;
			}
			put(o, p, l);
			sc->i += l;
			goto nest;
		}
	}
	if (rest >= 3 && p[2] == '(') {
		/* (?(1)yes|no), (?(name)yes|no): PCRE2 wants <name>. */
		const char *end = memchr(p + 3, ')', rest - 3);
		size_t nl;

		if (!end || end == p + 3)
			return bad(sc, "bad conditional group");
		nl = (size_t)(end - p) - 3;
		put(o, "(?(", 3);
		if (is_digit(p[3])) {
			put(o, p + 3, nl + 1);
		} else {
			put(o, "<", 1);
			put(o, p + 3, nl);
			put(o, ">)", 2);
		}
		sc->i += 3 + nl + 1;
		goto nest;
	}
	sc->i += 2;
	return flags(sc, o, ascii);
open:
	put(o, "(", 1);
	sc->i++;
nest:
	sc->seen_item = true;
	if (sc->depth >= PATTERN_MAX_NEST)
		return bad(sc, "parentheses nested too deeply");
	sc->depth++;
	sc->verbose[sc->depth] = verbose;
	return LF_OK;
}

static enum lf_err step(struct scan *sc, struct out *o, bool *ascii)
{
	char c = sc->s[sc->i];
	size_t qlen, lo_len;
	bool comma;

	if (sc->verbose[sc->depth] && c && strchr(" \t\n\r\v\f", c)) {
		put(o, &c, 1);
		sc->i++;
		return LF_OK;
	}
	if (sc->verbose[sc->depth] && c == '#') {
		while (sc->i < sc->n && sc->s[sc->i] != '\n') {
			put(o, sc->s + sc->i, 1);
			sc->i++;
		}
		return LF_OK;
	}
	if (c != '(')
		sc->seen_item = true;
	switch (c) {
	case '\\':
		/* Anchors and boundaries take no quantifier in Python. */
		sc->can_repeat = sc->i + 1 >= sc->n || !sc->s[sc->i + 1] ||
				 !strchr("AbBZz", sc->s[sc->i + 1]);
		sc->after_repeat = false;
		return escape(sc, o, false);
	case '[':
		sc->after_repeat = false;
		sc->can_repeat = true;
		return scan_set(sc, o);
	case '(':
		return group(sc, o, ascii);
	case ')':
		if (sc->depth == 0)
			return bad(sc, "unbalanced parenthesis");
		sc->depth--;
		put(o, ")", 1);
		sc->i++;
		sc->after_repeat = false;
		sc->can_repeat = true;
		return LF_OK;
	case '*':
	case '+':
	case '?':
		return quantifier(sc, o, 1, 1);
	case '{':
		qlen = brace_quantifier(sc, &lo_len, &comma);
		if (qlen)
			return quantifier(sc, o, qlen, lo_len);
		put(o, "\\{", 2);
		sc->i++;
		sc->after_repeat = false;
		sc->can_repeat = true;
		return LF_OK;
	case '^':
	case '$':
	case '|':
		put(o, &c, 1);
		sc->i++;
		sc->after_repeat = false;
		sc->can_repeat = false;
		return LF_OK;
	default:
		do {
			put(o, sc->s + sc->i, 1);
			sc->i++;
		} while (sc->i < sc->n &&
			 ((unsigned char)sc->s[sc->i] & 0xC0) == 0x80);
		sc->after_repeat = false;
		sc->can_repeat = true;
		return LF_OK;
	}
}

char *pattern_translate(const char *src, size_t len, bool *ascii,
			enum lf_err *err, struct lf_why *why)
{
	struct scan sc = {.s = src, .n = len, .why = why};
	struct out o = {0};
	enum lf_err e = LF_OK;

	*ascii = false;
	put(&o, "", 0);
	while (sc.i < sc.n && e == LF_OK && !o.nomem)
		e = step(&sc, &o, ascii);
	if (e == LF_OK && !o.nomem && sc.depth)
		e = bad(&sc, "missing ), unterminated subpattern");
	if (e == LF_OK && o.nomem)
		e = lf_fail(why, LF_NOMEM, "out of memory");
	if (e != LF_OK) {
		free(o.buf);
		*err = e;
		return NULL;
	}
	*err = LF_OK;
	return o.buf;
}
