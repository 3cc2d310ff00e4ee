/* SPDX-License-Identifier: MIT */
/*
 * case_view.c - what the view reads from a case: replies, the last
 * refusal, the calls/ folders and the ledger bytes.  Old calls are read
 * back from the ledger rather than kept in memory.
 */
#include "case_int.h"

#include "decision.h"
#include "request.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *case_latest_reply(struct lf_case *c)
{
	char *s;

	case_lock(c);
	s = strdup(c->latest_reply ? c->latest_reply : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

char *case_error_text(struct lf_case *c, enum lf_err *code)
{
	char *s;

	case_lock(c);
	s = strdup(CASE_STR(c->error));
	if (code)
		*code = c->error_code;
	pthread_mutex_unlock(&c->lock);
	return s;
}

char *case_reply_for(struct lf_case *c, const char *call_id)
{
	struct call_entry *e;
	json_t *row = NULL;
	char *s = NULL;

	case_lock(c);
	e = case_find_call(c, call_id);
	if (e && e->host_exec)
		s = case_reply_of(c, e);
	else if (e)
		row = ledger_read_row(c->ledger, e->dec_off, e->dec_len);
	pthread_mutex_unlock(&c->lock);
	if (row) {
		s = decision_reply(row);
		json_decref(row);
	}
	return s;
}

size_t case_call_count(struct lf_case *c)
{
	size_t n;

	case_lock(c);
	n = c->ncalls;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/*
 * SEQ-ID, the ID percent-encoded and cut (never inside a %XX) so that the
 * name fits a file name (ledgerfs(8) THE VIEW); SEQ alone tells calls
 * apart.
 */
static void call_dirname(const struct call_entry *e, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%06u-", e->seq);

	if (size > REQUEST_NAME_MAX + 1)
		size = REQUEST_NAME_MAX + 1;
	if (n > 0 && (size_t)n < size)
		request_id_to_name(e->id, buf + n, size - (size_t)n);
}

/* The recorded call with sequence seq (calls are kept in sequence order). */
static struct call_entry *call_by_seq(struct lf_case *c, unsigned long seq)
{
	size_t lo = 0, hi = c->ncalls;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->calls[mid].seq == seq)
			return &c->calls[mid];
		if (c->calls[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int case_call_dirname(struct lf_case *c, size_t i, char *buf, size_t size)
{
	int rc = -1;

	case_lock(c);
	if (i < c->ncalls) {
		call_dirname(&c->calls[i], buf, size);
		rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int case_reply_name(struct lf_case *c, size_t i, char *buf, size_t size)
{
	size_t n;
	int rc = -1;

	case_lock(c);
	if (i < c->ncalls) {
		n = request_id_to_name(c->calls[i].id, buf, size);
		if (n < size && n <= REQUEST_NAME_MAX)
			rc = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Pretty JSON text of v (stolen) with a final newline. */
static char *case_pretty(json_t *v)
{
	char *s = v ? json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;

	json_decref(v);
	return decision_add_newline(s);
}

/*
 * calls/SEQ-ID/{request,decision,result}.  The folder name must match
 * exactly, so a stale or forged sequence prefix finds nothing.
 */
char *case_call_file(struct lf_case *c, const char *dirname, const char *file)
{
	struct call_entry *e;
	json_t *dec = NULL, *res = NULL, *v = NULL;
	char want[REQUEST_NAME_MAX + 1], *end;
	unsigned long seq;
	int mode = -1;

	if (dirname[0] < '0' || dirname[0] > '9')
		return NULL;
	errno = 0;
	seq = strtoul(dirname, &end, 10);
	if (errno || *end != '-')
		return NULL;
	case_lock(c);
	e = call_by_seq(c, seq);
	if (e) {
		call_dirname(e, want, sizeof(want));
		if (strcmp(want, dirname) == 0) {
			dec = ledger_read_row(c->ledger, e->dec_off,
					      e->dec_len);
			if (e->res_off >= 0)
				res = ledger_read_row(c->ledger, e->res_off,
						      e->res_len);
			mode = e->mode;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (!dec) {
		json_decref(res);
		return NULL;
	}
	if (strcmp(file, "request") == 0) {
		v = json_pack("{s:O, s:O, s:O}", "call_id",
			      json_object_get(dec, "call_id"), "tool",
			      json_object_get(dec, "tool"), "args",
			      json_object_get(dec, "args"));
	} else if (strcmp(file, "decision") == 0) {
		v = json_incref(dec);
	} else if (strcmp(file, "result") == 0) {
		if (res)
			v = json_incref(res);
		else if (mode != LF_MODE_PASS)
			v = json_pack(
				"{s:O, s:O, s:O, s:s, s:b}", "call_id",
				json_object_get(dec, "call_id"), "returned",
				json_object_get(dec, "returned"), "is_error",
				json_object_get(dec, "is_error"),
				"result_source", "host_mediator",
				"result_authoritative", 1);
		else
			v = json_pack("{s:O, s:s}", "call_id",
				      json_object_get(dec, "call_id"),
				      "completion_status", "pending");
	}
	json_decref(dec);
	json_decref(res);
	return v ? case_pretty(v) : NULL;
}

/*
 * The view serves the rows this daemon made durable, not the file's size:
 * bytes that something else appended to the backing file are no row of
 * the daemon's, and a row being written is not durable yet.
 */
long long case_ledger_size(struct lf_case *c)
{
	long long n;

	case_lock(c);
	n = ledger_size(c->ledger);
	pthread_mutex_unlock(&c->lock);
	return n;
}

long case_ledger_read(struct lf_case *c, char *buf, size_t size, long long off)
{
	/* Appends only grow the file; a pread needs no lock. */
	return (long)pread(ledger_fd(c->ledger), buf, size, off);
}

void case_ledger_head(struct lf_case *c, struct ledger_head *out)
{
	case_lock(c);
	ledger_get_head(c->ledger, out);
	pthread_mutex_unlock(&c->lock);
}

size_t case_memory(struct lf_case *c)
{
	size_t n, i;

	case_lock(c);
	n = sizeof(*c) + c->calls_cap * sizeof(struct call_entry) +
	    c->index.cap * 2 * sizeof(uint32_t);
	for (i = 0; i < c->ncalls; i++)
		n += strlen(c->calls[i].id) + 1;
	pthread_mutex_unlock(&c->lock);
	return n;
}

static _Atomic size_t *case_budget_held(struct lf_case *c, enum case_budget b)
{
	return b == CASE_OPEN_COPIES	? &c->snap_bytes
	       : b == CASE_OPEN_HANDLES ? &c->open_handles
					: &c->pending_bytes;
}

bool case_charge(struct lf_case *c, enum case_budget b, size_t add,
		 size_t limit)
{
	_Atomic size_t *held = case_budget_held(c, b);

	if (atomic_fetch_add(held, add) + add <= limit)
		return true;
	atomic_fetch_sub(held, add);
	return false;
}

void case_uncharge(struct lf_case *c, enum case_budget b, size_t n)
{
	atomic_fetch_sub(case_budget_held(c, b), n);
}
