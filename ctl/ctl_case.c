/* SPDX-License-Identifier: MIT */
/*
 * ctl_case.c - ledgerctl's commands on a mounted view: open, wait, turn,
 * close, fail, status, ls.  They use the view's files exactly as a shell
 * user would (mkdir, write, read), so they show what the files promise.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cassette.h"
#include "chain.h"
#include "ctl.h"
#include "mocks.h"
#include "optarg.h"
#include "policy.h"
#include "pyval.h"
#include "request.h"
#include "tools.h"
#include "units.h"

#define CTL_READ_MAX (64u * 1024 * 1024)

/* Read a whole file of the view (bounded). malloc'd, NUL-terminated. */
static char *ctl_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL, *t;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return NULL;
	for (;;) {
		ssize_t n;

		if (len + 65536 + 1 > cap) {
			cap = cap ? cap * 2 : 65536 * 2;
			if (cap > CTL_READ_MAX || !(t = realloc(buf, cap))) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			buf = t;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		len += (size_t)n;
	}
	close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Write all of text to path; the close's errno counts too. 0 or errno. */
static int ctl_write(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), err = 0;
	size_t done = 0;

	if (fd < 0)
		return errno;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

static json_t *ctl_status(const char *mount, const char *name)
{
	char path[4096], *text;
	json_t *st;

	snprintf(path, sizeof(path), "%s/cases/%s/status", mount, name);
	text = ctl_read(path);
	if (!text)
		return NULL;
	st = json_loads(text, 0, NULL);
	free(text);
	return st;
}

/*
 * Read a policy or mocks file, inline its cassettes, check it here (so
 * the error names the file), and return it as JSON text for the view.
 */
static char *ctl_prepare_doc(const char *file, const char *dir, int is_mocks)
{
	struct lf_why why = {{0}};
	json_t *inl = cassette_load_file(file, dir, &why);
	struct policy *p = NULL;
	struct mocks *m = NULL;
	char *text = NULL;

	/* An empty or false document is an empty one, as ASSERT loads it. */
	if (inl && !json_is_object(inl) && !pyval_truthy(inl)) {
		json_decref(inl);
		inl = json_object();
	}
	if (inl && (is_mocks ? mocks_load(inl, &m, &why)
			     : policy_load(inl, &p, &why)) == LF_OK)
		text = json_dumps(inl, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text) {
		char where[4200];

		/* FILE:LINE: the reason names the rule and key. */
		cassette_where(file, why.msg, where, sizeof(where));
		fprintf(stderr, "ledgerctl: %s: %s\n", where, why.msg);
	}
	policy_free(p);
	mocks_free(m);
	json_decref(inl);
	return text;
}

/*
 * Why the view refused a policy or mocks document that passed the checks
 * here (ledgerfs(8) THE VIEW), in words rather than strerror's.
 */
static const char *ctl_doc_refusal(int err)
{
	switch (err) {
	case EFBIG:
		return "larger than the view takes (16 MiB)";
	case EBUSY:
		return "the case is registered: its policy and mocks are frozen";
	case EACCES:
	case EPERM:
		return "not allowed to write the case's documents";
	case ENOENT:
		return "the case is gone";
	case EIO:
		return "the daemon could not store it (see its log)";
	default:
		return "the daemon refused it (its log says why)";
	}
}

/*
 * Read a tools file (MCP's tools/list shape) and check it here, so the
 * error names the file; the view checks it again.
 */
static char *ctl_prepare_tools(const char *file)
{
	struct lf_why why = {{0}};
	char *text = ctl_read(file);

	if (!text) {
		fprintf(stderr, "ledgerctl: %s: %s\n", file, strerror(errno));
		return NULL;
	}
	if (tools_check(text, strlen(text), &why) != LF_OK) {
		char where[4200];

		/* FILE:LINE: reason, as for the policy (ledgerctl(1) open). */
		cassette_where(file, why.msg, where, sizeof(where));
		fprintf(stderr, "ledgerctl: %s: %s\n", where, why.msg);
		free(text);
		return NULL;
	}
	return text;
}

/*
 * --seal-key-out: created before the case (0600, never over a file), so
 * a refusal leaves no case whose K0 nobody holds.  fd, or -1 (said).
 */
static int ctl_seal_out_create(const char *path)
{
	int fd =
		open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);

	if (fd < 0) {
		fprintf(stderr, "ledgerctl: --seal-key-out %s: %s%s\n", path,
			strerror(errno),
			errno == EEXIST ? " (never overwritten)" : "");
		return -1;
	}
	if (fchmod(fd, 0600) < 0) {
		fprintf(stderr, "ledgerctl: --seal-key-out %s: %s\n", path,
			strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
}

/*
 * --env-file: opened before the case, so a file that cannot be written
 * leaves no case behind; mode 0600 whether it was there or not, since it
 * will hold the token.  fd, or -1 (said); *made when it is new.
 */
static int ctl_env_out_open(const char *path, bool *made)
{
	int fd =
		open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	struct stat st;

	*made = fd >= 0;
	/* Not blocking on a FIFO; and nothing but a regular file is ever
	 * changed (a device's mode is the whole machine's). */
	if (fd < 0 && errno == EEXIST)
		fd = lstat(path, &st) == 0 && !S_ISREG(st.st_mode)
			     ? -2
			     : open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
						  O_CLOEXEC);
	if (fd == -2 ||
	    (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))) {
		if (fd >= 0)
			close(fd);
		fprintf(stderr,
			"ledgerctl: --env-file %s: not a regular file\n", path);
		return -1;
	}
	if (fd >= 0 && fchmod(fd, 0600) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fprintf(stderr, "ledgerctl: --env-file %s: %s\n", path,
			strerror(errno));
		if (*made)
			unlink(path);
	}
	return fd;
}

/*
 * A case name as the view takes it (ledgerctl(1)): every command that
 * names a case checks it, so no name reaches outside cases/ ("..", "/").
 * Says why on standard error when it is not one.
 */
static bool ctl_case_name_ok(const char *name)
{
	if (request_valid_id(name, strlen(name)))
		return true;
	fprintf(stderr,
		"ledgerctl: bad case name '%s': 1-128 characters of [A-Za-z0-9._:-]\n",
		name);
	return false;
}
/*
 * Take K0 from the view's seal_key (readable once) into fd as its 32
 * raw bytes, flushed (ledgerfs-ledger(5) SEALS).  0, or -1 (said).
 */
static int ctl_seal_out_write(const char *mount, const char *name, int fd,
			      const char *out)
{
	unsigned char k0[CHAIN_KEY_BYTES];
	char path[4096], *hex;
	int i, rc = -1;

	snprintf(path, sizeof(path), "%s/cases/%s/seal_key", mount, name);
	hex = ctl_read(path);
	if (!hex || strlen(hex) < 2 * CHAIN_KEY_BYTES) {
		fprintf(stderr, "ledgerctl: cannot read %s: %s\n", path,
			hex ? "short" : strerror(errno));
		goto out;
	}
	for (i = 0; i < CHAIN_KEY_BYTES; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
			fprintf(stderr, "ledgerctl: %s: not hex\n", path);
			goto out;
		}
		k0[i] = (unsigned char)v;
	}
	if (write(fd, k0, sizeof(k0)) != (ssize_t)sizeof(k0) || fsync(fd) < 0) {
		fprintf(stderr, "ledgerctl: --seal-key-out %s: %s\n", out,
			strerror(errno));
		goto out;
	}
	rc = 0;
out:
	explicit_bzero(k0, sizeof(k0));
	if (hex) {
		explicit_bzero(hex, strlen(hex));
		free(hex);
	}
	return rc;
}

static int ctl_open(const char *mount, int argc, char **argv)
{
	const char *name = NULL, *policy = NULL, *mocks = NULL, *envf = NULL;
	const char *cassettes = NULL, *tools = NULL, *seal_out = NULL;
	int seal_fd = -1, env_fd = -1;
	bool env_made = false;
	char path[4096], *ptext = NULL, *mtext = NULL, *token = NULL, *pdir;
	char *ttext = NULL;
	FILE *out = stdout;
	int i, err, rc = 1;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--policy", &policy) ||
		    opt_value(argc, argv, &i, "--mocks", &mocks) ||
		    opt_value(argc, argv, &i, "--env-file", &envf) ||
		    opt_value(argc, argv, &i, "--cassettes", &cassettes) ||
		    opt_value(argc, argv, &i, "--tools", &tools) ||
		    opt_value(argc, argv, &i, "--seal-key-out", &seal_out))
			continue;
		if (!name && argv[i][0] != '-')
			name = argv[i];
		else
			goto usage;
	}
	if (!name || !policy)
		goto usage;
	if (!ctl_case_name_ok(name))
		return 2;
	/* The policy's recordings: --cassettes, else the mocks' folder. */
	pdir = cassette_policy_dir(cassettes, mocks);
	ptext = ctl_prepare_doc(policy, pdir, 0);
	free(pdir);
	if (!ptext)
		goto out;
	if (mocks && !(mtext = ctl_prepare_doc(mocks, cassettes, 1)))
		goto out;
	if (tools && !(ttext = ctl_prepare_tools(tools)))
		goto out;
	if (seal_out && (seal_fd = ctl_seal_out_create(seal_out)) < 0)
		goto out;
	if (envf && (env_fd = ctl_env_out_open(envf, &env_made)) < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/cases/%s", mount, name);
	if (mkdir(path, 0700) < 0) {
		if (errno == EEXIST)
			fprintf(stderr, "ledgerctl: open %s: the case exists\n",
				name);
		else
			fprintf(stderr, "ledgerctl: open %s: %s\n", path,
				strerror(errno));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/policy", mount, name);
	if ((err = ctl_write(path, ptext, strlen(ptext)))) {
		fprintf(stderr, "ledgerctl: %s: refused: %s\n", policy,
			ctl_doc_refusal(err));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/mocks", mount, name);
	if (mtext && (err = ctl_write(path, mtext, strlen(mtext)))) {
		fprintf(stderr, "ledgerctl: %s: refused: %s\n", mocks,
			ctl_doc_refusal(err));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/tools", mount, name);
	if (ttext && (err = ctl_write(path, ttext, strlen(ttext)))) {
		fprintf(stderr, "ledgerctl: %s: refused: %s\n", tools,
			ctl_doc_refusal(err));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/cases/%s/token", mount, name);
	token = ctl_read(path);
	if (!token || strlen(token) < CHAIN_HEX_LEN) {
		fprintf(stderr, "ledgerctl: cannot read %s\n", path);
		goto out;
	}
	token[CHAIN_HEX_LEN] = '\0';
	if (seal_fd >= 0) {
		if (ctl_seal_out_write(mount, name, seal_fd, seal_out) < 0)
			goto out;
		if (close(seal_fd) < 0) {
			seal_fd = -1;
			fprintf(stderr, "ledgerctl: --seal-key-out %s: %s\n",
				seal_out, strerror(errno));
			goto out;
		}
		seal_fd = -1;
		seal_out = NULL; /* written: kept */
	}
	if (env_fd >= 0) {
		out = ftruncate(env_fd, 0) == 0 ? fdopen(env_fd, "w") : NULL;
		if (!out) {
			fprintf(stderr, "ledgerctl: --env-file %s: %s\n", envf,
				strerror(errno));
			out = stdout;
			goto out;
		}
		env_fd = -1; /* out's now */
	}
	fprintf(out,
		"LEDGERFS_CASE=%s\nLEDGERFS_TOKEN=%s\nLEDGERFS_DIR=/mediator\n",
		name, token);
	rc = (out != stdout ? fclose(out) : fflush(out)) ? 1 : 0;
out:
	/* A handout file left without its key would only mislead. */
	if (seal_fd >= 0) {
		close(seal_fd);
		unlink(seal_out);
	}
	if (env_fd >= 0) {
		close(env_fd);
		if (env_made)
			unlink(envf);
	}
	free(ptext);
	free(mtext);
	free(ttext);
	free(token);
	return rc;
usage:
	fprintf(stderr,
		"usage: ledgerctl open CASE --policy FILE [--mocks FILE] [--cassettes DIR] [--tools FILE] [--env-file OUT] [--seal-key-out FILE]\n");
	return 2;
}

static int ctl_wait(const char *mount, int argc, char **argv)
{
	uint64_t timeout_ms = 30000, waited_ms = 0;
	const char *name = NULL, *tv = NULL;
	struct lf_why why = {{0}};
	char path[4096];
	int i, err;

	for (i = 1; i < argc; i++) {
		if (opt_value(argc, argv, &i, "--timeout", &tv))
			continue;
		if (!name && argv[i][0] != '-')
			name = argv[i];
		else
			name = NULL, i = argc;
	}
	if (!name) {
		fprintf(stderr,
			"usage: ledgerctl wait CASE [--timeout DURATION]\n");
		return 2;
	}
	if (!ctl_case_name_ok(name))
		return 2;
	/* One grammar for durations (ledgerctl(1) DURATIONS): 30, 30s, 2m, 1h. */
	if (tv && units_duration_ms(tv, &timeout_ms, &why) != LF_OK) {
		fprintf(stderr, "ledgerctl: wait --timeout: %s\n", why.msg);
		return 2;
	}
	for (;;) {
		json_t *st = ctl_status(mount, name);
		const char *state =
			st ? json_string_value(json_object_get(st, "state"))
			   : NULL;
		int done = -1;

		if (!st) {
			fprintf(stderr,
				"ledgerctl: wait %s: no such case under %s\n",
				name, mount);
			return 1;
		}
		if (state && strcmp(state, "registered") == 0)
			done = 0;
		else if (state &&
			 (!strcmp(state, "closed") || !strcmp(state, "failed")))
			done = 1;
		json_decref(st);
		if (done == 0) {
			printf("%s: registered\n", name);
			return 0;
		}
		if (done == 1) {
			fprintf(stderr, "ledgerctl: wait %s: case is %s\n",
				name, state ? "closed or failed" : "?");
			return 1;
		}
		if (waited_ms >= timeout_ms)
			break;
		usleep(20000);
		waited_ms += 20;
	}
	/* Startup fails closed: a target that never registered fails the case. */
	snprintf(path, sizeof(path), "%s/cases/%s/ctl", mount, name);
	err = ctl_write(path, "fail no registration\n", 21);
	if (err)
		fprintf(stderr,
			"ledgerctl: wait %s: no registration within %s, and failing the case failed: %s\n",
			name, tv ? tv : "30s", strerror(err));
	else
		fprintf(stderr,
			"ledgerctl: wait %s: no registration within %s; case failed\n",
			name, tv ? tv : "30s");
	return 1;
}

static int ctl_command(const char *mount, const char *name, const char *cmd)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/cases/%s/ctl", mount, name);
	err = ctl_write(path, cmd, strlen(cmd));
	if (err) {
		/* cmd ends with its newline: the message shows the word. */
		fprintf(stderr, "ledgerctl: %s %.*s: %s\n", name,
			(int)strcspn(cmd, "\n"), cmd, strerror(err));
		return 1;
	}
	return 0;
}

static int ctl_ls(const char *mount)
{
	char path[4096];
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/cases", mount);
	d = opendir(path);
	if (!d) {
		fprintf(stderr, "ledgerctl: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while ((de = readdir(d))) {
		json_t *st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		st = ctl_status(mount, de->d_name);
		printf("%s\t%s\t%lld rows\n", de->d_name,
		       st ? json_string_value(json_object_get(st, "state"))
			  : "?",
		       st ? (long long)json_integer_value(
				    json_object_get(st, "rows"))
			  : 0LL);
		json_decref(st);
	}
	closedir(d);
	return 0;
}

/*
 * --mount DIR or --mount=DIR after the command, as check-target takes
 * it, counts as before it (ledgerctl(1)): taken out of argv, the last
 * one given wins.  The new argc, or -1 when --mount has no value.
 */
static int ctl_take_mount(const char **mount, int argc, char **argv)
{
	int a, n = 1;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--mount") == 0) {
			if (a + 1 >= argc)
				return -1;
			*mount = argv[++a];
		} else if (strncmp(argv[a], "--mount=", 8) == 0) {
			*mount = argv[a] + 8;
		} else {
			argv[n++] = argv[a];
		}
	}
	argv[n] = NULL;
	return n;
}

int ctl_case_main(const char *mount, int argc, char **argv)
{
	const char *cmd = argv[0];
	char path[4096], *text, line[4200];

	argc = ctl_take_mount(&mount, argc, argv);
	if (argc < 0) {
		fprintf(stderr, "ledgerctl: %s: --mount needs a folder\n", cmd);
		return 2;
	}
	if (!*mount) {
		fprintf(stderr, "ledgerctl: %s: --mount is empty\n", cmd);
		return 2;
	}
	setenv("LEDGERFS_MOUNT", mount, 1);

	if (strcmp(cmd, "open") == 0)
		return ctl_open(mount, argc, argv);
	if (strcmp(cmd, "wait") == 0)
		return ctl_wait(mount, argc, argv);
	if (strcmp(cmd, "ls") == 0 && argc == 1)
		return ctl_ls(mount);
	if ((!strcmp(cmd, "turn") || !strcmp(cmd, "close") ||
	     !strcmp(cmd, "fail") || !strcmp(cmd, "status")) &&
	    argc >= 2 && !ctl_case_name_ok(argv[1]))
		return 2;
	if ((strcmp(cmd, "turn") == 0 || strcmp(cmd, "close") == 0) &&
	    argc == 2) {
		snprintf(line, sizeof(line), "%s\n", cmd);
		return ctl_command(mount, argv[1], line);
	}
	if (strcmp(cmd, "fail") == 0 && argc == 3) {
		snprintf(line, sizeof(line), "fail %s\n", argv[2]);
		return ctl_command(mount, argv[1], line);
	}
	if (strcmp(cmd, "status") == 0 && argc == 2) {
		snprintf(path, sizeof(path), "%s/cases/%s/status", mount,
			 argv[1]);
		text = ctl_read(path);
		if (!text) {
			fprintf(stderr, "ledgerctl: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
		fputs(text, stdout);
		free(text);
		return 0;
	}
	fprintf(stderr,
		"ledgerctl: unknown command or wrong arguments: %s (see ledgerctl --help)\n",
		cmd);
	return 2;
}
