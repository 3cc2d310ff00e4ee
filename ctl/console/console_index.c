/*
 * console_index.c - the console's incremental index of the view's cases
 * (console_index.h).  Per case it keeps where each row starts, one small
 * record per call and the running chain check; pages are read back with
 * pread, so no request loads a whole ledger.  Everything is opened
 * O_RDONLY through the mount: the console never writes.
 */
#include "console_index.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"

#define CX_NAME_MAX   128
#define CX_CHUNK      ((size_t)1 << 20)
#define CX_LINE_MAX   ((size_t)64 << 20)
#define CX_STATUS_MAX ((size_t)1 << 20)

enum cx_mode { CX_PASS, CX_MOCK, CX_BLOCK, CX_OTHER };

struct cx_call {
	uint32_t decision_row;
	uint32_t end_row; /* its completion or completion_missing row, or 0 */
	uint32_t turn;
	uint8_t mode;
	double t;
};

struct cx_case {
	char name[CX_NAME_MAX + 1];
	pthread_mutex_t lock;
	long long off;	    /* ledger bytes taken (whole lines) */
	long long *row_off; /* where row i+1 starts */
	size_t rows, row_cap;
	char prev[CHAIN_HEX_LEN + 1]; /* SHA-256 of the last line taken */
	char bad[256];		      /* the first fault; "" while good */
	bool mac_check;		      /* MACs are being checked */
	char mac_note[160];
	unsigned char case_key[CHAIN_KEY_BYTES];
	char ledger_fp[24]; /* key_fingerprint of case_opened, if any */
	struct cx_call *calls;
	size_t ncalls, call_cap;
	double first_t, last_t;
	char first_time[32], last_time[32];
	json_t *status;
	unsigned long long status_rows;
	char status_head[CHAIN_HEX_LEN + 1];
	bool status_matched; /* the chain reached status_rows and agreed */
};

struct cx {
	char *mount;
	bool have_key;
	unsigned char key[CHAIN_KEY_BYTES];
	char key_fp[17];
	pthread_mutex_t lock; /* the array below */
	struct cx_case **cases;
	size_t n, cap;
};

bool cx_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > CX_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	return strspn(name,
		      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxy"
		      "z0123456789._:-") == n;
}

/* WAVE2 fingerprint: SHA-256("ledgerfs-key-fingerprint\n" || key)[0..8]. */
static void cx_fingerprint(const unsigned char *key, char out[17])
{
	static const char label[] = "ledgerfs-key-fingerprint\n";
	unsigned char buf[sizeof(label) - 1 + CHAIN_KEY_BYTES];
	char hex[CHAIN_HEX_LEN + 1];

	memcpy(buf, label, sizeof(label) - 1);
	memcpy(buf + sizeof(label) - 1, key, CHAIN_KEY_BYTES);
	chain_sha256_hex(buf, sizeof(buf), hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

struct cx *cx_new(const char *mount, const unsigned char *key)
{
	struct cx *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->mount = strdup(mount);
	if (!x->mount) {
		free(x);
		return NULL;
	}
	if (key) {
		x->have_key = true;
		memcpy(x->key, key, CHAIN_KEY_BYTES);
		cx_fingerprint(key, x->key_fp);
	}
	pthread_mutex_init(&x->lock, NULL);
	return x;
}

static void cx_case_free(struct cx_case *c)
{
	pthread_mutex_destroy(&c->lock);
	free(c->row_off);
	free(c->calls);
	json_decref(c->status);
	free(c);
}

void cx_free(struct cx *x)
{
	size_t i;

	if (!x)
		return;
	for (i = 0; i < x->n; i++)
		cx_case_free(x->cases[i]);
	free(x->cases);
	pthread_mutex_destroy(&x->lock);
	memset(x->key, 0, sizeof(x->key));
	free(x->mount);
	free(x);
}

static int cx_case_dir(const struct cx *x, const char *name)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s/cases/%s", x->mount, name) >=
	    (int)sizeof(path))
		return -1;
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* The case of that name, made on first sight when its folder exists. */
static struct cx_case *cx_get(struct cx *x, const char *name)
{
	struct cx_case *c = NULL;
	size_t lo = 0, hi, mid;
	int cmp, fd;

	if (!cx_name_ok(name))
		return NULL;
	pthread_mutex_lock(&x->lock);
	hi = x->n;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		cmp = strcmp(name, x->cases[mid]->name);
		if (cmp == 0) {
			c = x->cases[mid];
			goto out;
		}
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	fd = cx_case_dir(x, name);
	if (fd < 0)
		goto out;
	close(fd);
	if (x->n == x->cap) {
		size_t ncap = x->cap ? 2 * x->cap : 64;
		struct cx_case **nc = realloc(x->cases, ncap * sizeof(*nc));

		if (!nc)
			goto out;
		x->cases = nc;
		x->cap = ncap;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	strcpy(c->name, name);
	pthread_mutex_init(&c->lock, NULL);
	memset(c->prev, '0', CHAIN_HEX_LEN);
	c->mac_check = x->have_key;
	if (x->have_key)
		chain_case_key(x->key, name, c->case_key);
	else
		snprintf(c->mac_note, sizeof(c->mac_note),
			 "not checked here: the host key was not readable; "
			 "the daemon checked them when it loaded the case");
	memmove(x->cases + lo + 1, x->cases + lo,
		(x->n - lo) * sizeof(*x->cases));
	x->cases[lo] = c;
	x->n++;
out:
	pthread_mutex_unlock(&x->lock);
	return c;
}

static double cx_parse_time(const char *s, char keep[32])
{
	struct tm tm = {0};
	long usec = 0;
	int y, mo, d, h, mi, sec;

	if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%6ldZ", &y, &mo, &d, &h,
			 &mi, &sec, &usec) != 7)
		return 0;
	snprintf(keep, 32, "%.31s", s);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	return (double)timegm(&tm) + (double)usec / 1e6;
}

static int cx_mode_of(const char *m)
{
	if (!m)
		return CX_OTHER;
	if (!strcmp(m, "pass"))
		return CX_PASS;
	if (!strcmp(m, "mock"))
		return CX_MOCK;
	if (!strcmp(m, "block"))
		return CX_BLOCK;
	return CX_OTHER;
}

/* A string member, or "" when absent or not a string. */
static const char *cx_str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void cx_fault(struct cx_case *c, unsigned long long r, const char *what)
{
	snprintf(c->bad, sizeof(c->bad), "row %llu: %s", r, what);
}

/* MAC of row r (its mac member already taken out of row). */
static void cx_check_mac(struct cx *x, struct cx_case *c, json_t *row,
			 const char *mac, unsigned long long r)
{
	char want[CHAIN_HEX_LEN + 1];
	char *line;

	if (!c->mac_check)
		return;
	json_object_del(row, "mac");
	line = ledger_canonical(row);
	if (!line)
		return;
	chain_hmac_hex(c->case_key, line, strlen(line), want);
	free(line);
	if (chain_equal(want, mac ? mac : ""))
		return;
	if (r == 1) {
		/* Not this key's ledger: say so rather than call it forged. */
		c->mac_check = false;
		snprintf(c->mac_note, sizeof(c->mac_note),
			 "not checked: row 1 is not MACed under host key %s; "
			 "the daemon checked them when it loaded the case",
			 x->key_fp);
		return;
	}
	cx_fault(c, r, "mac does not match");
}

static void cx_take_call_row(struct cx_case *c, json_t *row, const char *phase,
			     unsigned long long r, double t)
{
	json_int_t seq = json_integer_value(json_object_get(row, "sequence"));

	if (!strcmp(phase, "decision")) {
		struct cx_call *k;

		if (c->ncalls == c->call_cap) {
			size_t ncap = c->call_cap ? 2 * c->call_cap : 256;
			struct cx_call *nc =
				realloc(c->calls, ncap * sizeof(*nc));

			if (!nc)
				return;
			c->calls = nc;
			c->call_cap = ncap;
		}
		k = &c->calls[c->ncalls++];
		k->decision_row = (uint32_t)r;
		k->end_row = 0;
		k->turn = (uint32_t)json_integer_value(
			json_object_get(row, "turn"));
		k->mode = (uint8_t)cx_mode_of(
			json_string_value(json_object_get(row, "mode")));
		k->t = t;
	} else if ((!strcmp(phase, "completion") ||
		    !strcmp(phase, "completion_missing")) &&
		   seq >= 1 && (size_t)seq <= c->ncalls) {
		c->calls[seq - 1].end_row = (uint32_t)r;
	}
}

/* Check and take one whole line (without newline) at c->off. */
static void cx_take_line(struct cx *x, struct cx_case *c, const char *s,
			 size_t n)
{
	unsigned long long r = c->rows + 1;
	json_t *row = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
	const char *phase, *fp;
	char *again = NULL, mac[CHAIN_HEX_LEN + 1] = "";
	double t;

	if (!json_is_object(row)) {
		cx_fault(c, r, "not a JSON object");
		goto out;
	}
	if (json_integer_value(json_object_get(row, "row")) != (json_int_t)r) {
		cx_fault(c, r, "row number is not the expected one");
		goto out;
	}
	if (strcmp(cx_str(row, "case_id"), c->name)) {
		cx_fault(c, r, "case_id is not the case's");
		goto out;
	}
	if (strcmp(cx_str(row, "prev"), c->prev)) {
		cx_fault(c, r,
			 r == 1 ? "prev is not 64 zeros"
				: "prev does not match the row before");
		goto out;
	}
	again = ledger_canonical(row);
	if (!again || strlen(again) != n || memcmp(again, s, n)) {
		cx_fault(c, r, "not in canonical form");
		goto out;
	}
	if (c->row_cap == c->rows) {
		size_t ncap = c->row_cap ? 2 * c->row_cap : 1024;
		long long *no = realloc(c->row_off, ncap * sizeof(*no));

		if (!no) {
			cx_fault(c, r, "out of memory");
			goto out;
		}
		c->row_off = no;
		c->row_cap = ncap;
	}
	phase = cx_str(row, "phase");
	fp = json_string_value(json_object_get(row, "key_fingerprint"));
	if (r == 1 && fp) {
		snprintf(c->ledger_fp, sizeof(c->ledger_fp), "%.20s", fp);
		if (c->mac_check && strcmp(fp, x->key_fp)) {
			c->mac_check = false;
			snprintf(c->mac_note, sizeof(c->mac_note),
				 "not checked: the ledger names key %.20s, the "
				 "key at hand is %s",
				 fp, x->key_fp);
		}
	}
	t = cx_parse_time(json_string_value(json_object_get(row, "time")),
			  c->last_time);
	if (r == 1) {
		c->first_t = t;
		memcpy(c->first_time, c->last_time, sizeof(c->first_time));
	}
	c->last_t = t;
	snprintf(mac, sizeof(mac), "%s", cx_str(row, "mac"));
	cx_check_mac(x, c, row, mac, r);
	if (c->bad[0])
		goto out;
	cx_take_call_row(c, row, phase, r, t);
	chain_sha256_hex(s, n, c->prev);
	c->row_off[c->rows++] = c->off;
	if (r == c->status_rows && !c->status_matched) {
		if (strcmp(c->prev, c->status_head))
			snprintf(c->bad, sizeof(c->bad),
				 "row %llu does not end where the daemon's "
				 "status says (head %.64s)",
				 r, c->status_head);
		else
			c->status_matched = true;
	}
out:
	free(again);
	json_decref(row);
}

static void cx_read_status(struct cx_case *c, int dirfd)
{
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	json_t *st = fd >= 0 ? json_loadfd(fd, 0, NULL) : NULL;
	const char *head;

	if (fd >= 0)
		close(fd);
	if (!json_is_object(st)) {
		json_decref(st);
		return;
	}
	json_decref(c->status);
	c->status = st;
	head = json_string_value(json_object_get(st, "head"));
	if (json_integer_value(json_object_get(st, "rows")) !=
		    (json_int_t)c->status_rows ||
	    strcmp(head ? head : "", c->status_head)) {
		c->status_rows = (unsigned long long)json_integer_value(
			json_object_get(st, "rows"));
		snprintf(c->status_head, sizeof(c->status_head), "%s",
			 head ? head : "");
		c->status_matched = false;
		/* Rows already taken: the head must match right away. */
		if (c->rows == c->status_rows && !c->bad[0]) {
			if (strcmp(c->prev, c->status_head))
				snprintf(c->bad, sizeof(c->bad),
					 "the ledger (%zu rows) does not end "
					 "where the daemon's status says",
					 c->rows);
			else
				c->status_matched = true;
		}
	}
}

/* Read the status, then the ledger bytes added since the last refresh. */
static int cx_refresh(struct cx *x, struct cx_case *c)
{
	int dirfd = cx_case_dir(x, c->name), fd;
	size_t have = 0, cap = CX_CHUNK;
	char *buf;
	ssize_t r;

	if (dirfd < 0)
		return -1;
	cx_read_status(c, dirfd);
	fd = c->bad[0] ? -1 : openat(dirfd, "ledger", O_RDONLY | O_CLOEXEC);
	close(dirfd);
	if (fd < 0)
		return 0;
	buf = malloc(cap);
	while (buf && !c->bad[0]) {
		char *p, *end, *nl;

		r = pread(fd, buf + have, cap - have, c->off + (off_t)have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		p = buf;
		end = buf + have;
		while (!c->bad[0] &&
		       (nl = memchr(p, '\n', (size_t)(end - p)))) {
			cx_take_line(x, c, p, (size_t)(nl - p));
			if (c->bad[0])
				break;
			c->off += nl - p + 1;
			p = nl + 1;
		}
		have = (size_t)(end - p);
		memmove(buf, p, have);
		if (have == cap) { /* one line longer than the buffer */
			char *nb;

			if (cap > CX_LINE_MAX) {
				cx_fault(c, c->rows + 1, "line over 64 MiB");
				break;
			}
			nb = realloc(buf, 2 * cap);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	free(buf);
	close(fd);
	return 0;
}

/* c refreshed and locked, or NULL (no such case).  Unlock when done. */
static struct cx_case *cx_take(struct cx *x, const char *name)
{
	struct cx_case *c = cx_get(x, name);

	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (cx_refresh(x, c) < 0) {
		pthread_mutex_unlock(&c->lock);
		return NULL;
	}
	return c;
}

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
		(json_int_t)c->rows, "counts", counts, "turn",
		json_object_get(st, "turn"), "pending",
		json_object_get(st, "pending"), "reason",
		json_object_get(st, "reason"), "first_activity",
		c->first_time[0] ? c->first_time : NULL, "last_activity",
		c->last_time[0] ? c->last_time : NULL, "calls",
		(json_int_t)c->ncalls, "verify", cx_verify_json(x, c));
}

static int cx_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case names of the view, sorted.  *n set; NULL on failure. */
static char **cx_list_names(struct cx *x, size_t *n)
{
	char path[4096], **names = NULL, **nn;
	size_t cap = 0;
	struct dirent *e;
	DIR *d;

	*n = 0;
	snprintf(path, sizeof(path), "%s/cases", x->mount);
	d = opendir(path);
	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		if (!cx_name_ok(e->d_name))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*nn));
			if (!nn)
				break;
			names = nn;
		}
		names[*n] = strdup(e->d_name);
		if (names[*n])
			(*n)++;
	}
	closedir(d);
	if (!names)
		names = calloc(1, sizeof(*names));
	else
		qsort(names, *n, sizeof(*names), cx_name_cmp);
	return names;
}

static void cx_free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
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
