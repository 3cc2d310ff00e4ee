/*
 * ledger.c - one case's durable ledger: create or open (verify, cut a torn
 * tail), append rows chained by SHA-256 and MACed with the case key, each
 * made durable by fdatasync before the append returns (DESIGN 7).
 */
#include "ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Same bound the reader enforces: never write what cannot be read back. */
#define LEDGER_MAX_LINE ((size_t)64 << 20)

struct ledger {
	int fd;
	char *case_id;
	unsigned char case_key[CHAIN_KEY_BYTES];
	struct ledger_head head;
	long long size; /* where the next line lands */
	bool broken;	/* a write or flush failed: refuse every append */
	struct commit_group *commit; /* borrowed; NULL: own fdatasync */
};

char *ledger_canonical(const json_t *row)
{
	return json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS);
}

void ledger_now(char out[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	/* tv_nsec < 1e9, so the microseconds are always six digits. */
	snprintf(out + n, 32 - n, ".%06uZ",
		 (unsigned)((unsigned long)ts.tv_nsec / 1000u % 1000000u));
}

static int ledger_write_all(int fd, const char *buf, size_t n)
{
	ssize_t r;

	while (n) {
		r = write(fd, buf, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		buf += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Make what was written durable: 0 or an errno value. */
static int ledger_flush(struct ledger *l)
{
	if (l->commit)
		return commit_group_sync(l->commit, l->fd);
	return fdatasync(l->fd) < 0 ? errno : 0;
}

enum lf_err ledger_append(struct ledger *l, json_t *row, long long *offset,
			  size_t *len, struct lf_why *why)
{
	char now[32], mac[CHAIN_HEX_LEN + 1], *body = NULL, *line = NULL;
	enum lf_err rc = LF_IO;
	size_t n;
	int set = 0, err;

	if (l->broken)
		return lf_fail(why, LF_IO,
			       "ledger failed earlier; no further appends");
	if (!json_is_object(row))
		return lf_fail(why, LF_EINVAL_JSON,
			       "ledger row is not an object");
	ledger_now(now);
	json_object_del(row, "mac");
	set |= json_object_set_new(row, "case_id", json_string(l->case_id));
	set |= json_object_set_new(row, "row",
				   json_integer((json_int_t)l->head.rows + 1));
	set |= json_object_set_new(row, "time", json_string(now));
	set |= json_object_set_new(row, "prev", json_string(l->head.head));
	if (set)
		return lf_fail(why, LF_NOMEM, "out of memory building a row");
	if (!json_is_string(json_object_get(row, "phase")))
		return lf_fail(why, LF_EINVAL_JSON, "ledger row has no phase");
	body = ledger_canonical(row);
	if (!body) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	chain_hmac_hex(l->case_key, body, strlen(body), mac);
	if (json_object_set_new(row, "mac", json_string(mac))) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	line = ledger_canonical(row);
	if (!line) {
		rc = lf_fail(why, LF_NOMEM, "out of memory building a row");
		goto out;
	}
	n = strlen(line);
	if (n > LEDGER_MAX_LINE) {
		rc = lf_fail(why, LF_TOO_BIG,
			     "ledger row of %zu bytes is over 64 MiB", n);
		goto out;
	}
	/* The newline goes in the same write: a line is whole or torn. */
	line[n] = '\n';
	if (ledger_write_all(l->fd, line, n + 1) < 0) {
		l->broken = true;
		lf_fail(why, LF_IO, "ledger write failed: %s", strerror(errno));
		goto out;
	}
	err = ledger_flush(l);
	if (err) {
		/* A failed flush may have dropped the data: never retry. */
		l->broken = true;
		lf_fail(why, LF_IO, "ledger flush failed: %s", strerror(err));
		goto out;
	}
	if (offset)
		*offset = l->size;
	if (len)
		*len = n;
	l->size += (long long)n + 1;
	l->head.rows++;
	chain_sha256_hex(line, n, l->head.head);
	rc = LF_OK;
out:
	free(body);
	free(line);
	return rc;
}

void ledger_set_commit(struct ledger *l, struct commit_group *g)
{
	l->commit = g;
}

void ledger_get_head(const struct ledger *l, struct ledger_head *out)
{
	*out = l->head;
}

json_t *ledger_read_row(const struct ledger *l, long long offset, size_t len)
{
	char *buf;
	size_t got = 0;
	ssize_t r;
	json_t *row = NULL;

	if (offset < 0 || len > LEDGER_MAX_LINE)
		return NULL;
	buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	while (got < len) {
		r = pread(l->fd, buf + got, len - got, (off_t)(offset + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			goto out;
		got += (size_t)r;
	}
	row = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			 NULL);
out:
	free(buf);
	return row;
}

bool ledger_broken(const struct ledger *l)
{
	return l->broken;
}

long long ledger_size(const struct ledger *l)
{
	return l->size;
}

int ledger_fd(const struct ledger *l)
{
	return l->fd;
}

void ledger_close(struct ledger *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	free(l->case_id);
	/* The case key is derived from the host key: do not leave it about. */
	explicit_bzero(l->case_key, sizeof(l->case_key));
	free(l);
}

/* fsync the folder that holds dirfd/path, so a new name is durable. */
static int ledger_sync_parent(int dirfd, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int dfd, rc;

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		if ((size_t)(slash - path) >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	dfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	rc = fsync(dfd);
	close(dfd);
	return rc;
}

/* Cut the torn tail, make the cut durable, and record it in a row. */
static enum lf_err ledger_recover(struct ledger *l,
				  const struct ledger_report *rep,
				  ledger_row_cb cb, void *ctx,
				  struct lf_why *why)
{
	size_t cut = (size_t)(rep->file_bytes - rep->good_bytes);
	char hex[CHAIN_HEX_LEN + 1], *buf;
	long long off;
	size_t got = 0, len;
	json_t *row = NULL;
	enum lf_err rc;
	ssize_t r;
	int cbrc;

	buf = malloc(cut ? cut : 1);
	if (!buf)
		return lf_fail(why, LF_NOMEM, "out of memory");
	while (got < cut) {
		r = pread(l->fd, buf + got, cut - got,
			  (off_t)(rep->good_bytes + (long long)got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			return lf_fail(why, LF_IO, "cannot read torn tail: %s",
				       r < 0 ? strerror(errno) : "file shrank");
		}
		got += (size_t)r;
	}
	chain_sha256_hex(buf, cut, hex);
	free(buf);
	if (ftruncate(l->fd, (off_t)rep->good_bytes) < 0 ||
	    fdatasync(l->fd) < 0)
		return lf_fail(why, LF_IO, "cannot cut torn tail: %s",
			       strerror(errno));
	row = json_pack("{s:s, s:I, s:s, s:s}", "phase", "recovered",
			"cut_bytes", (json_int_t)cut, "cut_sha256", hex,
			"reason", "torn tail cut");
	if (!row)
		return lf_fail(why, LF_NOMEM, "out of memory");
	rc = ledger_append(l, row, &off, &len, why);
	if (rc == LF_OK && cb) {
		/* The reader sees the ledger as it now stands, row for row. */
		cbrc = cb(ctx, row, off, len);
		if (cbrc)
			rc = lf_fail(why, (enum lf_err)cbrc,
				     "row %llu: refused by the reader (%s)",
				     l->head.rows,
				     lf_err_name((enum lf_err)cbrc));
	}
	json_decref(row);
	return rc;
}

enum lf_err ledger_open(int dirfd, const char *path, const char *case_id,
			const unsigned char host_key[CHAIN_KEY_BYTES],
			bool create, ledger_row_cb cb, void *ctx,
			struct ledger **out, struct lf_why *why)
{
	struct ledger_report rep;
	struct ledger *l;
	struct stat st;
	enum lf_err rc;
	int flags = O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW;

	*out = NULL;
	if (!case_id || !host_key)
		return lf_fail(why, LF_EINVAL_JSON,
			       "ledger needs a case id and a host key");
	chain_init();
	l = calloc(1, sizeof(*l));
	if (!l)
		return lf_fail(why, LF_NOMEM, "out of memory");
	l->fd = -1;
	l->case_id = strdup(case_id);
	if (!l->case_id) {
		rc = lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	chain_case_key(host_key, case_id, l->case_key);
	memset(l->head.head, '0', CHAIN_HEX_LEN);
	if (create) {
		l->fd = openat(dirfd, path, flags | O_CREAT | O_EXCL, 0600);
		if (l->fd < 0) {
			rc = lf_fail(why, errno == EEXIST ? LF_EXISTS : LF_IO,
				     "cannot create ledger %s: %s", path,
				     strerror(errno));
			goto fail;
		}
		if (ledger_sync_parent(dirfd, path) < 0) {
			rc = lf_fail(why, LF_IO,
				     "cannot sync the folder of ledger %s: %s",
				     path, strerror(errno));
			goto fail;
		}
		*out = l;
		return LF_OK;
	}
	l->fd = openat(dirfd, path, flags);
	if (l->fd < 0) {
		rc = lf_fail(why, errno == ENOENT ? LF_NOT_FOUND : LF_IO,
			     "cannot open ledger %s: %s", path,
			     strerror(errno));
		goto fail;
	}
	if (fstat(l->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = lf_fail(why, LF_IO, "ledger %s is not a regular file",
			     path);
		goto fail;
	}
	rc = ledger_verify_fd(l->fd, case_id, host_key, cb, ctx, &rep, why);
	l->head = rep.head;
	l->size = rep.good_bytes;
	if (rc == LF_VERIFY && rep.torn)
		rc = ledger_recover(l, &rep, cb, ctx, why);
	if (rc != LF_OK)
		goto fail;
	*out = l;
	return LF_OK;
fail:
	ledger_close(l);
	return rc;
}
