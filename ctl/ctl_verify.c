/*
 * ctl_verify.c - `ledgerctl verify LEDGER [--key FILE] [--head ROWS:HEX]`:
 * offline check of a ledger file or backing case folder, naming the first
 * bad row; a checkpoint from `status` makes a later truncation visible.
 */
#include "ctl_verify.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "ledger.h"

#define CTL_VERIFY_USAGE                                                       \
	"usage: ledgerctl verify LEDGER [--key FILE] [--head ROWS:HEX]\n"

/* A parsed "ROWS:HEX" checkpoint. */
struct ctl_checkpoint {
	unsigned long long rows;
	char hex[CHAIN_HEX_LEN + 1];
};

static int ctl_parse_head(const char *arg, struct ctl_checkpoint *cp)
{
	const char *colon = strchr(arg, ':');
	unsigned long long v = 0;
	const char *p;
	size_t i;

	if (!colon || colon == arg || colon - arg > 19)
		return -1;
	for (p = arg; p < colon; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	if (strlen(colon + 1) != CHAIN_HEX_LEN)
		return -1;
	for (i = 0; i < CHAIN_HEX_LEN; i++) {
		char c = colon[1 + i];

		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return -1;
		cp->hex[i] = c;
	}
	cp->hex[CHAIN_HEX_LEN] = '\0';
	cp->rows = v;
	return 0;
}

/*
 * SHA-256 of line `want` (1-based) of fd into out.  Only called on a
 * ledger that verified, so lines are bounded.  0, or -1 (errno).
 */
static int ctl_line_hash(int fd, unsigned long long want,
			 char out[CHAIN_HEX_LEN + 1])
{
	size_t cap = (size_t)1 << 20, have = 0;
	unsigned long long line = 1;
	long long readoff = 0;
	char *buf = malloc(cap), *p, *nl;
	ssize_t r;
	int rc = -1;

	if (!buf)
		return -1;
	for (;;) {
		r = pread(fd, buf + have, cap - have, (off_t)readoff);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = ENODATA;
			goto out;
		}
		readoff += r;
		have += (size_t)r;
		p = buf;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			if (line == want) {
				chain_sha256_hex(p, (size_t)(nl - p), out);
				rc = 0;
				goto out;
			}
			line++;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto out;
			buf = nb;
			cap *= 2;
		}
	}
out:
	free(buf);
	return rc;
}

int ctl_verify_fd(int fd, const char *label, const unsigned char *key,
		  const char *head_arg)
{
	struct ctl_checkpoint cp;
	struct ledger_report rep;
	struct lf_why why = {{0}};
	char hex[CHAIN_HEX_LEN + 1];
	enum lf_err rc;

	if (head_arg && ctl_parse_head(head_arg, &cp) < 0) {
		fprintf(stderr,
			"ledgerctl verify: --head wants ROWS:HEX (a row count and a 64-digit SHA-256 from status), not '%s'\n",
			head_arg);
		return 2;
	}
	rc = ledger_verify_fd(fd, NULL, key, NULL, NULL, &rep, &why);
	if (rc == LF_IO || rc == LF_NOMEM) {
		fprintf(stderr, "ledgerctl verify: %s: %s\n", label, why.msg);
		return 2;
	}
	if (rc != LF_OK) {
		printf("bad: %s\n", why.msg);
		return 1;
	}
	if (head_arg) {
		if (rep.head.rows < cp.rows) {
			printf("bad: checkpoint row %llu: ledger has only %llu rows (truncated)\n",
			       cp.rows, rep.head.rows);
			return 1;
		}
		if (cp.rows == 0) {
			memset(hex, '0', CHAIN_HEX_LEN);
			hex[CHAIN_HEX_LEN] = '\0';
		} else if (cp.rows == rep.head.rows) {
			memcpy(hex, rep.head.head, sizeof(hex));
		} else if (ctl_line_hash(fd, cp.rows, hex) < 0) {
			fprintf(stderr,
				"ledgerctl verify: %s: cannot read row %llu: %s\n",
				label, cp.rows, strerror(errno));
			return 2;
		}
		if (strcmp(hex, cp.hex) != 0) {
			printf("bad: checkpoint row %llu: hash %s does not match the checkpoint %s\n",
			       cp.rows, hex, cp.hex);
			return 1;
		}
	}
	printf("ok: %llu rows, head %s, MACs %s\n", rep.head.rows,
	       rep.head.head, key ? "checked" : "not checked");
	return 0;
}

/* Open LEDGER: a ledger file, or a backing case folder's ledger.jsonl. */
static int ctl_open_ledger(const char *path)
{
	struct stat st;
	int fd, lfd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		lfd = openat(fd, "ledger.jsonl",
			     O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		close(fd);
		return lfd;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int ctl_read_status(int dirfd, unsigned long long *rows,
		    char head[CHAIN_HEX_LEN + 1])
{
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	json_t *st = fd >= 0 ? json_loadfd(fd, 0, NULL) : NULL;
	int rc = -1;

	if (fd >= 0)
		close(fd);
	if (json_is_integer(json_object_get(st, "rows")) &&
	    json_string_length(json_object_get(st, "head")) == CHAIN_HEX_LEN) {
		*rows = (unsigned long long)json_integer_value(
			json_object_get(st, "rows"));
		memcpy(head, json_string_value(json_object_get(st, "head")),
		       CHAIN_HEX_LEN + 1);
		rc = 0;
	}
	json_decref(st);
	return rc;
}

/* Copy the view's `ledger` (size 0: read to EOF) into a fresh memfd. */
static int ctl_snapshot_ledger(int dirfd)
{
	char buf[65536];
	int fd = openat(dirfd, "ledger", O_RDONLY | O_CLOEXEC);
	int mfd = fd >= 0 ? memfd_create("ledger", MFD_CLOEXEC) : -1;
	ssize_t n = -1;

	while (mfd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(mfd, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	if (fd >= 0)
		close(fd);
	if (n != 0 && mfd >= 0) {
		close(mfd);
		mfd = -1;
	}
	return mfd;
}

/*
 * A mounted case folder (it has `status` and `ledger`): checked against
 * the daemon, never with a key file.  One snapshot of the ledger must
 * chain and end exactly where the daemon's status, read after it, says:
 * a row the daemon does not report is bad; rows the daemon appended in
 * between mean a new try.  The daemon checked the MACs when it loaded
 * the case.
 */
static int ctl_verify_mounted(const char *dir, const char *head_arg)
{
	struct timespec pause = {0, 50 * 1000 * 1000};
	struct ledger_report rep;
	struct lf_why why = {{0}};
	unsigned long long srows = 0;
	char shead[CHAIN_HEX_LEN + 1] = "", head[160];
	int dirfd, mfd = -1, try, rc = 2;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n", dir,
			strerror(errno));
		return 2;
	}
	for (try = 0; try < 40; try++) {
		enum lf_err e;

		if (mfd >= 0)
			close(mfd);
		mfd = ctl_snapshot_ledger(dirfd);
		if (mfd < 0) {
			fprintf(stderr,
				"ledgerctl verify: cannot read %s/ledger\n",
				dir);
			goto out;
		}
		e = ledger_verify_fd(mfd, NULL, NULL, NULL, NULL, &rep, &why);
		if (e == LF_VERIFY && rep.torn) {
			nanosleep(&pause, NULL); /* read during an append */
			continue;
		}
		if (e != LF_OK) {
			lseek(mfd, 0, SEEK_SET);
			rc = ctl_verify_fd(mfd, dir, NULL, NULL); /* says why */
			goto out;
		}
		if (ctl_read_status(dirfd, &srows, shead) < 0) {
			fprintf(stderr,
				"ledgerctl verify: cannot read %s/status\n",
				dir);
			goto out;
		}
		if (srows <= rep.head.rows)
			break;
		nanosleep(&pause, NULL); /* the daemon appended meanwhile */
	}
	if (srows != rep.head.rows || strcmp(shead, rep.head.head)) {
		printf("bad: the ledger read through the mount (%llu rows, head %s) does not end where the daemon's status says (%llu rows, head %s)\n",
		       rep.head.rows, rep.head.head, srows, shead);
		rc = 1;
		goto out;
	}
	snprintf(head, sizeof(head), "%llu:%s", srows, shead);
	fprintf(stderr,
		"ledgerctl verify: %s is a mounted case: chain checked against the daemon's status (%s); the daemon checked the MACs when it loaded the case\n",
		dir, head);
	lseek(mfd, 0, SEEK_SET);
	rc = ctl_verify_fd(mfd, dir, NULL, head);
	/* A checkpoint given by the caller must hold as well. */
	if (rc == 0 && head_arg) {
		lseek(mfd, 0, SEEK_SET);
		rc = ctl_verify_fd(mfd, dir, NULL, head_arg);
	}
out:
	if (mfd >= 0)
		close(mfd);
	close(dirfd);
	return rc;
}

int ctl_verify_main(int argc, char **argv)
{
	struct stat mst;
	char probe[4096];
	const char *ledger = NULL, *key_path = NULL, *head_arg = NULL;
	unsigned char key[CHAIN_KEY_BYTES];
	bool have_key = false;
	int i, fd, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(CTL_VERIFY_USAGE, stdout);
			return 0;
		} else if (!strcmp(a, "--key") && i + 1 < argc) {
			key_path = argv[++i];
		} else if (!strncmp(a, "--key=", 6)) {
			key_path = a + 6;
		} else if (!strcmp(a, "--head") && i + 1 < argc) {
			head_arg = argv[++i];
		} else if (!strncmp(a, "--head=", 7)) {
			head_arg = a + 7;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"ledgerctl verify: unknown option %s\n%s", a,
				CTL_VERIFY_USAGE);
			return 2;
		} else if (!ledger) {
			ledger = a;
		} else {
			fprintf(stderr, "ledgerctl verify: one LEDGER only\n%s",
				CTL_VERIFY_USAGE);
			return 2;
		}
	}
	if (!ledger) {
		fputs(CTL_VERIFY_USAGE, stderr);
		return 2;
	}
	snprintf(probe, sizeof(probe), "%s/status", ledger);
	if (stat(probe, &mst) == 0 && S_ISREG(mst.st_mode)) {
		if (key_path)
			fprintf(stderr,
				"ledgerctl verify: %s is a mounted case: --key not used\n",
				ledger);
		return ctl_verify_mounted(ledger, head_arg);
	}
	if (key_path) {
		rc = ctl_read_key("verify", key_path, key);
		if (rc == 1)
			fprintf(stderr,
				"ledgerctl verify: cannot read key %s: %s\n",
				key_path, strerror(errno));
		if (rc)
			return 2;
		have_key = true;
	} else {
		rc = ctl_read_key("verify", CTL_DEFAULT_KEY, key);
		if (rc < 0)
			return 2;
		if (rc == 1 && errno == EACCES)
			fprintf(stderr,
				"ledgerctl verify: cannot read %s: %s\n",
				CTL_DEFAULT_KEY, strerror(EACCES));
		have_key = rc == 0;
	}
	if (!have_key)
		fputs("ledgerctl verify: MACs not checked (no key)\n", stderr);
	fd = ctl_open_ledger(ledger);
	if (fd < 0) {
		fprintf(stderr, "ledgerctl verify: cannot open %s: %s\n",
			ledger, strerror(errno));
		rc = 2;
		goto out;
	}
	rc = ctl_verify_fd(fd, ledger, have_key ? key : NULL, head_arg);
	close(fd);
out:
	explicit_bzero(key, sizeof(key));
	return rc;
}
