/* SPDX-License-Identifier: MIT */
/*
 * ledgercall.c - the target's client: one tool call in, the reply out,
 * the exit status by decision (0 pass, 3 mock, 4 block, 1 error).  It
 * uses only libc, so it can be built static and bound into any image.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lfclient.h"
#include "optarg.h"

static struct lfc lc;

static void usage(void)
{
	fprintf(stderr,
		"usage: ledgercall [--dir DIR] --tool NAME [--args JSON|-] [--call-id ID]\n"
		"       ledgercall [--dir DIR] result --call-id ID --returned JSON|- [--error] [--not-executed]\n"
		"       ledgercall [--dir DIR] register\n"
		"DIR defaults to $LEDGERFS_DIR, else /mediator. See ledgercall(1).\n");
}

/*
 * JSON as one line: a raw newline or carriage return between tokens is
 * white space, so it becomes a space, and a pretty-printed value, or one
 * `echo` ended, makes one line.  One inside a string (invalid JSON) is
 * left for the daemon to refuse.
 * NULL when out of memory (said).
 */
static const char *one_line(const char *json)
{
	static char *copy;
	bool in_str = false;
	char *p;

	if (!strpbrk(json, "\r\n"))
		return json;
	free(copy);
	copy = strdup(json);
	if (!copy) {
		fprintf(stderr, "ledgercall: out of memory\n");
		return NULL;
	}
	/* Inside a string one stays, and the daemon refuses the line. */
	for (p = copy; *p; p++) {
		if (in_str && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			in_str = !in_str;
		else if (!in_str && (*p == '\r' || *p == '\n'))
			*p = ' ';
	}
	return copy;
}

/* The most a JSON value read from standard input ("-") may hold. */
#define STDIN_JSON_MAX (64u * 1024 * 1024)

/*
 * The value of --args or --returned: the word itself, or for "-" all of
 * standard input (a value past the 128 KiB a word may hold).  NULL, with
 * the reason printed, when it cannot be read or is too long.
 */
static const char *json_word(const char *word)
{
	static char *buf;
	size_t len = 0, cap = 0;

	if (strcmp(word, "-") != 0)
		return one_line(word);
	for (;;) {
		size_t n;

		if (len + 1 >= cap) {
			char *t;

			cap = cap ? cap * 2 : 65536;
			if (cap > STDIN_JSON_MAX + 1 ||
			    !(t = realloc(buf, cap))) {
				fprintf(stderr,
					"ledgercall: standard input: "
					"over 64 MiB or out of memory\n");
				return NULL;
			}
			buf = t;
		}
		n = fread(buf + len, 1, cap - 1 - len, stdin);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(stdin)) {
		fprintf(stderr, "ledgercall: standard input: %s\n",
			strerror(errno));
		return NULL;
	}
	buf[len] = '\0';
	if (strlen(buf) != len) {
		fprintf(stderr,
			"ledgercall: standard input holds a NUL byte\n");
		return NULL;
	}
	return one_line(buf);
}

/* Say why the last write was refused: the view keeps it in `error`. */
static void print_reason(const char *what, int err)
{
	char buf[LFC_REASON_MAX];

	if (*lfc_reason(&lc, err, buf, sizeof(buf)))
		fprintf(stderr, "ledgercall: %s: %s: %s\n", what, strerror(err),
			buf);
	else
		fprintf(stderr, "ledgercall: %s: %s\n", what, strerror(err));
}

static int do_call(const char *tool, const char *args, const char *id)
{
	char idbuf[64], *reply = NULL;
	size_t len;
	int err, rc = 1;

	if (!id)
		id = lfc_make_id(idbuf, sizeof(idbuf));
	err = lfc_call(&lc, id, tool, args, &reply, &len);
	if (err < 0) {
		fprintf(stderr, "ledgercall: tool name or call id too long\n");
		return 1;
	}
	if (err == EPROTO) {
		fprintf(stderr, "ledgercall: no reply\n");
		return 1;
	}
	if (err) {
		print_reason("request", err);
		return 1;
	}
	fputs(reply, stdout);
	switch (lfc_reply_mode(reply)) {
	case LFC_MODE_PASS:
		/* The host ran it: the reply holds its result, as for mock. */
		rc = lfc_reply_host_executed(reply) ? 3 : 0;
		break;
	case LFC_MODE_MOCK:
		rc = 3;
		break;
	case LFC_MODE_BLOCK:
		rc = 4;
		break;
	case LFC_MODE_UNKNOWN:
		rc = 1;
		break;
	}
	free(reply);
	return rc;
}

static int do_result(int argc, char **argv)
{
	const char *id = NULL, *returned = NULL;
	int is_error = 0, executed = 1, i, err;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--call-id", &id) ||
		    opt_value(argc, argv, &i, "--returned", &returned))
			continue;
		if (strcmp(argv[i], "--error") == 0)
			is_error = 1;
		else if (strcmp(argv[i], "--not-executed") == 0)
			executed = 0;
		else
			return usage(), 1;
	}
	if (!id || !returned)
		return usage(), 1;
	if (!(returned = json_word(returned)))
		return 1;
	err = lfc_result(&lc, id, returned, is_error, executed);
	if (err < 0)
		return usage(), 1;
	if (err) {
		print_reason("result", err);
		return 1;
	}
	return 0;
}

static int do_register(void)
{
	int err = lfc_register(&lc);

	if (err < 0) {
		fprintf(stderr,
			"ledgercall: register needs LEDGERFS_CASE and LEDGERFS_TOKEN\n");
		return 1;
	}
	if (err) {
		print_reason("register", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *tool = NULL, *args = "{}", *id = NULL, *dir = NULL;
	int i = 1;

	/* --dir may come before the command word (result, register). */
	if (i < argc && opt_value(argc, argv, &i, "--dir", &dir))
		i++;
	if (lfc_init(&lc, dir)) {
		fprintf(stderr, "ledgercall: folder name too long\n");
		return 1;
	}
	if (i < argc && strcmp(argv[i], "result") == 0)
		return do_result(argc - i, argv + i);
	if (i < argc && strcmp(argv[i], "register") == 0 && i + 1 == argc)
		return do_register();
	for (; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--tool", &tool) ||
		    opt_value(argc, argv, &i, "--args", &args) ||
		    opt_value(argc, argv, &i, "--call-id", &id) ||
		    opt_value(argc, argv, &i, "--dir", &dir))
			continue;
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			return usage(), 0;
		else
			return usage(), 1;
	}
	if (!tool)
		return usage(), 1;
	if (lfc_init(&lc, dir)) {
		fprintf(stderr, "ledgercall: folder name too long\n");
		return 1;
	}
	if (!(args = json_word(args)))
		return 1;
	return do_call(tool, args, id);
}
