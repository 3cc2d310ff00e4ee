/* SPDX-License-Identifier: MIT */
/*
 * sealpath.c - the path-sealing auditor's command line: options, then the
 * verdict of seal_audit as text or as one JSON document (written by hand:
 * sealpath links against libc alone).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "seal.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"usage: sealpath [--path P] [--root DIR] [--json]\n"
		"  --path P    colon-separated PATH to audit (default "
		"%s)\n"
		"  --root DIR  audit the image unpacked at DIR (links "
		"resolve inside it)\n"
		"  --json      print the verdict as one JSON document\n",
		SEAL_DEFAULT_PATH);
}

/*
 * A JSON string.  Valid UTF-8 passes through; any other byte becomes
 * U+FFFD, since JSON text must be UTF-8 and file names need not be.
 */
static void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int need, i;
	unsigned cp, min;

	fputc('"', out);
	while (*s) {
		if (*s == '"' || *s == '\\') {
			fprintf(out, "\\%c", *s++);
			continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(out, "\\u%04x", *s++);
			continue;
		}
		if (*s < 0x80) {
			fputc(*s++, out);
			continue;
		}
		if ((*s & 0xe0) == 0xc0) {
			need = 1, cp = *s & 0x1f, min = 0x80;
		} else if ((*s & 0xf0) == 0xe0) {
			need = 2, cp = *s & 0x0f, min = 0x800;
		} else if ((*s & 0xf8) == 0xf0) {
			need = 3, cp = *s & 0x07, min = 0x10000;
		} else {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		for (i = 1; i <= need; i++) {
			if ((s[i] & 0xc0) != 0x80)
				break;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if (i <= need || cp < min || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff)) {
			fputs("\\ufffd", out);
			s++;
			continue;
		}
		fwrite(s, 1, (size_t)need + 1, out);
		s += need + 1;
	}
	fputc('"', out);
}

static void print_json(FILE *out, const char *path, const char *root,
		       const struct seal_report *rep)
{
	static const char *const verdicts[] = {"sealed", "unsealed", "error"};
	char problem[64];
	size_t i;

	fprintf(out, "{\"verdict\":\"%s\",\"path\":", verdicts[rep->verdict]);
	json_str(out, path);
	fputs(",\"root\":", out);
	json_str(out, root);
	fputs(",\"findings\":[", out);
	for (i = 0; i < rep->n_findings; i++) {
		seal_problem_text(&rep->findings[i], problem, sizeof(problem));
		fputs(i ? ",{\"path\":" : "{\"path\":", out);
		json_str(out, rep->findings[i].path);
		fputs(",\"problem\":", out);
		json_str(out, problem);
		fputc('}', out);
	}
	fputc(']', out);
	if (rep->dropped)
		fprintf(out, ",\"findings_not_listed\":%zu", rep->dropped);
	fputs(",\"error\":", out);
	if (rep->verdict == SEAL_ERROR)
		json_str(out, rep->error);
	else
		fputs("null", out);
	fputs("}\n", out);
}

static void print_text(FILE *out, const struct seal_report *rep)
{
	char line[4 * SEAL_PATH_MAX + 64];
	size_t i;

	if (rep->verdict == SEAL_ERROR) {
		fprintf(stderr, "sealpath: %s\n", rep->error);
		return;
	}
	if (rep->verdict == SEAL_SEALED) {
		fputs("sealed\n", out);
		return;
	}
	for (i = 0; i < rep->n_findings; i++) {
		seal_finding_line(&rep->findings[i], line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	if (rep->dropped)
		fprintf(stderr, "sealpath: %zu more findings not listed\n",
			rep->dropped);
}

/*
 * A usage error: its reason on standard error with the usage, and with
 * --json anywhere on the line the error document too (sealpath(8)).
 * Returns the exit status, 2.
 */
static int usage_error(bool json, const char *path, const char *root,
		       const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int usage_error(bool json, const char *path, const char *root,
		       const char *fmt, ...)
{
	struct seal_report rep = {.verdict = SEAL_ERROR};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rep.error, sizeof(rep.error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sealpath: %s\n", rep.error);
	usage(stderr);
	if (json)
		print_json(stdout, path, root, &rep);
	return SEAL_ERROR;
}

/* Is --json on the command line (before any "--")? */
static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"path", required_argument, NULL, 'p'},
		{"root", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *path = SEAL_DEFAULT_PATH, *root = "/";
	struct seal_report rep;
	bool json = wants_json(argc, argv);
	int opt, verdict;

	opterr = 0; /* the reason is ours to print (usage_error) */
	while ((opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			path = optarg;
			break;
		case 'r':
			root = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			return usage_error(json, path, root,
					   "option '%s' needs a value",
					   argv[optind - 1]);
		default:
			return usage_error(json, path, root,
					   "unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error(json, path, root, "unexpected argument '%s'",
				   argv[optind]);
	if (!*root)
		return usage_error(json, path, root,
				   "--root: empty folder name");
	verdict = seal_audit(path, root, &rep);
	if (json)
		print_json(stdout, path, root, &rep);
	else
		print_text(stdout, &rep);
	if (json && verdict == SEAL_ERROR)
		fprintf(stderr, "sealpath: %s\n", rep.error);
	seal_report_free(&rep);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "sealpath: cannot write the verdict\n");
		return SEAL_ERROR;
	}
	return verdict;
}
