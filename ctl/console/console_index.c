/* SPDX-License-Identifier: MIT */
/*
 * console_index.c - the console's incremental index of the view's cases
 * (console_index.h).  Per case it keeps where each row starts, one small
 * record per call and the running chain check; pages are read back with
 * pread, so no request loads a whole ledger.  Everything is opened
 * O_RDONLY through the mount: the console never writes.
 */
#include "console_index_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ledger.h"

bool cx_case_exists(struct cx *x, const char *name)
{
	char path[4400];
	struct stat st;

	if (!cx_name_ok(name))
		return false;
	snprintf(path, sizeof(path), "%s/cases/%s/status", x->mount, name);
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

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

/*
 * ledgerfs-ledger(5) SEALS, Fingerprints:
 * SHA-256("ledgerfs-key-fingerprint\n" || key)[0..8].
 */
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

int cx_case_dir(const struct cx *x, const char *name)
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

/*
 * With the key: the MAC of the line without its ,"mac":"MAC" member
 * (ledgerfs-ledger(5) ROWS), found by its bytes; no serialisation.  The
 * MAC covers everything else, so a line it verifies is the daemon's.
 */
static bool cx_mac_ok(const struct cx_case *c, const char *s, size_t n,
		      const char *mac, char **scratch, size_t *cap)
{
	char member[CHAIN_HEX_LEN + 16], want[CHAIN_HEX_LEN + 1];
	size_t mn = (size_t)snprintf(member, sizeof(member), ",\"mac\":\"%s\"",
				     mac);
	const char *p = s, *hit;

	if (strlen(mac) != CHAIN_HEX_LEN || n < mn)
		return false;
	if (*cap < n) {
		char *nb = realloc(*scratch, n);

		if (!nb)
			return false;
		*scratch = nb;
		*cap = n;
	}
	while ((hit = memmem(p, n - (size_t)(p - s), member, mn))) {
		size_t head = (size_t)(hit - s);

		memcpy(*scratch, s, head);
		memcpy(*scratch + head, hit + mn, n - head - mn);
		chain_hmac_hex(c->case_key, *scratch, n - mn, want);
		if (chain_equal(want, mac))
			return true;
		p = hit + 1;
	}
	return false;
}

/*
 * The checks of one line beyond chain and row number: with the key its
 * MAC, without it the canonical form.  false: c->bad says.
 */
static bool cx_check_line(struct cx *x, struct cx_case *c, json_t *row,
			  const char *s, size_t n, const char *mac,
			  unsigned long long r)
{
	char *d;
	bool ok;

	/* A sealed ledger's keys are not the host key's (SEALS). */
	if (c->mac_check && r == 1 && json_object_get(row, "epoch")) {
		c->mac_check = false;
		snprintf(
			c->mac_note, sizeof(c->mac_note),
			"not checked here: a sealed ledger; the daemon checked "
			"the current epoch when it loaded the case, and "
			"ledgerctl verify --seal-key checks every epoch");
	}
	if (c->mac_check) {
		if (cx_mac_ok(c, s, n, mac, &c->scratch, &c->scratch_cap))
			return true;
		if (r != 1) {
			cx_fault(c, r, "mac does not match");
			return false;
		}
		/* Not this key's ledger: say so rather than call it forged. */
		c->mac_check = false;
		snprintf(c->mac_note, sizeof(c->mac_note),
			 "not checked: row 1 is not MACed under host key %s; "
			 "the daemon checked them when it loaded the case",
			 x->key_fp);
	}
	d = ledger_canonical(row);
	ok = d && strlen(d) == n && !memcmp(d, s, n);
	free(d);
	if (!ok)
		cx_fault(c, r, "not in canonical form");
	return ok;
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
	char mac[CHAIN_HEX_LEN + 1] = "";
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
	snprintf(mac, sizeof(mac), "%s", cx_str(row, "mac"));
	if (!cx_check_line(x, c, row, s, n, mac, r))
		goto out;
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
	t = cx_parse_time(cx_str(row, "time"), c->last_time);
	if (r == 1) {
		c->first_t = t;
		memcpy(c->first_time, c->last_time, sizeof(c->first_time));
	}
	c->last_t = t;
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
	json_decref(row);
}

/*
 * The view's status, read in blocks: json_loadfd reads a byte a call,
 * and each read of a view file is a round trip to the daemon.
 */
static json_t *cx_load_status(int dirfd)
{
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	size_t have = 0, cap = 8192;
	char *buf = fd >= 0 ? malloc(cap) : NULL;
	json_t *st = NULL;
	ssize_t r;

	while (buf) {
		r = read(fd, buf + have, cap - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				st = json_loadb(buf, have, 0, NULL);
			break;
		}
		have += (size_t)r;
		if (have == cap) {
			char *nb = cap < CX_STATUS_MAX ? realloc(buf, 2 * cap)
						       : NULL;

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return st;
}

static void cx_read_status(struct cx_case *c, int dirfd)
{
	json_t *st = cx_load_status(dirfd);
	const char *head;

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
	size_t have = 0, cap = 65536;
	long long start = c->off;
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
	while (buf && !c->bad[0] && c->off - start < CX_REFRESH_BUDGET) {
		char *p, *end, *nl;
		bool full;

		r = pread(fd, buf + have, cap - have, c->off + (off_t)have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		full = (size_t)r == cap - have;
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
		if (full && have < cap && cap < CX_CHUNK) { /* more to come */
			char *nb = realloc(buf, 2 * cap);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		} else if (have == cap) { /* one line longer than the buffer */
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
	free(c->scratch);
	c->scratch = NULL;
	c->scratch_cap = 0;
	close(fd);
	return 0;
}

struct cx_case *cx_take(struct cx *x, const char *name)
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

static int cx_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cx_list_names(struct cx *x, size_t *n)
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

void cx_free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}
