/* SPDX-License-Identifier: MIT */
/*
 * cassette_compare.c - where a re-run from a cassette left the recorded
 * case (ledgerctl(1) CASSETTES): the first call, in sequence order,
 * whose tool or args differ, or whose reply does (returned, is_error);
 * a call missing at the end or one too many.
 */
#include <stdlib.h>
#include <string.h>

#include "cassette_write.h"
#include "jsoneq.h"

/* Members compared as JSON values; absent on both sides is the same. */
static bool same_member(const json_t *a, const json_t *b, const char *key)
{
	const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	return (!x && !y) || json_value_equal(x, y);
}

static bool same_call(const json_t *a, const json_t *b)
{
	return same_member(a, b, "tool") && same_member(a, b, "args");
}

static bool same_reply(const json_t *a, const json_t *b)
{
	return same_member(a, b, "returned") &&
	       json_is_true(json_object_get(a, "is_error")) ==
		       json_is_true(json_object_get(b, "is_error"));
}

void cassette_compare(const json_t *expected, const json_t *actual,
		      struct cassette_diff *d)
{
	size_t ne = json_array_size(expected), na = json_array_size(actual);
	size_t i, n = ne > na ? ne : na;

	memset(d, 0, sizeof(*d));
	d->expected_calls = ne;
	d->actual_calls = na;
	d->same = true;
	for (i = 0; i < n; i++) {
		json_t *e = json_array_get(expected, i);
		json_t *a = json_array_get(actual, i);

		if (!a)
			d->what = "missing";
		else if (!e)
			d->what = "extra";
		else if (!same_call(e, a))
			d->what = "call";
		else if (!same_reply(e, a))
			d->what = "reply";
		else
			continue;
		d->same = false;
		d->sequence = (long long)i + 1;
		d->expected = json_incref(e);
		d->actual = json_incref(a);
		return;
	}
}

void cassette_diff_clear(struct cassette_diff *d)
{
	json_decref(d->expected);
	json_decref(d->actual);
	memset(d, 0, sizeof(*d));
}

/* "tool \"T\" args {...}" or "reply {...} is_error B", or "no call". */
static void side(FILE *f, const json_t *c, bool reply)
{
	char *s;

	if (!c) {
		fputs("no call", f);
		return;
	}
	if (reply) {
		s = json_dumps(json_object_get(c, "returned"),
			       JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		fprintf(f, "returned %s is_error %s", s ? s : "null",
			json_is_true(json_object_get(c, "is_error")) ? "true"
								     : "false");
		free(s);
		return;
	}
	s = json_dumps(json_object_get(c, "tool"),
		       JSON_COMPACT | JSON_ENCODE_ANY);
	fprintf(f, "tool %s args ", s ? s : "null");
	free(s);
	s = json_dumps(json_object_get(c, "args"),
		       JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	fputs(s ? s : "null", f);
	free(s);
}

char *cassette_diff_line(const struct cassette_diff *d)
{
	char *out = NULL;
	size_t cap = 0;
	FILE *f = open_memstream(&out, &cap);
	bool reply;

	if (!f)
		return NULL;
	if (d->same) {
		fprintf(f, "same: %zu calls, same tools, args and replies",
			d->expected_calls);
	} else {
		reply = strcmp(d->what, "reply") == 0;
		fprintf(f, "differs at call %lld: %sexpected ", d->sequence,
			reply ? "reply: " : "");
		side(f, d->expected, reply);
		fputs("; actual ", f);
		side(f, d->actual, reply);
	}
	/* One line: JSON text escapes every control character. */
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}
