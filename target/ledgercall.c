/*
 * ledgercall.c - the target's client: one tool call in, the reply out,
 * the exit status by decision (0 pass, 3 mock, 4 block, 1 error).  It
 * uses only libc, so it can be built static and bound into any image.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LC_REPLY_MAX (8u * 1024 * 1024)

static const char *dir;

static void usage(void)
{
	fprintf(stderr,
		"usage: ledgercall [--dir DIR] --tool NAME [--args JSON] [--call-id ID]\n"
		"       ledgercall [--dir DIR] result --call-id ID --returned JSON [--error] [--not-executed]\n"
		"       ledgercall [--dir DIR] register\n"
		"DIR defaults to $LEDGERFS_DIR, else /mediator. See ledgercall(1).\n");
}

/* Append s to out as a JSON string (quotes and escapes). */
static int json_str(char *out, size_t size, const char *s)
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

/* Say why the last write was refused: the view keeps it in `error`. */
static void print_reason(const char *what, int err)
{
	char path[4096], buf[512];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/error", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "ledgercall: %s: %s: %s", what, strerror(err),
			buf);
		if (buf[n - 1] != '\n')
			fputc('\n', stderr);
	} else {
		fprintf(stderr, "ledgercall: %s: %s\n", what, strerror(err));
	}
}

static int write_all(int fd, const char *s, size_t len)
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

/* Write one line to DIR/file; 0 or the errno (close counts too). */
static int send_line(const char *file, const char *line, int *fdp)
{
	char path[4096];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, (fdp ? O_RDWR : O_WRONLY) | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write_all(fd, line, strlen(line)) < 0)
		err = errno;
	if (fdp && !err) {
		*fdp = fd;
		return 0;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

static char *make_id(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, size, "lc-%ld-%lld%09ld", (long)getpid(),
		 (long long)ts.tv_sec, ts.tv_nsec);
	return buf;
}

/* line and reply are the caller's to free, on every path. */
static int do_call_in(const char *tool, const char *args, const char *id,
		      char **linep, char **replyp)
{
	char idbuf[64], qtool[1100], qid[300], *line, *reply;
	const char *mode;
	size_t len = 0;
	int fd = -1, err;

	if (!id)
		id = make_id(idbuf, sizeof(idbuf));
	if (json_str(qtool, sizeof(qtool), tool) ||
	    json_str(qid, sizeof(qid), id)) {
		fprintf(stderr, "ledgercall: tool name or call id too long\n");
		return 1;
	}
	line = *linep = malloc(strlen(qtool) + strlen(qid) + strlen(args) + 64);
	reply = *replyp = malloc(LC_REPLY_MAX + 1);
	if (!line || !reply)
		return 1;
	sprintf(line, "{\"call_id\":%s,\"tool\":%s,\"args\":%s}\n", qid, qtool,
		args);
	/* One descriptor, read-write: it reads back the reply to its own call. */
	err = send_line("request", line, &fd);
	if (err) {
		print_reason("request", err);
		return 1;
	}
	for (;;) {
		ssize_t n = read(fd, reply + len, LC_REPLY_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (reply[len - 1] == '\n' || len == LC_REPLY_MAX)
			break;
	}
	reply[len] = '\0';
	if (close(fd) < 0) {
		print_reason("request", errno);
		return 1;
	}
	if (!len) {
		fprintf(stderr, "ledgercall: no reply\n");
		return 1;
	}
	fputs(reply, stdout);
	/* The host writes mode right after call_id and sequence. */
	mode = strstr(reply, "\"mode\":\"");
	if (!mode)
		return 1;
	mode += 8;
	if (strncmp(mode, "pass\"", 5) == 0)
		return 0;
	if (strncmp(mode, "mock\"", 5) == 0)
		return 3;
	if (strncmp(mode, "block\"", 6) == 0)
		return 4;
	return 1;
}

static int do_call(const char *tool, const char *args, const char *id)
{
	char *line = NULL, *reply = NULL;
	int rc = do_call_in(tool, args, id, &line, &reply);

	free(line);
	free(reply);
	return rc;
}

static int do_result(int argc, char **argv)
{
	const char *id = NULL, *returned = NULL;
	int is_error = 0, executed = 1, i, err;
	char qid[300], *line;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--call-id") == 0 && i + 1 < argc)
			id = argv[++i];
		else if (strcmp(argv[i], "--returned") == 0 && i + 1 < argc)
			returned = argv[++i];
		else if (strcmp(argv[i], "--error") == 0)
			is_error = 1;
		else if (strcmp(argv[i], "--not-executed") == 0)
			executed = 0;
		else
			return usage(), 1;
	}
	if (!id || !returned || json_str(qid, sizeof(qid), id))
		return usage(), 1;
	line = malloc(strlen(qid) + strlen(returned) + 128);
	if (!line)
		return 1;
	sprintf(line,
		"{\"call_id\":%s,\"returned\":%s,\"is_error\":%s,\"real_executed\":%s}\n",
		qid, returned, is_error ? "true" : "false",
		executed ? "true" : "false");
	err = send_line("result", line, NULL);
	free(line);
	if (err) {
		print_reason("result", err);
		return 1;
	}
	return 0;
}

static int do_register(void)
{
	const char *cs = getenv("LEDGERFS_CASE"),
		   *tok = getenv("LEDGERFS_TOKEN");
	char qc[300], qt[300], line[700];
	int err;

	if (!cs || !tok || json_str(qc, sizeof(qc), cs) ||
	    json_str(qt, sizeof(qt), tok)) {
		fprintf(stderr,
			"ledgercall: register needs LEDGERFS_CASE and LEDGERFS_TOKEN\n");
		return 1;
	}
	snprintf(line, sizeof(line), "{\"case_id\":%s,\"token\":%s}\n", qc, qt);
	err = send_line("register", line, NULL);
	if (err) {
		print_reason("register", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *tool = NULL, *args = "{}", *id = NULL;
	int i = 1;

	dir = getenv("LEDGERFS_DIR");
	if (!dir || !*dir)
		dir = "/mediator";
	if (i + 1 < argc && strcmp(argv[i], "--dir") == 0) {
		dir = argv[i + 1];
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "result") == 0)
		return do_result(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "register") == 0 && i + 1 == argc)
		return do_register();
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--tool") == 0 && i + 1 < argc)
			tool = argv[++i];
		else if (strcmp(argv[i], "--args") == 0 && i + 1 < argc)
			args = argv[++i];
		else if (strcmp(argv[i], "--call-id") == 0 && i + 1 < argc)
			id = argv[++i];
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "-h") == 0 ||
			 strcmp(argv[i], "--help") == 0)
			return usage(), 0;
		else
			return usage(), 1;
	}
	if (!tool)
		return usage(), 1;
	return do_call(tool, args, id);
}
