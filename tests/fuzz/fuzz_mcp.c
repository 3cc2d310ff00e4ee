/* SPDX-License-Identifier: MIT */
/*
 * fuzz_mcp.c - fuzz harness for ledgerfs-mcp's input side: the bytes are
 * what an MCP client writes to the server's stdin, read by the bounded
 * line reader, parsed, and answered by the server's own dispatch
 * (mcp_serve, target/mcp_server.c).  The case folder does not exist, so
 * every tools/call takes the refused path on its own thread; responses
 * go to /dev/null.  Sanitizers and the reader's bounds are the checks.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_request.h"
#include "mcp.h"

static struct mcp_server fz;

static void fz_init(void)
{
	static int done;

	if (done)
		return;
	done = 1;
	memset(&fz, 0, sizeof(fz));
	fz.out_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pthread_mutex_init(&fz.out_lock, NULL);
	pthread_mutex_init(&fz.lock, NULL);
	pthread_cond_init(&fz.idle, NULL);
	if (fz.out_fd < 0 || lfc_init(&fz.lc, "/nonexistent/ledgerfs-fuzz"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t done = 0;
	int fd;

	fz_init();
	fd = memfd_create("mcp-input", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	mcp_serve(&fz, fd);
	close(fd);
	/* Every call's thread has answered and freed its state. */
	mcp_calls_wait(&fz);
	return 0;
}
