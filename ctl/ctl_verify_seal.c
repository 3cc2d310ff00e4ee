/* SPDX-License-Identifier: MIT */
/*
 * ctl_verify_seal.c - the seal keys `ledgerctl verify` checks a sealed
 * ledger with (ledgerfs-ledger(5) SEALS): K0 from --seal-key for every
 * epoch, or the current K(e) from the seal key file beside the ledger.
 */
#include "ctl_verify.h"

#include "ledger.h"
#include "ledger_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int ctl_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int ctl_seal_read_k0(const char *path, struct ratchet_keys *out)
{
	unsigned char buf[66];
	ssize_t n;
	int fd, i, hi, lo, rc = 2;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr,
			"ledgerctl verify: cannot read seal key %s: %s\n", path,
			strerror(errno));
		return 2;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* 32 raw bytes (--seal-key-out), or 64 hex digits (the view's). */
	if (n == CHAIN_KEY_BYTES) {
		memcpy(out->key, buf, CHAIN_KEY_BYTES);
		rc = 0;
	} else if (n == 2 * CHAIN_KEY_BYTES ||
		   (n == 2 * CHAIN_KEY_BYTES + 1 && buf[n - 1] == '\n')) {
		for (i = 0; i < CHAIN_KEY_BYTES; i++) {
			hi = ctl_hex_digit(buf[2 * i]);
			lo = ctl_hex_digit(buf[2 * i + 1]);
			if (hi < 0 || lo < 0)
				break;
			out->key[i] = (unsigned char)(hi << 4 | lo);
		}
		if (i == CHAIN_KEY_BYTES)
			rc = 0;
	}
	explicit_bzero(buf, sizeof(buf));
	if (rc) {
		explicit_bzero(out->key, sizeof(out->key));
		fprintf(stderr,
			"ledgerctl verify: seal key %s: want 32 bytes or 64 hex digits\n",
			path);
		return 2;
	}
	out->mode = RATCHET_KEYS_ALL;
	return 0;
}

int ctl_seal_read_current(const char *ledger,
			  const unsigned char host_key[CHAIN_KEY_BYTES],
			  struct ratchet_keys *out, char *where, size_t size)
{
	struct lf_why why = {{0}};
	struct stat st;
	enum lf_err e;

	memset(out, 0, sizeof(*out));
	/* A case folder holds ledger.jsonl.seal; a file has FILE.seal. */
	if (stat(ledger, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(where, size, "%s/ledger.jsonl" RATCHET_FILE_SUFFIX,
			 ledger);
	else
		snprintf(where, size, "%s" RATCHET_FILE_SUFFIX, ledger);
	e = ratchet_read_keys(AT_FDCWD, where, host_key, out, &why);
	if (e == LF_OK)
		return 0;
	if (e == LF_NOT_FOUND)
		return 1;
	fprintf(stderr, "ledgerctl verify: %s\n", why.msg);
	return 2;
}

/* What the seal walk found, for the verdict. */
void ctl_verdict_seal(struct ctl_verdict *v, const struct ledger_report *rep,
		      const struct ratchet_keys *seal)
{
	v->sealed = rep->sealed;
	v->seal_mode = seal ? seal->mode : RATCHET_KEYS_NONE;
	v->seal_epoch = seal ? seal->epoch : 0;
	v->mac_rows = rep->walk.mac_rows;
	v->epochs = rep->walk.epoch + (rep->walk.rows_in_epoch ? 1 : 0);
}

bool ctl_verdict_wrong_key(int fd, struct ctl_verdict *v, const char *what,
			   const char *sealed_fp, const char *checked_fp)
{
	struct ledger_report plain;
	struct lf_why why = {{0}};

	if (ledger_verify_fd(fd, NULL, NULL, NULL, NULL, &plain, &why) != LF_OK)
		return false;
	v->status = 2;
	v->verdict = "wrong_key";
	v->macs_checked = false;
	v->rows = plain.head.rows;
	memcpy(v->head, plain.head.head, sizeof(v->head));
	snprintf(
		v->reason, sizeof(v->reason),
		"sealed with %s %s, checked with %s %s: the chain verifies, the MACs were not checked",
		what, sealed_fp, what, checked_fp);
	return true;
}

/*
 * A sealed ledger that fails only with --seal-key under a K0 whose
 * fingerprint is not row 1's: the wrong seal key, not a forgery.
 */
bool ctl_wrong_seal_key(int fd, struct ctl_verdict *v)
{
	if (!v->sealed || v->seal_mode != RATCHET_KEYS_ALL || !v->seal_fp[0] ||
	    !strcmp(v->seal_fp, v->seal_key_fp))
		return false;
	return ctl_verdict_wrong_key(fd, v, "seal key", v->seal_fp,
				     v->seal_key_fp);
}

/*
 * Which seal keys check a sealed ledger: K0 from --seal-key, else the
 * current key from the seal key file beside it (ledgerfs-ledger(5)
 * LEDGERCTL VERIFY).  0, or 2 (said).
 */
int ctl_pick_seal(const char *ledger, const char *seal_path,
		  const unsigned char *key, struct ratchet_keys *seal,
		  char *where, size_t size)
{
	int rc;

	where[0] = '\0';
	if (seal_path)
		return ctl_seal_read_k0(seal_path, seal);
	if (!key)
		return 0;
	rc = ctl_seal_read_current(ledger, key, seal, where, size);
	if (rc == 1)
		where[0] = '\0';
	return rc == 2 ? 2 : 0;
}

/* What a sealed ledger's check covered, on stderr. */
void ctl_say_seal(const struct ctl_verdict *v, const char *where)
{
	if (!v->sealed || v->status != 0)
		return;
	if (v->seal_mode == RATCHET_KEYS_ALL)
		fprintf(stderr,
			"ledgerctl verify: sealed ledger: every MAC of %llu epoch(s) checked with the initial seal key %s\n",
			v->epochs, v->seal_key_fp);
	else if (v->seal_mode == RATCHET_KEYS_CURRENT)
		fprintf(stderr,
			"ledgerctl verify: sealed ledger: MACs of epoch %llu checked with the seal key file %s (%llu of %llu rows); earlier epochs: chain only, give --seal-key K0FILE to check them\n",
			v->seal_epoch, where, v->mac_rows, v->rows);
	else
		fprintf(stderr,
			"ledgerctl verify: sealed ledger: no seal key (no seal key file beside it, or no host key to unwrap it): chain and canonical form only; give --seal-key K0FILE\n");
}

/* Does the ledger's last row (within its last 64 KiB) say case_closed? */
static bool ctl_ends_closed(int fd, long long good_bytes)
{
	char buf[65536];
	long long from = good_bytes > (long long)sizeof(buf)
				 ? good_bytes - (long long)sizeof(buf)
				 : 0;
	size_t n = (size_t)(good_bytes - from);
	struct ledger_fields f;
	const char *err, *line;

	if (n < 2 || pread(fd, buf, n, (off_t)from) != (ssize_t)n)
		return false;
	/* buf ends with the last row's newline; that row starts after the
	 * newline before it. */
	line = memrchr(buf, '\n', n - 1);
	line = line ? line + 1 : from == 0 ? buf : NULL;
	if (!line || ledger_scan_fields(line, (size_t)(buf + n - 1 - line), &f,
					&err) < 0)
		return false;
	return ledger_tok_is(&f.phase, "case_closed");
}

void ctl_seal_file_required(const char *ledger, int fd, const char *where,
			    struct ctl_verdict *v)
{
	char path[4200];
	struct stat st;

	/* A backing case folder: it holds ledger.jsonl (a mounted one not). */
	snprintf(path, sizeof(path), "%s/ledger.jsonl", ledger);
	if (v->status != 0 || !v->sealed || v->seal_mode == RATCHET_KEYS_ALL ||
	    !v->key_fp[0] || where[0] || stat(ledger, &st) != 0 ||
	    !S_ISDIR(st.st_mode) || stat(path, &st) != 0 ||
	    ctl_ends_closed(fd, v->good_bytes))
		return;
	v->status = 1;
	v->verdict = "bad";
	snprintf(v->reason, sizeof(v->reason),
		 "ledger.jsonl%s is missing: an open case's seal key file, "
		 "which the daemon keeps, was removed (its current epoch's "
		 "MACs cannot be checked)",
		 RATCHET_FILE_SUFFIX);
}
