/* SPDX-License-Identifier: MIT */
/*
 * lfclient.c - the file protocol seen from inside the sandbox (see
 * lfclient.h).  Each call opens its own descriptors, so threads may
 * share one struct lfc.
 */
#include "lfclient.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int lfc_init(struct lfc *c, const char *dir)
{
	int n;

	if (!dir || !*dir)
		dir = getenv("LEDGERFS_DIR");
	if (!dir || !*dir)
		dir = "/mediator";
	n = snprintf(c->dir, sizeof(c->dir), "%s", dir);
	return n < 0 || (size_t)n >= sizeof(c->dir) ? ENAMETOOLONG : 0;
}

int lfc_json_str(char *out, size_t size, const char *s)
{
	size_t n = 0;

#define PUT(c)                                                                 \
	do {                                                                   \
		if (n + 1 >= size)                                             \
			return -1;                                             \
		out[n++] = (char)(c);                                          \
	} while (0)
	PUT('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			PUT('\\');
			PUT(c);
		} else if (c < 0x20) {
			char esc[8];
			int k;

			snprintf(esc, sizeof(esc), "\\u%04x", c);
			for (k = 0; esc[k]; k++)
				PUT(esc[k]);
		} else {
			PUT(c);
		}
	}
	PUT('"');
	out[n] = '\0';
	return 0;
#undef PUT
}

char *lfc_make_id(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, size, "lc-%ld-%lld%09ld", (long)getpid(),
		 (long long)ts.tv_sec, ts.tv_nsec);
	return buf;
}

static int lfc_path(const struct lfc *c, const char *file, char *path,
		    size_t size)
{
	int n = snprintf(path, size, "%s/%s", c->dir, file);

	return n < 0 || (size_t)n >= size ? ENAMETOOLONG : 0;
}

static int lfc_write_all(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Write one line to DIR/file; 0 or the errno (close counts too: the view
 * reports every refusal again at close, ledgerfs(8) PROTOCOL).  With
 * fdp, the descriptor is opened read-write and left open for the reply.
 */
static int lfc_send(const struct lfc *c, const char *file, const char *line,
		    int *fdp)
{
	char path[4200];
	int fd, err;

	err = lfc_path(c, file, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, (fdp ? O_RDWR : O_WRONLY) | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (lfc_write_all(fd, line, strlen(line)) < 0)
		err = errno;
	if (fdp && !err) {
		*fdp = fd;
		return 0;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

int lfc_have_credentials(void)
{
	const char *cs = getenv("LEDGERFS_CASE"),
		   *tok = getenv("LEDGERFS_TOKEN");

	return cs && *cs && tok && *tok;
}

int lfc_register_as(const struct lfc *c, const char *cs, const char *tok)
{
	char qc[300], qt[300], line[700];

	if (!cs || !tok || lfc_json_str(qc, sizeof(qc), cs) ||
	    lfc_json_str(qt, sizeof(qt), tok))
		return -1;
	snprintf(line, sizeof(line), "{\"case_id\":%s,\"token\":%s}\n", qc, qt);
	return lfc_send(c, "register", line, NULL);
}

int lfc_register(const struct lfc *c)
{
	return lfc_register_as(c, getenv("LEDGERFS_CASE"),
			       getenv("LEDGERFS_TOKEN"));
}

int lfc_request(const struct lfc *c, const char *line, char **reply,
		size_t *len)
{
	char *buf;
	size_t n = 0;
	int fd = -1, err;

	*reply = NULL;
	*len = 0;
	buf = malloc(LFC_REPLY_MAX + 1);
	if (!buf)
		return ENOMEM;
	/* One descriptor, read-write: it reads back the reply to its own call. */
	err = lfc_send(c, "request", line, &fd);
	if (err) {
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, LFC_REPLY_MAX - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (buf[n - 1] == '\n' || n == LFC_REPLY_MAX)
			break;
	}
	buf[n] = '\0';
	if (close(fd) < 0) {
		err = errno;
		free(buf);
		return err;
	}
	if (!n) {
		free(buf);
		return EPROTO;
	}
	*reply = buf;
	*len = n;
	return 0;
}

int lfc_call(const struct lfc *c, const char *id, const char *tool,
	     const char *args, char **reply, size_t *len)
{
	char qtool[1100], qid[1100], *line;
	int err;

	*reply = NULL;
	*len = 0;
	if (lfc_json_str(qtool, sizeof(qtool), tool) ||
	    lfc_json_str(qid, sizeof(qid), id))
		return -1;
	line = malloc(strlen(qtool) + strlen(qid) + strlen(args) + 64);
	if (!line)
		return ENOMEM;
	sprintf(line, "{\"call_id\":%s,\"tool\":%s,\"args\":%s}\n", qid, qtool,
		args);
	err = lfc_request(c, line, reply, len);
	free(line);
	return err;
}

int lfc_result_line(const struct lfc *c, const char *line)
{
	return lfc_send(c, "result", line, NULL);
}

int lfc_result(const struct lfc *c, const char *id, const char *returned,
	       int is_error, int real_executed)
{
	char qid[1100], *line;
	int err;

	if (lfc_json_str(qid, sizeof(qid), id))
		return -1;
	line = malloc(strlen(qid) + strlen(returned) + 128);
	if (!line)
		return ENOMEM;
	sprintf(line,
		"{\"call_id\":%s,\"returned\":%s,\"is_error\":%s,\"real_executed\":%s}\n",
		qid, returned, is_error ? "true" : "false",
		real_executed ? "true" : "false");
	err = lfc_result_line(c, line);
	free(line);
	return err;
}

/* The names the view's errors begin with (ledgerfs(8) errno table). */
static const char *lfc_errno_name(int err)
{
	static const struct {
		int err;
		const char *name;
	} t[] = {
		{EACCES, "EACCES"},
		{EEXIST, "EEXIST"},
		{EINVAL, "EINVAL"},
		{EFBIG, "EFBIG"},
		{ENOENT, "ENOENT"},
		{EPIPE, "EPIPE"},
		{ENOBUFS, "ENOBUFS"},
		{ENOMEM, "ENOMEM"},
		{EIO, "EIO"},
		{EROFS, "EROFS"},
		{EPERM, "EPERM"},
		{ENOSPC, "ENOSPC"},
		{EAGAIN, "EAGAIN"},
		{EBUSY, "EBUSY"},
		{ENAMETOOLONG, "ENAMETOOLONG"},
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].err == err)
			return t[i].name;
	return NULL;
}

char *lfc_reason(const struct lfc *c, int err, char *buf, size_t size)
{
	const char *name = err > 0 ? lfc_errno_name(err) : NULL;
	char path[4200];
	ssize_t n = -1;
	int fd;

	buf[0] = '\0';
	if (size < 2 || lfc_path(c, "error", path, sizeof(path)))
		return buf;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		do
			n = read(fd, buf, size - 1);
		while (n < 0 && errno == EINTR);
		close(fd);
	}
	if (n <= 0)
		n = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	/*
	 * The file is the case's, not this write's: another write refused
	 * in the meantime wrote its own.  One that names another errno is
	 * not this refusal's reason (lfclient.h).
	 */
	if (name &&
	    (strncmp(buf, name, strlen(name)) || buf[strlen(name)] != ' '))
		buf[0] = '\0';
	return buf;
}

int lfc_reply_host_executed(const char *reply)
{
	return lfc_reply_mode(reply) == LFC_MODE_PASS &&
	       strstr(reply, "\"result_source\":\"host_executed\"") != NULL;
}

enum lfc_mode lfc_reply_mode(const char *reply)
{
	const char *mode = strstr(reply, "\"mode\":\"");

	if (!mode)
		return LFC_MODE_UNKNOWN;
	mode += 8;
	if (strncmp(mode, "pass\"", 5) == 0)
		return LFC_MODE_PASS;
	if (strncmp(mode, "mock\"", 5) == 0)
		return LFC_MODE_MOCK;
	if (strncmp(mode, "block\"", 6) == 0)
		return LFC_MODE_BLOCK;
	return LFC_MODE_UNKNOWN;
}
