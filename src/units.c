/* SPDX-License-Identifier: MIT */
/*
 * units.c - durations and sizes: one strict parser shared by every
 * program's options and by the YAML loaders (units.h).
 */
#include <string.h>

#include "units.h"

/* Leading decimal digits of s into *n; returns the suffix, NULL on overflow. */
static const char *units_digits(const char *s, uint64_t *n)
{
	uint64_t v = 0;

	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*n = v;
	return s;
}

struct units_suffix {
	const char *name;
	uint64_t factor;
};

static enum lf_err units_parse(const char *s, const struct units_suffix *tab,
			       const char *what, const char *forms,
			       uint64_t *out, struct lf_why *why)
{
	const char *rest;
	uint64_t n;

	if (!s || *s < '0' || *s > '9')
		goto bad;
	rest = units_digits(s, &n);
	if (!rest)
		return lf_fail(why, LF_EINVAL_DOC, "%s '%s' is too large", what,
			       s);
	for (; tab->name; tab++) {
		if (strcmp(rest, tab->name))
			continue;
		if (n > UINT64_MAX / tab->factor)
			return lf_fail(why, LF_EINVAL_DOC,
				       "%s '%s' is too large", what, s);
		*out = n * tab->factor;
		return LF_OK;
	}
bad:
	return lf_fail(why, LF_EINVAL_DOC, "'%s' is not a %s (%s)", s ? s : "",
		       what, forms);
}

enum lf_err units_duration_ms(const char *s, uint64_t *ms, struct lf_why *why)
{
	static const struct units_suffix tab[] = {
		{"", 1000},   {"ms", 1},      {"s", 1000},
		{"m", 60000}, {"h", 3600000}, {NULL, 0},
	};
	return units_parse(s, tab, "duration", "N, Nms, Ns, Nm or Nh", ms, why);
}

enum lf_err units_size(const char *s, uint64_t *bytes, struct lf_why *why)
{
	static const struct units_suffix tab[] = {
		{"", 1},
		{"K", 1ULL << 10},
		{"KiB", 1ULL << 10},
		{"M", 1ULL << 20},
		{"MiB", 1ULL << 20},
		{"G", 1ULL << 30},
		{"GiB", 1ULL << 30},
		{NULL, 0},
	};
	return units_parse(s, tab, "size", "N, NK, NKiB, NM, NMiB, NG or NGiB",
			   bytes, why);
}
