/* SPDX-License-Identifier: MIT */
/*
 * lfwrite.c - a tiny writer for the integration scripts: sends exact
 * bytes to a file of the view in exact write(2) calls and prints each
 * call's outcome by errno name, so a script can assert the contract's
 * errno table without the shell hiding or retrying anything.
 *
 * usage: lfwrite [--rdwr] [--trunc] [--creat] [--chunk N] [--loop] FILE ITEM...
 *        lfwrite --op OP PATH [ARG]
 *   ITEM: DATA                    one write(2) of DATA, C escapes decoded
 *                                 (\n \t \r \0 \\ \xHH)
 *         --repeat-byte B COUNT   one write(2) of COUNT copies of byte B
 *         -a ITEM                 append ITEM to the previous write's
 *                                 buffer instead of starting a new write
 *   --loop: after a short count, write the rest (as a careful writer
 *   does) until done or an error.
 *   prints write=<count|ERRNO> per write, with --rdwr read=<text> with
 *   everything read back from the same descriptor, then close=<OK|ERRNO>.
 *   --op: mkdir rmdir unlink rename chmod chown symlink link setxattr
 *   removexattr getxattr listxattr truncate utimes mknod creat openw lseek (an lseek to 0 on
 *   a read-write descriptor); prints op=<OK|ERRNO>.
 * Exit status 0 always, but 2 for a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

struct piece {
	char *data;
	size_t len;
};

static const char *err_name(int e)
{
	const char *s = strerrorname_np(e);

	return s ? s : "EUNKNOWN";
}

static int usage(void)
{
	fprintf(stderr, "usage: lfwrite [--rdwr] [--trunc] [--creat] "
			"[--chunk N] [--loop] FILE ITEM...\n"
			"       lfwrite --op OP PATH [ARG]\n");
	return 2;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode C escapes of s into a new buffer; *len gets its length. */
static char *unescape(const char *s, size_t *len)
{
	char *out = malloc(strlen(s) + 1);
	size_t n = 0;

	if (!out)
		return NULL;
	while (*s) {
		if (*s != '\\' || !s[1]) {
			out[n++] = *s++;
			continue;
		}
		s++;
		switch (*s) {
		case 'n':
			out[n++] = '\n';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case '0':
			out[n++] = '\0';
			break;
		case 'x':
			if (hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
				out[n++] = (char)(hexval(s[1]) * 16 +
						  hexval(s[2]));
				s += 2;
				break;
			}
			out[n++] = 'x';
			break;
		default:
			out[n++] = *s;
		}
		s++;
	}
	*len = n;
	return out;
}

static int add(struct piece *p, const char *data, size_t len)
{
	char *t = realloc(p->data, p->len + len + 1);

	if (!t)
		return -1;
	memcpy(t + p->len, data, len);
	p->data = t;
	p->len += len;
	return 0;
}

static int run_op(int argc, char **argv)
{
	const char *op = argv[0], *path = argv[1];
	const char *arg = argc > 2 ? argv[2] : NULL;
	int rc = -1, fd;

	if (strcmp(op, "mkdir") == 0)
		rc = mkdir(path, 0755);
	else if (strcmp(op, "rmdir") == 0)
		rc = rmdir(path);
	else if (strcmp(op, "unlink") == 0)
		rc = unlink(path);
	else if (strcmp(op, "rename") == 0 && arg)
		rc = rename(path, arg);
	else if (strcmp(op, "chmod") == 0)
		rc = chmod(path, arg ? (mode_t)strtoul(arg, NULL, 8) : 0777);
	else if (strcmp(op, "chown") == 0)
		rc = chown(path, arg ? (uid_t)atoi(arg) : 65534,
			   arg ? (gid_t)atoi(arg) : 65534);
	else if (strcmp(op, "symlink") == 0 && arg)
		rc = symlink(arg, path);
	else if (strcmp(op, "link") == 0 && arg)
		rc = link(path, arg);
	else if (strcmp(op, "setxattr") == 0)
		rc = setxattr(path, arg ? arg : "user.lf", "x", 1, 0);
	else if (strcmp(op, "removexattr") == 0)
		rc = removexattr(path, arg ? arg : "user.lf");
	else if (strcmp(op, "getxattr") == 0)
		rc = (int)getxattr(path, arg ? arg : "user.lf", NULL, 0);
	else if (strcmp(op, "listxattr") == 0)
		rc = (int)listxattr(path, NULL, 0) > 0 ? 0 : -1;
	else if (strcmp(op, "truncate") == 0)
		rc = truncate(path, arg ? atol(arg) : 0);
	else if (strcmp(op, "utimes") == 0)
		rc = utimensat(AT_FDCWD, path, NULL, 0);
	else if (strcmp(op, "mknod") == 0)
		rc = mknod(path, S_IFIFO | 0644, 0);
	else if (strcmp(op, "creat") == 0 || strcmp(op, "openw") == 0) {
		fd = open(path,
			  O_WRONLY | (op[0] == 'c' ? O_CREAT | O_EXCL : 0),
			  0644);
		rc = fd < 0 ? -1 : close(fd);
	} else if (strcmp(op, "lseek") == 0) {
		fd = open(path, O_RDWR);
		rc = fd < 0 || lseek(fd, 0, SEEK_SET) < 0 ? -1 : 0;
		if (fd >= 0) {
			int e = errno;

			close(fd);
			errno = e;
		}
	} else
		return usage();
	printf("op=%s\n", rc == 0 ? "OK" : err_name(errno));
	return 0;
}

struct opts {
	int flags;
	size_t chunk;
	int loop;
};

/* Options from argv[a] on; the index of the first non-option, or -1. */
static int parse_opts(int argc, char **argv, int a, struct opts *o)
{
	for (; a < argc; a++) {
		if (strcmp(argv[a], "--rdwr") == 0)
			o->flags = (o->flags & ~O_ACCMODE) | O_RDWR;
		else if (strcmp(argv[a], "--trunc") == 0)
			o->flags |= O_TRUNC;
		else if (strcmp(argv[a], "--creat") == 0)
			o->flags |= O_CREAT;
		else if (strcmp(argv[a], "--loop") == 0)
			o->loop = 1;
		else if (strcmp(argv[a], "--chunk") == 0 && a + 1 < argc)
			o->chunk = strtoul(argv[++a], NULL, 10);
		else if (strcmp(argv[a], "--chunk") == 0)
			return -1;
		else
			break;
	}
	return a;
}

static void write_one(int fd, const struct piece *p, size_t chunk, int loop)
{
	size_t off = 0;

	do {
		size_t n = p->len - off;
		ssize_t w;

		if (chunk && n > chunk)
			n = chunk;
		w = write(fd, p->data + off, n);
		if (w < 0) {
			printf("write=%s\n", err_name(errno));
			return;
		}
		printf("write=%zd\n", w);
		off += (size_t)w;
		if ((size_t)w < n && !loop)
			return; /* a short count ends this item: it is reported */
	} while ((chunk || loop) && off < p->len);
}

int main(int argc, char **argv)
{
	struct piece *items;
	struct opts o = {O_WRONLY, 0, 0};
	size_t nitems = 0, i;
	int a = 1, fd;
	const char *file;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 3 && strcmp(argv[1], "--op") == 0)
		return run_op(argc - 2, argv + 2);
	a = parse_opts(argc, argv, a, &o);
	if (a < 0 || a >= argc)
		return usage();
	file = argv[a++];
	/* Options may also follow FILE, before the first item. */
	a = parse_opts(argc, argv, a, &o);
	if (a < 0)
		return usage();
	items = calloc((size_t)argc, sizeof(*items));
	if (!items)
		return 1;
	while (a < argc) {
		int append = strcmp(argv[a], "-a") == 0;
		struct piece *p;

		if (append && ++a >= argc)
			return usage();
		if (!append || nitems == 0)
			nitems++;
		p = &items[nitems - 1];
		if (strcmp(argv[a], "--repeat-byte") == 0 && a + 2 < argc) {
			size_t bl, count = strtoul(argv[a + 2], NULL, 10);
			char *b = unescape(argv[a + 1], &bl);
			char *run = malloc(count ? count : 1);

			if (!b || !run || bl != 1)
				return usage();
			memset(run, b[0], count);
			if (add(p, run, count))
				return 1;
			free(run);
			free(b);
			a += 3;
		} else {
			size_t l;
			char *d = unescape(argv[a], &l);

			if (!d || add(p, d, l))
				return 1;
			free(d);
			a++;
		}
	}
	fd = open(file, o.flags | O_CLOEXEC, 0644);
	if (fd < 0) {
		printf("open=%s\n", err_name(errno));
		return 0;
	}
	for (i = 0; i < nitems; i++)
		write_one(fd, &items[i], o.chunk, o.loop);
	if ((o.flags & O_ACCMODE) == O_RDWR) {
		char buf[65536];
		ssize_t n;

		fputs("read=", stdout);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			fwrite(buf, 1, (size_t)n, stdout);
		if (n < 0)
			printf("<%s>", err_name(errno));
		putchar('\n');
	}
	printf("close=%s\n", close(fd) == 0 ? "OK" : err_name(errno));
	for (i = 0; i < nitems; i++)
		free(items[i].data);
	free(items);
	return 0;
}
