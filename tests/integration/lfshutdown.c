/* SPDX-License-Identifier: MIT */
/*
 * lfshutdown.c - cut an ext4 (or xfs) file system off as a power cut or a
 * dead disk would: EXT4_IOC_SHUTDOWN on any file of it.  From then on
 * every write and flush there fails with EIO until it is mounted again.
 * For the disk-failure test and scripts/soak.sh.
 *
 * usage: lfshutdown PATH [nologflush|logflush|default]
 *   nologflush (the default): the journal is not flushed, as at a power
 *   cut; what fsync had made durable stays.
 * Exit status 0, 1 when the ioctl fails (message on stderr), 2 for usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* linux/fs/ext4/ext4.h (same number as XFS_IOC_GOINGDOWN) */
#define LF_IOC_SHUTDOWN	 _IOR('X', 125, uint32_t)
#define GOING_DEFAULT	 0
#define GOING_LOGFLUSH	 1
#define GOING_NOLOGFLUSH 2

int main(int argc, char **argv)
{
	uint32_t flags = GOING_NOLOGFLUSH;
	int fd;

	if (argc < 2 || argc > 3)
		return fprintf(stderr, "usage: lfshutdown PATH "
				       "[nologflush|logflush|default]\n"),
		       2;
	if (argc == 3) {
		if (strcmp(argv[2], "logflush") == 0)
			flags = GOING_LOGFLUSH;
		else if (strcmp(argv[2], "default") == 0)
			flags = GOING_DEFAULT;
		else if (strcmp(argv[2], "nologflush") != 0)
			return 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, LF_IOC_SHUTDOWN, &flags) < 0) {
		fprintf(stderr, "lfshutdown: %s: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	close(fd);
	return 0;
}
