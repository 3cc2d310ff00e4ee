/* SPDX-License-Identifier: MIT */
/*
 * lfhold.c - a hostile writer for the memory tests: opens N descriptors
 * on one file of the view, leaves an unterminated line of BYTES on each,
 * and holds them all open until its standard input ends; then closes
 * them.  Reports what the daemon answered, by errno name, so a script
 * can check the bound on partial lines (ledgerfs(8) LIMITS).
 *
 * usage: lfhold FILE N BYTES [CHUNK]
 *   prints "held=H refused=R first_error=ERRNO open_failed=O" and
 *   "ready", waits for EOF on stdin, then prints "closed".
 * Exit status 0, or 2 for a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *err_name(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "EUNKNOWN";
}

/* Write bytes of 'a' in chunks; 0, or the errno of the first failure. */
static int fill(int fd, size_t bytes, const char *chunk, size_t csize)
{
	while (bytes) {
		size_t n = bytes < csize ? bytes : csize;
		ssize_t w = write(fd, chunk, n);

		if (w < 0)
			return errno;
		bytes -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	long n, i, held = 0, refused = 0, open_failed = 0;
	size_t bytes, csize = 128 * 1024;
	int *fds, first = 0;
	char *chunk, c;

	if (argc < 4 || argc > 5)
		return fprintf(stderr, "usage: lfhold FILE N BYTES [CHUNK]\n"),
		       2;
	n = atol(argv[2]);
	bytes = (size_t)atol(argv[3]);
	if (argc == 5)
		csize = (size_t)atol(argv[4]);
	if (n <= 0 || !csize)
		return 2;
	fds = calloc((size_t)n, sizeof(*fds));
	chunk = malloc(csize);
	if (!fds || !chunk)
		return 1;
	memset(chunk, 'a', csize);
	for (i = 0; i < n; i++) {
		int e;

		fds[i] = open(argv[1], O_WRONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			open_failed++;
			continue;
		}
		e = fill(fds[i], bytes, chunk, csize);
		if (e) {
			refused++;
			if (!first)
				first = e;
		} else {
			held++;
		}
	}
	printf("held=%ld refused=%ld first_error=%s open_failed=%ld\nready\n",
	       held, refused, first ? err_name(first) : "none", open_failed);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	/* The lines are junk: their close fails; only the freeing matters. */
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	printf("closed\n");
	free(fds);
	free(chunk);
	return 0;
}
