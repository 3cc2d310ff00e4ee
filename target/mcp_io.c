/* SPDX-License-Identifier: MIT */
/*
 * mcp_io.c - ledgerfs-mcp's input and output: lines read with a bound,
 * JSON parsed with a depth bound, responses written one whole line at a
 * time so concurrent calls never interleave on stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"

void mcp_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* One write per message: threads log too. */
	fprintf(stderr, "ledgerfs-mcp: %s\n", buf);
}

void mcp_reader_init(struct mcp_reader *r, int fd)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
}

void mcp_reader_free(struct mcp_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* Consume the line of n bytes (and its newline) at the buffer's head. */
static void mcp_reader_shift(struct mcp_reader *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->len - n);
	r->len -= n;
}

enum mcp_read mcp_read_line(struct mcp_reader *r, char **line, size_t *len)
{
	static const size_t chunk = 65536;
	size_t scanned = 0;

	/* The previous line was handed out in place: drop it now. */
	if (r->pending) {
		mcp_reader_shift(r, r->pending);
		r->pending = 0;
	}
	for (;;) {
		char *nl = r->len > scanned ? memchr(r->buf + scanned, '\n',
						     r->len - scanned)
					    : NULL;
		ssize_t n;

		if (nl) {
			size_t l = (size_t)(nl - r->buf);

			if (r->dropping) {
				r->dropping = false;
				mcp_reader_shift(r, l + 1);
				return MCP_TOO_LONG;
			}
			*nl = '\0';
			*line = r->buf;
			*len = l;
			r->pending = l + 1;
			return MCP_LINE;
		}
		if (r->len > MCP_LINE_MAX) {
			/* Keep nothing of it; drop up to its newline. */
			r->dropping = true;
			r->len = 0;
		}
		scanned = r->len;
		if (r->cap < r->len + chunk + 1) {
			size_t cap = r->cap * 2 > r->len + chunk + 1
					     ? r->cap * 2
					     : r->len + chunk * 2;
			char *t = realloc(r->buf, cap);

			if (!t)
				return MCP_EOF;
			r->buf = t;
			r->cap = cap;
		}
		do
			n = read(r->fd, r->buf + r->len, r->cap - r->len - 1);
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			/* A last line without newline is still a line. */
			if (r->len && !r->dropping) {
				r->buf[r->len++] = '\n';
				continue;
			}
			if (r->dropping) {
				r->dropping = false;
				return MCP_TOO_LONG;
			}
			return MCP_EOF;
		}
		r->len += (size_t)n;
	}
}

/*
 * Depth of nesting outside strings, so jansson's own (much larger) limit
 * is never what stops a hostile peer.
 */
static int mcp_too_deep(const char *s, size_t len)
{
	int depth = 0, in_str = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > MCP_DEPTH_MAX)
				return 1;
		} else if (c == '}' || c == ']') {
			depth--;
		}
	}
	return 0;
}

json_t *mcp_parse(const char *line, size_t len, char *why, size_t whysize)
{
	json_error_t jerr;
	json_t *v;

	if (mcp_too_deep(line, len)) {
		snprintf(why, whysize, "nested deeper than %d", MCP_DEPTH_MAX);
		return NULL;
	}
	/*
	 * Any JSON value parses (a scalar is then an invalid request,
	 * -32600), and so does a string holding \u0000: it is JSON, and the
	 * case refuses such a call with a row of its own.
	 */
	v = json_loadb(line, len,
		       JSON_REJECT_DUPLICATES | JSON_DECODE_ANY |
			       JSON_ALLOW_NUL,
		       &jerr);
	if (!v)
		snprintf(why, whysize, "column %d: %s", jerr.column, jerr.text);
	return v;
}

int mcp_send(int fd, pthread_mutex_t *lock, const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
	size_t len, done = 0;
	int rc = 0;

	if (!s)
		return -1;
	len = strlen(s);
	s[len] = '\n'; /* json_dumps leaves room for the NUL we overwrite */
	pthread_mutex_lock(lock);
	while (done < len + 1) {
		ssize_t n = write(fd, s + done, len + 1 - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = -1;
			break;
		}
		done += (size_t)n;
	}
	pthread_mutex_unlock(lock);
	free(s);
	return rc;
}

json_t *mcp_error(const json_t *id, int code, const char *message)
{
	return json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			 id, "error", "code", code, "message", message);
}
