/* SPDX-License-Identifier: MIT */
/*
 * options.c - the daemon's command line (options.h).  One table gives
 * each option its name, kind and place; every form of it lands in the
 * same check, so --key FILE, --key=FILE and -o key=FILE cannot disagree.
 * What is not ours (-f, -d, -s, -o allow_other, ...) is left for libfuse,
 * which the daemon asks to judge before it creates anything.
 */
#include "options.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

static const struct lfs_opt *opt_find(const struct lfs_opt *tab,
				      const char *name, size_t len)
{
	for (; tab->name; tab++)
		if (strlen(tab->name) == len && !strncmp(tab->name, name, len))
			return tab;
	return NULL;
}

static int word_allowed(const char *words, const char *v)
{
	size_t n = strlen(v);
	const char *w = words, *bar;

	while (w && *w) {
		bar = strchr(w, '|');
		if ((size_t)((bar ? bar : w + strlen(w)) - w) == n &&
		    !strncmp(w, v, n))
			return 1;
		w = bar ? bar + 1 : NULL;
	}
	return 0;
}

/* Check v for o and store it in dst.  0, or 2 after one line on stderr. */
static int opt_set(const struct lfs_opt *o, void *dst, const char *v)
{
	char **sp = (char **)((char *)dst + o->off);
	uint64_t *np = (uint64_t *)((char *)dst + o->off);
	struct lf_why why = {{0}};
	enum lf_err e = LF_OK;
	const char *p;

	switch (o->type) {
	case LFS_OPT_PATH:
	case LFS_OPT_NAME:
		if (!*v) {
			fprintf(stderr, "ledgerfs: --%s wants a %s, not ''\n",
				o->name, o->arg);
			return 2;
		}
		if (o->type == LFS_OPT_NAME && strpbrk(v, "/,")) {
			fprintf(stderr, "ledgerfs: --%s wants a %s, not '%s'\n",
				o->name, o->arg, v);
			return 2;
		}
		break;
	case LFS_OPT_WORD:
		if (!word_allowed(o->words, v)) {
			fprintf(stderr, "ledgerfs: --%s must be %s, not '%s'\n",
				o->name, o->words, v);
			return 2;
		}
		break;
	case LFS_OPT_COUNT:
		for (p = v; *p >= '0' && *p <= '9'; p++)
			;
		if (!*v || *p || p - v > 18) {
			fprintf(stderr,
				"ledgerfs: --%s wants a whole number, not '%s'\n",
				o->name, v);
			return 2;
		}
		*np = strtoull(v, NULL, 10);
		return 0;
	case LFS_OPT_SIZE:
		e = units_size(v, np, &why);
		break;
	case LFS_OPT_DURATION:
		e = units_duration_ms(v, np, &why);
		break;
	}
	if (e != LF_OK) {
		fprintf(stderr, "ledgerfs: --%s: %s\n", o->name, why.msg);
		return 2;
	}
	if (o->type == LFS_OPT_SIZE || o->type == LFS_OPT_DURATION)
		return 0;
	free(*sp);
	*sp = strdup(v);
	if (!*sp) {
		fprintf(stderr, "ledgerfs: out of memory\n");
		return 2;
	}
	return 0;
}

/* Append one item to the comma-separated libfuse -o list. */
static int fuse_item_add(char **list, const char *item, size_t len)
{
	size_t have = *list ? strlen(*list) : 0;
	char *t = realloc(*list, have + len + 2);

	if (!t)
		return -1;
	if (have)
		t[have++] = ',';
	memcpy(t + have, item, len);
	t[have + len] = '\0';
	*list = t;
	return 0;
}

/*
 * One -o argument: "a=1,b,c=2".  Items naming a table option are ours;
 * the rest go to libfuse.  A backslash keeps a comma in a value, as
 * libfuse's own -o parser does.
 */
static int opt_list(const struct lfs_opt *tab, void *dst, const char *list,
		    char **fuse_list)
{
	char *item = malloc(strlen(list) + 1);
	const char *s = list;
	int rc = 0;

	if (!item)
		return 2;
	while (rc == 0 && *s) {
		const struct lfs_opt *o;
		size_t n = 0;
		char *eq;

		for (; *s && *s != ','; s++) {
			if (*s == '\\' && s[1])
				s++;
			item[n++] = *s;
		}
		item[n] = '\0';
		if (*s == ',')
			s++;
		if (!n)
			continue;
		eq = strchr(item, '=');
		o = opt_find(tab, item, eq ? (size_t)(eq - item) : n);
		if (o && !eq) {
			fprintf(stderr,
				"ledgerfs: -o %s wants a value (%s=%s)\n", item,
				item, o->arg);
			rc = 2;
		} else if (o) {
			rc = opt_set(o, dst, eq + 1);
		} else if (fuse_item_add(fuse_list, item, n) < 0) {
			rc = 2;
		}
	}
	free(item);
	return rc;
}

int lfs_opts_parse(const struct lfs_opt *tab, void *dst, int argc, char **argv,
		   struct lfs_cmdline *out)
{
	char *fuse_list = NULL, *dash_o = NULL;
	int i, rc = 0, only_pos = 0;

	memset(out, 0, sizeof(*out));
	if (fuse_opt_add_arg(&out->fuse, argc > 0 ? argv[0] : "ledgerfs"))
		return 2;
	for (i = 1; rc == 0 && i < argc; i++) {
		const char *a = argv[i];

		if (only_pos || a[0] != '-' || !a[1]) {
			if (out->npos == 2) {
				fprintf(stderr,
					"ledgerfs: one SOURCE and one MOUNTPOINT at most, not also '%s'\n",
					a);
				rc = 2;
			} else {
				out->pos[out->npos++] = a;
			}
		} else if (!strcmp(a, "--")) {
			only_pos = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			out->help = 1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			out->version = 1;
		} else if (!strncmp(a, "-o", 2)) {
			const char *list = a[2] ? a + 2 : argv[i + 1];

			if (!list) {
				fprintf(stderr,
					"ledgerfs: -o wants OPTION[,OPTION...]\n");
				rc = 2;
				break;
			}
			if (!a[2])
				i++;
			rc = opt_list(tab, dst, list, &fuse_list);
		} else if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			const struct lfs_opt *o = opt_find(
				tab, a + 2,
				eq ? (size_t)(eq - a - 2) : strlen(a + 2));

			if (!o) {
				fprintf(stderr,
					"ledgerfs: unknown option '%s' (see ledgerfs --help)\n",
					a);
				rc = 2;
			} else if (eq) {
				rc = opt_set(o, dst, eq + 1);
			} else if (i + 1 < argc) {
				rc = opt_set(o, dst, argv[++i]);
			} else {
				fprintf(stderr, "ledgerfs: %s wants a %s\n", a,
					o->arg);
				rc = 2;
			}
		} else if (fuse_opt_add_arg(&out->fuse, a)) {
			rc = 2; /* -f, -d, -s: libfuse's own */
		}
	}
	if (rc == 0 && fuse_list) {
		if (asprintf(&dash_o, "-o%s", fuse_list) < 0 ||
		    fuse_opt_add_arg(&out->fuse, dash_o))
			rc = 2;
	}
	free(dash_o);
	free(fuse_list);
	return rc;
}

void lfs_opts_usage(FILE *f, const struct lfs_opt *tab)
{
	char left[64];

	for (; tab->name; tab++) {
		snprintf(left, sizeof(left), "--%s=%s", tab->name, tab->arg);
		fprintf(f, "  %-22s %s\n", left, tab->help);
	}
}

void lfs_opts_free(const struct lfs_opt *tab, void *dst,
		   struct lfs_cmdline *out)
{
	for (; tab->name; tab++)
		if (tab->type == LFS_OPT_PATH || tab->type == LFS_OPT_WORD ||
		    tab->type == LFS_OPT_NAME) {
			char **sp = (char **)((char *)dst + tab->off);

			free(*sp);
			*sp = NULL;
		}
	fuse_opt_free_args(&out->fuse);
}

/* What libfuse logged while it judged the options, as one line. */
static char libfuse_said[300];

void lfs_libfuse_log_keep(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	size_t n = strlen(libfuse_said), i;

	(void)level;
	vsnprintf(libfuse_said + n, sizeof(libfuse_said) - n, fmt, ap);
	/* Its pieces may end in newlines: one line, blanks for them. */
	for (i = n; libfuse_said[i]; i++)
		if (libfuse_said[i] == '\n')
			libfuse_said[i] = ' ';
}

/* The line libfuse said, "fuse: " and trailing blanks taken off. */
const char *lfs_libfuse_said(void)
{
	size_t n = strlen(libfuse_said);
	const char *p = libfuse_said;

	while (n && libfuse_said[n - 1] == ' ')
		libfuse_said[--n] = '\0';
	if (!strncmp(p, "fuse: ", 6))
		p += 6;
	return *p ? p : "(no reason given)";
}

/*
 * Do a and b (absolute) name one folder as written, whatever their "//",
 * "/./" and trailing slashes?  (No ".." resolution: a link may sit there.)
 */
bool lfs_same_folder_path(const char *a, const char *b)
{
	for (;;) {
		while (*a == '/' &&
		       (a[1] == '/' || (a[1] == '.' && (a[2] == '/' || !a[2]))))
			a += a[1] == '/' ? 1 : 2;
		while (*b == '/' &&
		       (b[1] == '/' || (b[1] == '.' && (b[2] == '/' || !b[2]))))
			b += b[1] == '/' ? 1 : 2;
		if ((*a == '/' && !a[1] && !*b) || (*b == '/' && !b[1] && !*a))
			return true; /* one trailing slash more */
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++;
		b++;
	}
}
