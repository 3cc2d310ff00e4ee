/* SPDX-License-Identifier: MIT */
/*
 * errlog.c - a detached daemon's standard error, into syslog.
 *
 * The daemon reports every error as one line on standard error
 * (ledgerfs(8) SYSTEMD).  Started by mount(8) or from /etc/fstab it
 * detaches once mounted, and libfuse points standard error at /dev/null:
 * the lines written after that would be lost.  Here standard error
 * becomes a pipe whose lines a thread hands to syslog(3) (the journal,
 * under systemd), each line one message of priority LOG_ERR.
 */
#include "errlog.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#define ERRLOG_LINE 4096 /* longer lines go as several messages */

static pthread_t errlog_thread;
static bool errlog_running;

static void *errlog_pump(void *arg)
{
	int fd = (int)(long)arg;
	char buf[ERRLOG_LINE];
	size_t have = 0;
	ssize_t r;
	char *nl;

	for (;;) {
		r = read(fd, buf + have, sizeof(buf) - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		while ((nl = memchr(buf, '\n', have)) || have == sizeof(buf)) {
			size_t n = nl ? (size_t)(nl - buf) : have;

			syslog(LOG_ERR, "%.*s", (int)n, buf);
			n += nl != NULL;
			memmove(buf, buf + n, have - n);
			have -= n;
		}
	}
	if (have)
		syslog(LOG_ERR, "%.*s", (int)have, buf);
	close(fd);
	return NULL;
}

void errlog_to_syslog(void)
{
	int p[2];

	if (errlog_running || pipe2(p, O_CLOEXEC) < 0)
		return;
	openlog("ledgerfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	if (dup2(p[1], STDERR_FILENO) < 0 ||
	    pthread_create(&errlog_thread, NULL, errlog_pump,
			   (void *)(long)p[0]) != 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	close(p[1]);
	errlog_running = true;
}

void errlog_end(void)
{
	int null;

	if (!errlog_running)
		return;
	/* The pipe's last writer goes: the thread reads the rest, then EOF. */
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDERR_FILENO);
		close(null);
	} else {
		close(STDERR_FILENO);
	}
	pthread_join(errlog_thread, NULL);
	errlog_running = false;
	closelog();
}
