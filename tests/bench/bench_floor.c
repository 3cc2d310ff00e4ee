/* SPDX-License-Identifier: MIT */
/*
 * bench_floor.c - the least a durable row costs on a file system, the
 * floors the benchmark sets a ledgerfs call against (README, Performance):
 *
 *   append     write a 400-byte line at the end of a file, then fdatasync
 *              (the size changes: the journal commits with the data)
 *   overwrite  write 400 bytes over bytes already written and flushed,
 *              then fdatasync (a data-only flush, no size change)
 *
 *   bench_floor append|overwrite FILE N [--out LATFILE]
 *
 * Prints "RESULT mode=... calls=N p50_us=... p99_us=..."; with --out it
 * appends each latency (ns, uint64) to LATFILE, the format of
 * `bench_client stats`, so interleaved rounds can be pooled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_LINE 400

static uint64_t floor_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int floor_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double floor_pct(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n);

	return (double)v[i < n ? i : n - 1] / 1000.0;
}

static int floor_fail(const char *what)
{
	fprintf(stderr, "bench_floor: %s: %s\n", what, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	char line[FLOOR_LINE];
	uint64_t *lat, t0;
	const char *out = NULL;
	long n, i;
	int fd, overwrite;

	if (argc != 4 && !(argc == 6 && !strcmp(argv[4], "--out"))) {
		fputs("usage: bench_floor append|overwrite FILE N [--out LATFILE]\n",
		      stderr);
		return 2;
	}
	overwrite = !strcmp(argv[1], "overwrite");
	if (!overwrite && strcmp(argv[1], "append")) {
		fputs("bench_floor: mode is append or overwrite\n", stderr);
		return 2;
	}
	n = atol(argv[3]);
	if (argc == 6)
		out = argv[5];
	if (n <= 0 || !(lat = calloc((size_t)n, sizeof(*lat))))
		return 2;
	memset(line, 'x', sizeof(line));
	line[FLOOR_LINE - 1] = '\n';
	fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return floor_fail(argv[2]);
	if (overwrite) {
		/* The space, written and flushed once, before any timing. */
		for (i = 0; i < n; i++)
			if (write(fd, line, sizeof(line)) != sizeof(line))
				return floor_fail("write");
		if (fsync(fd) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			return floor_fail("fsync");
	} else if (fsync(fd) < 0) {
		return floor_fail("fsync");
	}
	for (i = 0; i < n; i++) {
		t0 = floor_now_ns();
		if (write(fd, line, sizeof(line)) != sizeof(line))
			return floor_fail("write");
		if (fdatasync(fd) < 0)
			return floor_fail("fdatasync");
		lat[i] = floor_now_ns() - t0;
	}
	close(fd);
	unlink(argv[2]);
	if (out) {
		FILE *f = fopen(out, "ab");

		if (!f ||
		    fwrite(lat, sizeof(*lat), (size_t)n, f) != (size_t)n ||
		    fclose(f))
			return floor_fail(out);
	}
	qsort(lat, (size_t)n, sizeof(*lat), floor_cmp);
	printf("RESULT mode=%s calls=%ld p50_us=%.1f p90_us=%.1f p99_us=%.1f\n",
	       argv[1], n, floor_pct(lat, (size_t)n, 0.5),
	       floor_pct(lat, (size_t)n, 0.9), floor_pct(lat, (size_t)n, 0.99));
	free(lat);
	return 0;
}
