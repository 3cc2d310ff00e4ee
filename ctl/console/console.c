/* SPDX-License-Identifier: MIT */
/*
 * console.c - `ledgerctl console`: a read-only web console over a mount
 * (ledgerctl(1) CONSOLE).  This file binds the listener, draws the
 * launch token, prints the one URL line and carries requests between
 * libmicrohttpd and the handler (console_http.c), including the event
 * stream of GET /api/events.  It serves until SIGINT or SIGTERM.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "chain.h"
#include "console_http.h"
#include "console_mhd.h"
#include "ctl.h"

#define CONSOLE_USAGE                                                          \
	"usage: ledgerctl console [--listen=ADDR[:PORT]] [--allow-remote] "    \
	"[--key=FILE] [--mount=DIR] [MOUNTPOINT]\n"
#define CONSOLE_MAX_HOSTS 8
/* How often an event stream looks for news (a case; the case list). */
#define EVENTS_CASE_MS	 500
#define EVENTS_LIST_MS	 2000
#define EVENTS_KEEPALIVE 15000

static atomic_bool console_stopping;

struct console_conn_hosts {
	const char *v[CONSOLE_MAX_HOSTS];
	size_t n;
};

static enum MHD_Result console_collect_host(void *cls, enum MHD_ValueKind kind,
					    const char *key, const char *value)
{
	struct console_conn_hosts *h = cls;

	(void)kind;
	if (strcasecmp(key, "Host") == 0) {
		if (h->n < CONSOLE_MAX_HOSTS)
			h->v[h->n] = value;
		h->n++;
	}
	return MHD_YES;
}

/* The guard's view of a wildcard listener: the address connected to. */
static void console_local_guard(struct MHD_Connection *conn,
				const struct console_srv *s,
				struct http_listen *g)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	*g = s->listen;
	g->host[0] = '\0';
	memset(g->addr, 0xff, sizeof(g->addr)); /* nothing matches on error */
	if (!ci || getsockname(ci->connect_fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		g->family = AF_INET;
		memcpy(g->addr, &((struct sockaddr_in *)&ss)->sin_addr, 4);
	} else if (ss.ss_family == AF_INET6) {
		g->family = AF_INET6;
		memcpy(g->addr, &((struct sockaddr_in6 *)&ss)->sin6_addr, 16);
	}
}

struct console_events {
	struct console_srv *srv;
	char name[130]; /* "" for the case list */
	size_t offset, limit;
	uint64_t last;
	bool sent;
	long idle_ms;
};

static void console_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* One event when what the page shows changed; a comment now and then. */
static ssize_t console_events_read(void *cls, uint64_t pos, char *buf,
				   size_t max)
{
	struct console_events *e = cls;
	long period = e->name[0] ? EVENTS_CASE_MS : EVENTS_LIST_MS;
	uint64_t sig;
	int n;

	(void)pos;
	for (;;) {
		if (atomic_load(&console_stopping))
			return MHD_CONTENT_READER_END_OF_STREAM;
		sig = cx_signature(e->srv->index, e->name[0] ? e->name : NULL,
				   e->offset, e->limit);
		if (!e->sent || sig != e->last) {
			e->sent = true;
			e->last = sig;
			e->idle_ms = 0;
			n = snprintf(
				buf, max,
				"event: %s\ndata: {\"signature\":\"%016llx\"}\n\n",
				e->name[0] ? "case" : "cases",
				(unsigned long long)sig);
			return n > 0 && (size_t)n < max ? n : 0;
		}
		if (e->idle_ms >= EVENTS_KEEPALIVE) {
			e->idle_ms = 0;
			n = snprintf(buf, max, ": keepalive\n\n");
			return n > 0 && (size_t)n < max ? n : 0;
		}
		for (long slept = 0; slept < period; slept += 100) {
			if (atomic_load(&console_stopping))
				return MHD_CONTENT_READER_END_OF_STREAM;
			console_sleep_ms(100);
		}
		e->idle_ms += period;
	}
}

static void console_add_headers(struct MHD_Response *resp,
				const struct console_resp *r)
{
	size_t i;

	for (i = 0; i < console_security_header_count; i++)
		MHD_add_response_header(resp, console_security_headers[i][0],
					console_security_headers[i][1]);
	MHD_add_response_header(resp, "Content-Type", r->type);
	if (r->set_cookie[0])
		MHD_add_response_header(resp, "Set-Cookie", r->set_cookie);
	if (r->location)
		MHD_add_response_header(resp, "Location", r->location);
	if (r->allow)
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
}

static enum MHD_Result console_request(void *cls, struct MHD_Connection *conn,
				       const char *url, const char *method,
				       const char *version,
				       const char *upload_data,
				       size_t *upload_data_size, void **con_cls)
{
	struct console_srv *s = cls;
	struct console_conn_hosts hosts = {{0}, 0};
	struct console_req q = {0};
	struct console_resp r;
	struct http_listen local;
	const struct http_listen *guard = &s->listen;
	struct MHD_Response *resp = NULL;
	enum MHD_Result ret;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	MHD_get_connection_values(conn, MHD_HEADER_KIND, console_collect_host,
				  &hosts);
	if (http_listen_is_wildcard(&s->listen)) {
		console_local_guard(conn, s, &local);
		guard = &local;
	}
	q.method = method;
	q.path = url;
	q.hosts = hosts.v;
	q.nhosts = hosts.n > CONSOLE_MAX_HOSTS ? CONSOLE_MAX_HOSTS : hosts.n;
	if (hosts.n > 1 && q.nhosts < 2)
		q.nhosts = 2;
	q.cookie = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Cookie");
	q.authorization = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						      "Authorization");
	q.arg_token = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						  "token");
	q.arg_offset = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						   "offset");
	q.arg_limit = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						  "limit");
	q.arg_case = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND,
						 "case");
	console_handle(s, guard, &q, &r);
	if (r.reason[0])
		fprintf(stderr, "ledgerctl console: %u %.16s %.200s: %s\n",
			r.status, method, url, r.reason);
	if (r.events && strcmp(method, "HEAD")) {
		struct console_events *e = calloc(1, sizeof(*e));

		if (e) {
			e->srv = s;
			snprintf(e->name, sizeof(e->name), "%s", r.events_case);
			e->offset = r.events_offset;
			e->limit = r.events_limit;
			resp = MHD_create_response_from_callback(
				MHD_SIZE_UNKNOWN, 1024, console_events_read, e,
				free);
			if (!resp)
				free(e);
		}
	} else {
		resp = MHD_create_response_from_buffer(r.len, r.body,
						       MHD_RESPMEM_MUST_COPY);
	}
	if (!resp) {
		console_resp_free(&r);
		return MHD_NO;
	}
	console_add_headers(resp, &r);
	ret = MHD_queue_response(conn, r.status, resp);
	MHD_destroy_response(resp);
	console_resp_free(&r);
	return ret;
}

/* Bind and listen on l; the socket, or -1 (said on stderr). */
static int console_bind(const struct http_listen *l)
{
	struct sockaddr_storage ss;
	socklen_t len = http_listen_sockaddr(l, l->port, &ss);
	int fd, one = 1;
	mode_t old;

	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	if (l->kind == HTTP_LISTEN_INET)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (l->kind == HTTP_LISTEN_INET && l->family == AF_INET6) {
		/* Exactly the address given; a v4-mapped one takes IPv4. */
		int v6only = l->addr[10] == 0xff && l->addr[11] == 0xff &&
					     !memcmp(l->addr,
						     "\0\0\0\0\0\0\0\0\0\0", 10)
				     ? 0
				     : 1;

		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
			   sizeof(v6only));
	}
	old = umask(077); /* a unix socket: its owner alone connects */
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (listen(fd, 64) < 0)
		goto fail;
	return fd;
fail:
	fprintf(stderr, "ledgerctl console: cannot listen: %s\n",
		strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

static unsigned console_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return 0;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

static void console_print_url(const struct console_srv *s)
{
	char host[64];

	if (s->listen.kind == HTTP_LISTEN_UNIX) {
		printf("console: http+unix://");
		/* PATH percent-encoded: all but RFC 3986's unreserved. */
		for (const char *p = s->listen.path; *p; p++)
			if (isalnum((unsigned char)*p) || strchr("-._~", *p))
				putchar(*p);
			else
				printf("%%%02X", (unsigned char)*p);
		printf("/?token=%s\n", s->token);
	} else {
		http_addr_url_host(s->listen.family, s->listen.addr, host,
				   sizeof(host));
		printf("console: http://%s:%u/?token=%s\n", host, s->port,
		       s->token);
	}
	fflush(stdout);
}

int ctl_console_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"allow-remote", no_argument, NULL, 'r'},
		{"key", required_argument, NULL, 'k'},
		{"mount", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen_arg = "127.0.0.1:0", *key_path = NULL;
	const char *mount = getenv("LEDGERFS_MOUNT");
	unsigned char key[CHAIN_KEY_BYTES];
	struct console_srv srv;
	struct lf_why why = {{0}};
	struct MHD_Daemon *d = NULL;
	bool allow_remote = false, have_key = false;
	char cases[4096];
	struct stat st;
	sigset_t set;
	int c, fd = -1, sig, rc = 2;

	memset(&srv, 0, sizeof(srv));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			listen_arg = optarg;
			break;
		case 'r':
			allow_remote = true;
			break;
		case 'k':
			key_path = optarg;
			break;
		case 'm':
			/* --mount anywhere after the command, as elsewhere. */
			mount = optarg;
			break;
		case 'h':
			fputs(CONSOLE_USAGE, stdout);
			return 0;
		default:
			fputs(CONSOLE_USAGE, stderr);
			return 2;
		}
	}
	if (optind + 1 < argc) {
		fputs(CONSOLE_USAGE, stderr);
		return 2;
	}
	if (optind < argc)
		mount = argv[optind];
	if (!mount || !*mount)
		mount = CTL_DEFAULT_MOUNT;
	if (http_listen_parse(listen_arg, &srv.listen, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl console: %s\n", why.msg);
		return 2;
	}
	if (srv.listen.kind == HTTP_LISTEN_INET &&
	    !http_listen_is_loopback(&srv.listen) && !allow_remote) {
		fprintf(stderr,
			"ledgerctl console: %s is not a loopback address; "
			"give --allow-remote to serve it (the Host guard and "
			"the token still apply)\n",
			listen_arg);
		return 2;
	}
	snprintf(cases, sizeof(cases), "%s/cases", mount);
	if (stat(cases, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr,
			"ledgerctl console: %s is not a ledgerfs mount "
			"(no cases/ folder)\n",
			mount);
		return 2;
	}
	/* The host key only sharpens verify; without it the chain is shown. */
	if (ctl_read_key("console", key_path ? key_path : CTL_DEFAULT_KEY,
			 key) == 0)
		have_key = true;
	else if (key_path) {
		fprintf(stderr, "ledgerctl console: cannot read the key %s\n",
			key_path);
		return 2;
	}
	if (http_token_new(srv.token, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl console: %s\n", why.msg);
		return 2;
	}
	srv.index = cx_new(mount, have_key ? key : NULL);
	memset(key, 0, sizeof(key));
	if (!srv.index || console_mhd_load() < 0)
		goto out;
	/* Every thread libmicrohttpd starts inherits this mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	fd = console_bind(&srv.listen);
	if (fd < 0)
		goto out;
	srv.port = srv.listen.kind == HTTP_LISTEN_INET ? console_bound_port(fd)
						       : 0;
	d = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
		0, NULL, NULL, console_request, &srv, MHD_OPTION_LISTEN_SOCKET,
		fd, MHD_OPTION_CONNECTION_LIMIT, 64u,
		MHD_OPTION_CONNECTION_TIMEOUT, 60u,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)65536,
		MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "ledgerctl console: cannot start the server\n");
		goto out;
	}
	console_print_url(&srv);
	do {
		if (sigwait(&set, &sig) != 0)
			break;
	} while (sig != SIGINT && sig != SIGTERM);
	rc = 0;
out:
	atomic_store(&console_stopping, true);
	if (d)
		MHD_stop_daemon(d);
	else if (fd >= 0)
		close(fd);
	if (srv.listen.kind == HTTP_LISTEN_UNIX && fd >= 0)
		unlink(srv.listen.path);
	cx_free(srv.index);
	return rc;
}
