/* SPDX-License-Identifier: MIT */
/*
 * console_api.c - the JSON the console's endpoints answer with, built
 * from the index (console_index_int.h): summaries, pages of rows and
 * calls read back with pread, the plot series, the event signatures.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "console_index_int.h"

static json_t *cx_verify_json(struct cx *x, struct cx_case *c)
{
	const char *st = c->bad[0]	     ? "bad"
			 : c->status_matched ? "ok"
					     : "checking";

	return json_pack("{s:s, s:s?, s:I, s:s, s:b, s:s?, s:s?, s:s?}",
			 "status", st, "reason", c->bad[0] ? c->bad : NULL,
			 "rows_checked", (json_int_t)c->rows, "head", c->prev,
			 "macs_checked", c->mac_check, "macs_note",
			 c->mac_check ? NULL : c->mac_note, "key_fingerprint",
			 x->have_key ? x->key_fp : NULL,
			 "ledger_key_fingerprint",
			 c->ledger_fp[0] ? c->ledger_fp : NULL);
}

static json_t *cx_summary_json(struct cx *x, struct cx_case *c)
{
	json_t *st = c->status;
	json_t *counts = json_object_get(st, "counts");

	return json_pack(
		"{s:s, s:O?, s:I, s:O?, s:O?, s:O?, s:O?, s:s?, s:s?, s:I, "
		"s:o}",
		"name", c->name, "state", json_object_get(st, "state"), "rows",
		(json_int_t)(c->status ? c->status_rows : c->rows), "counts",
		counts, "turn", json_object_get(st, "turn"), "pending",
		json_object_get(st, "pending"), "reason",
		json_object_get(st, "reason"), "first_activity",
		c->first_time[0] ? c->first_time : NULL, "last_activity",
		c->last_time[0] ? c->last_time : NULL, "calls",
		(json_int_t)c->ncalls, "verify", cx_verify_json(x, c));
}

json_t *cx_cases_json(struct cx *x, size_t offset, size_t limit)
{
	size_t n, i;
	char **names = cx_list_names(x, &n);
	json_t *arr, *out;

	if (!names)
		return NULL;
	if (limit > CX_PAGE_MAX)
		limit = CX_PAGE_MAX;
	arr = json_array();
	for (i = offset; i < n && i - offset < limit; i++) {
		struct cx_case *c = cx_take(x, names[i]);

		if (!c)
			continue;
		json_array_append_new(arr, cx_summary_json(x, c));
		pthread_mutex_unlock(&c->lock);
	}
	out = json_pack("{s:I, s:I, s:I, s:o, s:s?}", "total", (json_int_t)n,
			"offset", (json_int_t)offset, "limit",
			(json_int_t)limit, "cases", arr, "key_fingerprint",
			x->have_key ? x->key_fp : NULL);
	cx_free_names(names, n);
	return out;
}

/* Row r (1-based) of c, parsed; c locked, fd its ledger.  New or NULL. */
static json_t *cx_read_row(struct cx_case *c, int fd, size_t r)
{
	long long start, end;
	json_t *row;
	char *buf;
	size_t len;

	if (r == 0 || r > c->rows)
		return NULL;
	start = c->row_off[r - 1];
	end = r < c->rows ? c->row_off[r] : c->off;
	len = (size_t)(end - start - 1);
	buf = malloc(len ? len : 1);
	if (!buf || pread(fd, buf, len, start) != (ssize_t)len) {
		free(buf);
		return NULL;
	}
	row = json_loadb(buf, len, 0, NULL);
	free(buf);
	return row;
}

static int cx_open_ledger(struct cx *x, struct cx_case *c)
{
	int dirfd = cx_case_dir(x, c->name), fd;

	if (dirfd < 0)
		return -1;
	fd = openat(dirfd, "ledger", O_RDONLY | O_CLOEXEC);
	close(dirfd);
	return fd;
}

json_t *cx_case_json(struct cx *x, const char *name, size_t offset,
		     size_t limit)
{
	struct cx_case *c = cx_take(x, name);
	json_t *rows, *out;
	size_t i;
	int fd;

	if (!c)
		return NULL;
	if (limit > CX_PAGE_MAX)
		limit = CX_PAGE_MAX;
	rows = json_array();
	fd = offset < c->rows ? cx_open_ledger(x, c) : -1;
	for (i = offset; fd >= 0 && i < c->rows && i - offset < limit; i++) {
		json_t *row = cx_read_row(c, fd, i + 1);

		json_array_append_new(rows, row ? row : json_null());
	}
	if (fd >= 0)
		close(fd);
	out = json_pack("{s:s, s:O?, s:o, s:I, s:I, s:o}", "case", c->name,
			"status", c->status, "summary", cx_summary_json(x, c),
			"rows_total", (json_int_t)c->rows, "offset",
			(json_int_t)offset, "rows", rows);
	pthread_mutex_unlock(&c->lock);
	return out;
}

static void cx_copy(json_t *to, json_t *from, const char *key)
{
	json_t *v = json_object_get(from, key);

	if (v)
		json_object_set(to, key, v);
}

/* One call: what its decision row says, updated by its end row. */
static json_t *cx_call_json(struct cx_case *c, int fd, const struct cx_call *k)
{
	static const char *const from_decision[] = {"sequence",
						    "call_id",
						    "tool",
						    "mode",
						    "matched",
						    "reason",
						    "turn",
						    "mock_source",
						    "time",
						    "result_source",
						    "is_error",
						    "real_executed",
						    "execution_status",
						    "completion_status",
						    "result_authoritative"};
	static const char *const from_end[] = {
		"result_source",     "is_error",
		"real_executed",     "execution_status",
		"completion_status", "result_authoritative"};
	json_t *d = cx_read_row(c, fd, k->decision_row);
	json_t *e = k->end_row ? cx_read_row(c, fd, k->end_row) : NULL;
	json_t *o = json_object();
	size_t i;

	for (i = 0; d && i < sizeof(from_decision) / sizeof(*from_decision);
	     i++)
		cx_copy(o, d, from_decision[i]);
	for (i = 0; e && i < sizeof(from_end) / sizeof(*from_end); i++)
		cx_copy(o, e, from_end[i]);
	/* Rows before result_authoritative existed: the source says it. */
	if (!json_object_get(o, "result_authoritative")) {
		const char *src =
			json_string_value(json_object_get(o, "result_source"));

		json_object_set_new(
			o, "result_authoritative",
			json_boolean(src && (!strcmp(src, "host_mediator") ||
					     !strcmp(src, "host_executed"))));
	}
	json_object_set_new(o, "decision_row",
			    json_integer((json_int_t)k->decision_row));
	json_object_set_new(o, "end_row",
			    k->end_row ? json_integer((json_int_t)k->end_row)
				       : json_null());
	json_decref(d);
	json_decref(e);
	return o;
}

json_t *cx_calls_json(struct cx *x, const char *name, size_t offset,
		      size_t limit)
{
	struct cx_case *c = cx_take(x, name);
	json_t *calls, *out;
	size_t i;
	int fd;

	if (!c)
		return NULL;
	if (limit > CX_PAGE_MAX)
		limit = CX_PAGE_MAX;
	calls = json_array();
	fd = offset < c->ncalls ? cx_open_ledger(x, c) : -1;
	for (i = offset; fd >= 0 && i < c->ncalls && i - offset < limit; i++)
		json_array_append_new(calls, cx_call_json(c, fd, &c->calls[i]));
	if (fd >= 0)
		close(fd);
	out = json_pack("{s:s, s:I, s:I, s:o}", "case", c->name, "total",
			(json_int_t)c->ncalls, "offset", (json_int_t)offset,
			"calls", calls);
	pthread_mutex_unlock(&c->lock);
	return out;
}

json_t *cx_series_json(struct cx *x, const char *name)
{
	struct cx_case *c = cx_take(x, name);
	double t0, span, width;
	size_t nbins, i, b;
	json_t *bins, *out;
	unsigned(*cnt)[3];

	if (!c)
		return NULL;
	t0 = c->ncalls ? c->calls[0].t : c->first_t;
	span = c->last_t - t0;
	if (span < 1)
		span = 1;
	width = span / CX_SERIES_BINS < 1 ? 1 : span / CX_SERIES_BINS;
	nbins = (size_t)(span / width) + 1;
	if (nbins > CX_SERIES_BINS + 1)
		nbins = CX_SERIES_BINS + 1;
	cnt = calloc(nbins, sizeof(*cnt));
	bins = json_array();
	for (i = 0; cnt && i < c->ncalls; i++) {
		double dt = c->calls[i].t - t0;

		b = dt <= 0 ? 0 : (size_t)(dt / width);
		if (b >= nbins)
			b = nbins - 1;
		if (c->calls[i].mode < 3)
			cnt[b][c->calls[i].mode]++;
	}
	for (b = 0; cnt && b < nbins; b++)
		json_array_append_new(bins, json_pack("[I,I,I]",
						      (json_int_t)cnt[b][0],
						      (json_int_t)cnt[b][1],
						      (json_int_t)cnt[b][2]));
	free(cnt);
	out = json_pack("{s:s, s:f, s:f, s:I, s:o}", "case", c->name, "start",
			t0, "bin_seconds", width, "calls",
			(json_int_t)c->ncalls, "bins", bins);
	pthread_mutex_unlock(&c->lock);
	return out;
}

static uint64_t cx_mix(uint64_t h, const char *s, uint64_t v)
{
	h ^= v;
	h *= 1099511628211ULL;
	while (s && *s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t cx_case_sig(struct cx *x, const char *name, uint64_t h)
{
	struct cx_case *c = cx_take(x, name);

	if (!c)
		return cx_mix(h, name, 0);
	h = cx_mix(h, name, c->rows);
	h = cx_mix(h, json_string_value(json_object_get(c->status, "state")),
		   c->status_matched);
	h = cx_mix(h, c->bad, c->status_rows);
	pthread_mutex_unlock(&c->lock);
	return h;
}

uint64_t cx_signature(struct cx *x, const char *name, size_t offset,
		      size_t limit)
{
	uint64_t h = 14695981039346656037ULL;
	char **names;
	size_t n, i;

	if (name)
		return cx_case_sig(x, name, h);
	names = cx_list_names(x, &n);
	if (!names)
		return 0;
	h = cx_mix(h, NULL, n);
	for (i = offset; i < n && i - offset < limit; i++)
		h = cx_case_sig(x, names[i], h);
	cx_free_names(names, n);
	return h;
}
