/* SPDX-License-Identifier: MIT */
/*
 * bench_client.c - the benchmark's targets: C processes, one case each,
 * making N calls (pass with its result, mock with a scenario, block)
 * through a ledgerfs mount or the Unix-socket baseline, timing each call
 * from the write of the request to the end of its reply line.
 *
 *   bench_client run  --mode fuse|socket --target MNT|SOCK --clients C
 *                     --calls N --prefix P --policy F --mocks F
 *   bench_client open --target MNT --cases N --prefix P --procs K
 *                     --policy F --mocks F
 *   bench_client stats FILE [--skip K --every N]
 *
 * `run` prints one line "RESULT key=value ..." (with --out FILE it also
 * appends each latency, in ns, to FILE): calls/s over the whole run
 * (cps) and over the part of it in which all C clients were calling
 * (all_calling_cps, each call counted for its part inside that window:
 * bench_all_calling); `stats` prints the percentiles
 * over such a file, so interleaved runs can be pooled (with --skip K
 * --every N, leaving out the first K calls of each run of N); `open`
 * opens and registers N idle cases (for the memory figure): "OPENED n=N
 * secs=S".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BENCH_LINE_MAX 65536

struct bench_opts {
	const char *cmd;
	const char *mode; /* "fuse" or "socket" */
	const char *target;
	const char *prefix;
	const char *policy_file;
	const char *mocks_file;
	const char *out; /* append raw latencies (ns, uint64) here */
	long clients;
	long calls;
	long cases;
	long procs;
};

/* One target's connection: either the view's files or one socket. */
struct bench_conn {
	bool socket;
	int req;   /* request fd (O_RDWR on the view) or the socket */
	int res;   /* result fd on the view; the socket again otherwise */
	char *buf; /* bytes read past the current reply line */
	size_t len;
};

static char *policy_text, *mocks_text;

static uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void bench_die(const char *what, const char *arg)
{
	fprintf(stderr, "bench_client: %s %s: %s\n", what, arg ? arg : "",
		errno ? strerror(errno) : "failed");
	exit(1);
}

static char *bench_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	long n;

	if (!f)
		bench_die("cannot open", path);
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0)
		bench_die("cannot size", path);
	s = calloc(1, (size_t)n + 1);
	if (!s || fread(s, 1, (size_t)n, f) != (size_t)n)
		bench_die("cannot read", path);
	fclose(f);
	return s;
}

static void bench_write_all(int fd, const char *s, size_t n, const char *what)
{
	while (n) {
		ssize_t r = write(fd, s, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			bench_die("write", what);
		s += r;
		n -= (size_t)r;
	}
}

/* Write a whole file of the view and close it (policy, mocks, ctl...). */
static void bench_put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		bench_die("open", path);
	bench_write_all(fd, text, strlen(text), path);
	if (close(fd) != 0)
		bench_die("close", path);
}

/*
 * Read one line (with its newline) into out[size].  Bytes past it stay
 * in the connection's buffer: a socket may deliver more than one line.
 */
static size_t bench_read_line(struct bench_conn *c, char *out, size_t size)
{
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		ssize_t r;

		if (nl) {
			size_t n = (size_t)(nl - c->buf) + 1;

			if (n >= size)
				bench_die("reply too long", NULL);
			memcpy(out, c->buf, n);
			out[n] = '\0';
			memmove(c->buf, c->buf + n, c->len - n);
			c->len -= n;
			return n;
		}
		if (c->len >= BENCH_LINE_MAX)
			bench_die("reply without newline", NULL);
		r = read(c->req, c->buf + c->len, BENCH_LINE_MAX - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			bench_die("read reply", NULL);
		if (r == 0) {
			errno = 0;
			bench_die("no reply line (EOF)", NULL);
		}
		c->len += (size_t)r;
	}
}

/* Host side of one case on the view, then the target's registration. */
static void bench_fuse_open(const char *mnt, const char *name,
			    struct bench_conn *c, bool keep_open)
{
	char path[4096], token[80], line[512];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/cases/%s", mnt, name);
	if (mkdir(path, 0700) != 0)
		bench_die("mkdir", path);
	snprintf(path, sizeof(path), "%s/cases/%s/policy", mnt, name);
	bench_put(path, policy_text);
	snprintf(path, sizeof(path), "%s/cases/%s/mocks", mnt, name);
	bench_put(path, mocks_text);
	snprintf(path, sizeof(path), "%s/cases/%s/token", mnt, name);
	fd = open(path, O_RDONLY);
	if (fd < 0 || (n = read(fd, token, sizeof(token) - 1)) < 65)
		bench_die("read", path);
	close(fd);
	token[64] = '\0';
	snprintf(line, sizeof(line), "{\"case_id\":\"%s\",\"token\":\"%s\"}\n",
		 name, token);
	snprintf(path, sizeof(path), "%s/cases/%s/target/register", mnt, name);
	bench_put(path, line);
	if (!keep_open)
		return;
	snprintf(path, sizeof(path), "%s/cases/%s/target/request", mnt, name);
	c->req = open(path, O_RDWR);
	if (c->req < 0)
		bench_die("open", path);
	snprintf(path, sizeof(path), "%s/cases/%s/target/result", mnt, name);
	c->res = open(path, O_WRONLY);
	if (c->res < 0)
		bench_die("open", path);
}

/* The baseline: the same registration line, answered by one line. */
static void bench_socket_open(const char *sock, const char *name,
			      struct bench_conn *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char line[512];

	if (strlen(sock) >= sizeof(sa.sun_path))
		bench_die("socket path too long", sock);
	strcpy(sa.sun_path, sock);
	c->req = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->req < 0 ||
	    connect(c->req, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		bench_die("connect", sock);
	c->res = c->req;
	snprintf(line, sizeof(line),
		 "{\"case_id\":\"%s\",\"token\":\"%064d\"}\n", name, 0);
	bench_write_all(c->req, line, strlen(line), "register");
	bench_read_line(c, line, sizeof(line));
	if (!strstr(line, "\"registered\""))
		bench_die("registration refused:", line);
}

static const char *const bench_expect[] = {
	"\"mode\":\"pass\"", "\"mode\":\"mock\"", "\"mode\":\"block\""};

/*
 * One call: i % 3 picks pass (and then its result), mock (a scenario
 * step) or block.  Returns the latency of request -> reply in ns.
 */
static uint64_t bench_call(struct bench_conn *c, long i, long *errors)
{
	char req[512], reply[BENCH_LINE_MAX];
	uint64_t t0, t1;
	int kind = (int)(i % 3);
	int n;

	if (kind == 0)
		n = snprintf(
			req, sizeof(req),
			"{\"call_id\":\"c%ld\",\"tool\":\"lookup_customer\",\"args\":{\"id\":%ld}}\n",
			i, i);
	else if (kind == 1)
		n = snprintf(
			req, sizeof(req),
			"{\"call_id\":\"c%ld\",\"tool\":\"resume_line\",\"args\":{\"line\":\"L%ld\"}}\n",
			i, i % 7);
	else
		n = snprintf(
			req, sizeof(req),
			"{\"call_id\":\"c%ld\",\"tool\":\"delete_account\",\"args\":{\"id\":%ld}}\n",
			i, i);
	t0 = bench_now_ns();
	bench_write_all(c->req, req, (size_t)n, "request");
	bench_read_line(c, reply, sizeof(reply));
	t1 = bench_now_ns();
	if (!strstr(reply, bench_expect[kind])) {
		if (*errors < 3)
			fprintf(stderr, "bench_client: unexpected reply: %s",
				reply);
		(*errors)++;
	}
	if (kind == 0) {
		n = snprintf(
			req, sizeof(req),
			"{\"call_id\":\"c%ld\",\"returned\":{\"name\":\"Ada\",\"id\":%ld},\"is_error\":false,\"real_executed\":true}\n",
			i, i);
		bench_write_all(c->res, req, (size_t)n, "result");
		if (c->socket) {
			bench_read_line(c, reply, sizeof(reply));
			if (!strstr(reply, "\"ok\"")) {
				fprintf(stderr, "bench_client: result: %s",
					reply);
				(*errors)++;
			}
		}
	}
	return t1 - t0;
}

/* Shared between the parent and the targets it forks. */
struct bench_shared {
	long errors;
	/*
	 * clients * calls latencies, ns; then as many times (bench_now_ns)
	 * at which each call, its result included, was over; then as many
	 * at which each began.
	 */
	uint64_t lat[];
};

static int bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double bench_pct(const uint64_t *v, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1) + 0.5);

	return (double)v[k] / 1000.0;
}

static void bench_save(const char *path, const uint64_t *v, size_t n)
{
	FILE *f = fopen(path, "ab");

	if (!f || fwrite(v, sizeof(*v), n, f) != n || fclose(f) != 0)
		bench_die("cannot save latencies to", path);
}

/*
 * Percentiles over the latencies saved in a file by several runs: every
 * one, or with every > 0 only those past the first skip of each run of
 * every calls (a lone case's calls, one run after another).
 */
static int bench_stats(const char *path, long skip, long every)
{
	FILE *f = fopen(path, "rb");
	uint64_t *v = NULL;
	size_t n = 0, cap = 0, i = 0;

	if (!f)
		bench_die("cannot open", path);
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				bench_die("out of memory", NULL);
		}
		if (fread(&v[n], sizeof(*v), 1, f) != 1)
			break;
		if (every <= 0 || (long)(i++ % (size_t)every) >= skip)
			n++;
	}
	fclose(f);
	if (!n)
		bench_die("no latencies in", path);
	qsort(v, n, sizeof(*v), bench_cmp_u64);
	printf("STATS calls=%zu p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	       "max_us=%.1f\n",
	       n, bench_pct(v, n, 0.50), bench_pct(v, n, 0.90),
	       bench_pct(v, n, 0.99), bench_pct(v, n, 1.0));
	free(v);
	return 0;
}

static void bench_target(const struct bench_opts *o, long idx,
			 struct bench_shared *sh, int ready_w, int go_r)
{
	struct bench_conn c = {.socket = !strcmp(o->mode, "socket")};
	char name[160], byte = 1;
	long i, errors = 0;
	uint64_t *lat = sh->lat + idx * o->calls;
	uint64_t *over = sh->lat + o->clients * o->calls + idx * o->calls;
	uint64_t *begin = over + o->clients * o->calls;

	c.buf = malloc(BENCH_LINE_MAX);
	if (!c.buf)
		bench_die("out of memory", NULL);
	snprintf(name, sizeof(name), "%s%ld", o->prefix, idx);
	if (c.socket)
		bench_socket_open(o->target, name, &c);
	else
		bench_fuse_open(o->target, name, &c, true);
	if (write(ready_w, &byte, 1) != 1 || read(go_r, &byte, 1) != 0)
		bench_die("start barrier", NULL);
	for (i = 0; i < o->calls; i++) {
		begin[i] = bench_now_ns();
		lat[i] = bench_call(&c, i, &errors);
		over[i] = bench_now_ns();
	}
	__atomic_add_fetch(&sh->errors, errors, __ATOMIC_RELAXED);
	close(c.req);
	if (!c.socket)
		close(c.res);
	free(c.buf);
	_exit(0);
}

/* Wait for every child; non-zero when one failed. */
static int bench_reap(long n)
{
	int st, bad = 0;

	while (n-- > 0) {
		if (wait(&st) < 0)
			return 1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad;
}

/*
 * Calls/s while every client was calling: from the start until the
 * first client's last call was over.  Past that point fewer clients
 * call, and a run's tail (a few left, or one) is not the load of C
 * clients the run measures.  Each call counts for the part of it inside
 * that window (a call begun before its end and over after it counts for
 * what it did inside), so neither end of the window biases the count,
 * however unevenly the clients were served.  The calls counted, and the
 * window's length in *secs.
 */
static double bench_all_calling(const struct bench_opts *o,
				const uint64_t *over, const uint64_t *begin,
				uint64_t t0, double *secs)
{
	size_t total = (size_t)o->clients * (size_t)o->calls, k;
	uint64_t until = UINT64_MAX, a, b;
	double n = 0;
	long i;

	for (i = 0; i < o->clients; i++)
		if (over[(i + 1) * o->calls - 1] < until)
			until = over[(i + 1) * o->calls - 1];
	for (k = 0; k < total; k++) {
		a = begin[k] > t0 ? begin[k] : t0;
		b = over[k] < until ? over[k] : until;
		if (b > a && over[k] > begin[k])
			n += (double)(b - a) / (double)(over[k] - begin[k]);
	}
	*secs = (double)(until - t0) / 1e9;
	return n;
}

static int bench_run(const struct bench_opts *o)
{
	size_t total = (size_t)o->clients * (size_t)o->calls;
	size_t size =
		sizeof(struct bench_shared) + 3 * total * sizeof(uint64_t);
	struct bench_shared *sh;
	int ready[2], go[2], bad;
	uint64_t t0, t1;
	long i;
	char byte;
	double secs, all_secs;
	double all;

	sh = mmap(NULL, size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || pipe(ready) || pipe(go))
		bench_die("setup", NULL);
	for (i = 0; i < o->clients; i++) {
		pid_t p = fork();

		if (p < 0)
			bench_die("fork", NULL);
		if (p == 0) {
			close(ready[0]);
			close(go[1]);
			bench_target(o, i, sh, ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	/* Every target is registered and holds its files open: go. */
	for (i = 0; i < o->clients; i++)
		if (read(ready[0], &byte, 1) != 1) {
			fprintf(stderr,
				"bench_client: a target failed setup\n");
			close(go[1]);
			bench_reap(o->clients);
			return 1;
		}
	t0 = bench_now_ns();
	close(go[1]);
	bad = bench_reap(o->clients);
	t1 = bench_now_ns();
	if (bad) {
		fprintf(stderr, "bench_client: a target failed\n");
		return 1;
	}
	if (o->out)
		bench_save(o->out, sh->lat, total);
	all = bench_all_calling(o, sh->lat + total, sh->lat + 2 * total, t0,
				&all_secs);
	qsort(sh->lat, total, sizeof(uint64_t), bench_cmp_u64);
	secs = (double)(t1 - t0) / 1e9;
	printf("RESULT mode=%s clients=%ld calls=%zu wall_s=%.3f cps=%.1f "
	       "all_calling_calls=%.0f all_calling_s=%.4f all_calling_cps=%.1f "
	       "p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f errors=%ld\n",
	       o->mode, o->clients, total, secs, (double)total / secs, all,
	       all_secs, (double)all / all_secs,
	       bench_pct(sh->lat, total, 0.50), bench_pct(sh->lat, total, 0.90),
	       bench_pct(sh->lat, total, 0.99), bench_pct(sh->lat, total, 1.0),
	       sh->errors);
	return sh->errors ? 1 : 0;
}

/* Open and register o->cases idle cases with o->procs processes. */
static int bench_open(const struct bench_opts *o)
{
	uint64_t t0 = bench_now_ns();
	long p, i;

	for (p = 0; p < o->procs; p++) {
		pid_t pid = fork();

		if (pid < 0)
			bench_die("fork", NULL);
		if (pid == 0) {
			char name[160];

			for (i = p; i < o->cases; i += o->procs) {
				snprintf(name, sizeof(name), "%s%ld", o->prefix,
					 i);
				bench_fuse_open(o->target, name, NULL, false);
			}
			_exit(0);
		}
	}
	if (bench_reap(o->procs))
		return 1;
	printf("OPENED n=%ld secs=%.3f\n", o->cases,
	       (double)(bench_now_ns() - t0) / 1e9);
	return 0;
}

static void bench_usage(void)
{
	fputs("usage: bench_client run --mode fuse|socket --target PATH "
	      "--clients C --calls N --prefix P --policy F --mocks F [--out FILE]\n"
	      "       bench_client open --target MNT --cases N --procs K "
	      "--prefix P --policy F --mocks F\n"
	      "       bench_client stats FILE [--skip K --every N]\n",
	      stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	struct bench_opts o = {.mode = "fuse",
			       .prefix = "b",
			       .clients = 1,
			       .calls = 100,
			       .cases = 1,
			       .procs = 4};
	int i;

	if (argc < 2)
		bench_usage();
	o.cmd = argv[1];
	if (!strcmp(o.cmd, "stats") && argc == 3)
		return bench_stats(argv[2], 0, 0);
	if (!strcmp(o.cmd, "stats") && argc == 7 &&
	    !strcmp(argv[3], "--skip") && !strcmp(argv[5], "--every") &&
	    atol(argv[4]) >= 0 && atol(argv[6]) > atol(argv[4]))
		return bench_stats(argv[2], atol(argv[4]), atol(argv[6]));
	for (i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--mode"))
			o.mode = v;
		else if (!strcmp(k, "--target"))
			o.target = v;
		else if (!strcmp(k, "--prefix"))
			o.prefix = v;
		else if (!strcmp(k, "--policy"))
			o.policy_file = v;
		else if (!strcmp(k, "--mocks"))
			o.mocks_file = v;
		else if (!strcmp(k, "--out"))
			o.out = v;
		else if (!strcmp(k, "--clients"))
			o.clients = atol(v);
		else if (!strcmp(k, "--calls"))
			o.calls = atol(v);
		else if (!strcmp(k, "--cases"))
			o.cases = atol(v);
		else if (!strcmp(k, "--procs"))
			o.procs = atol(v);
		else
			bench_usage();
	}
	if (i != argc || !o.target || o.clients < 1 || o.calls < 1 ||
	    o.procs < 1)
		bench_usage();
	if (strcmp(o.mode, "socket") != 0) {
		if (!o.policy_file || !o.mocks_file)
			bench_usage();
		policy_text = bench_slurp(o.policy_file);
		mocks_text = bench_slurp(o.mocks_file);
	}
	if (!strcmp(o.cmd, "run"))
		return bench_run(&o);
	if (!strcmp(o.cmd, "open"))
		return bench_open(&o);
	bench_usage();
	return 2;
}
