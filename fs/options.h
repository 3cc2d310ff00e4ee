/* SPDX-License-Identifier: MIT */
/*
 * options.h - the daemon's command line, read from a table: every option
 * in three forms (--opt=VALUE, --opt VALUE, -o opt=VALUE) so that a
 * shell, mount(8), mount.fuse3 and an /etc/fstab line all reach it, and
 * every value checked before anything is created (ledgerfs(8) OPTIONS).
 */
#ifndef LF_FS_OPTIONS_H
#define LF_FS_OPTIONS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <fuse_log.h>
#include <fuse_opt.h>

enum lfs_opt_type {
	LFS_OPT_PATH,	  /* char *: a non-empty path */
	LFS_OPT_COUNT,	  /* uint64_t: decimal digits */
	LFS_OPT_SIZE,	  /* uint64_t: units_size (N, NK, NMiB, ...) */
	LFS_OPT_DURATION, /* uint64_t milliseconds: units_duration_ms */
	LFS_OPT_WORD,	  /* char *: one of the '|'-separated words */
	LFS_OPT_NAME,	  /* char *: a non-empty word without '/' or ',' */
};

/* One daemon option; off is where its value goes in the caller's struct. */
struct lfs_opt {
	const char *name; /* without the leading "--" */
	enum lfs_opt_type type;
	size_t off;
	const char *words; /* LFS_OPT_WORD: "group|file" */
	const char *arg;   /* for the usage text: "DIR", "BYTES" */
	const char *help;  /* one line for the usage text */
};

/* What is left once the table's options are taken out. */
struct lfs_cmdline {
	struct fuse_args fuse; /* argv[0], -f, -d, -s, -o for libfuse */
	const char *pos[2];    /* [SOURCE] MOUNTPOINT, as given */
	int npos;
	int help, version;
};

/*
 * Parse argv against tab (ended by a NULL name) into dst and out.
 * Unknown --options, missing or malformed values and a third positional
 * are refused with one line on stderr.  0, or 2 (the exit status).
 */
int lfs_opts_parse(const struct lfs_opt *tab, void *dst, int argc, char **argv,
		   struct lfs_cmdline *out);

/* The table's lines of the usage text. */
void lfs_opts_usage(FILE *f, const struct lfs_opt *tab);

/* Free what lfs_opts_parse allocated in dst and out. */
void lfs_opts_free(const struct lfs_opt *tab, void *dst,
		   struct lfs_cmdline *out);

/*
 * libfuse's log while it judges its options (fuse_set_log_func), kept
 * so that the refusal is one line of ours (ledgerfs(8) OPTIONS).
 */
void lfs_libfuse_log_keep(enum fuse_log_level level, const char *fmt,
			  va_list ap);
const char *lfs_libfuse_said(void);

/* Do absolute paths a and b name one folder, "//", "/./", "/" aside? */
bool lfs_same_folder_path(const char *a, const char *b);

#endif
