/* SPDX-License-Identifier: MIT */
/*
 * ratchet_file.c - the seal key file of a sealed ledger (ledgerfs-ledger(5)
 * SEALS): only the current key K(e), wrapped with the host key, in one of
 * two slots overwritten in place, so a kill never loses it and an old key
 * leaves the file at each ratchet.
 */
#include "ledger.h"
#include "ratchet.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The seal key file: two slots of RATCHET_SLOT bytes.  An update writes
 * the new state to the idle slot and flushes it, then overwrites the old
 * slot with zeros and flushes again, so a kill at any point leaves one
 * whole slot, and after an update the old key's bytes are gone from the
 * file (ledgerfs-ledger(5) SEALS, "The seal key file").
 */
#define RATCHET_MAGIC	   "lfseal01"
#define RATCHET_SLOT	   96
#define RATCHET_FILE_BYTES (2 * RATCHET_SLOT)
#define RATCHET_SALT	   8
#define RATCHET_HANDED_OUT 0x01
#define RATCHET_WRAP_LABEL "ledgerfs/seal-wrap/v1"

struct ratchet {
	int fd;	     /* the open file, or -1 once parked */
	int base_fd; /* parked: the file is base_fd/path, opened to update */
	char *path;
	int slot; /* the slot holding the current state */
	unsigned long long epoch, rows_in_epoch, epoch_rows;
	unsigned char key[CHAIN_KEY_BYTES];
	unsigned char wrap[CHAIN_KEY_BYTES]; /* from the host key and salt */
	unsigned char salt[RATCHET_SALT];
	unsigned char flags;
};

static void ratchet_wrap_key(const unsigned char host[CHAIN_KEY_BYTES],
			     const unsigned char salt[RATCHET_SALT],
			     unsigned char out[CHAIN_KEY_BYTES])
{
	unsigned char msg[sizeof(RATCHET_WRAP_LABEL) + RATCHET_SALT];

	/* The label's NUL ends it before the salt. */
	memcpy(msg, RATCHET_WRAP_LABEL, sizeof(RATCHET_WRAP_LABEL));
	memcpy(msg + sizeof(RATCHET_WRAP_LABEL), salt, RATCHET_SALT);
	chain_hmac(host, msg, sizeof(msg), out);
}

static void ratchet_put_be64(unsigned char *p, unsigned long long v)
{
	int i;

	for (i = 7; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)(v & 0xff);
}

static unsigned long long ratchet_get_be64(const unsigned char *p)
{
	unsigned long long v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* key XOR HMAC(wrap, epoch as 8 bytes big-endian), into out. */
static void ratchet_xor_pad(const unsigned char wrap[CHAIN_KEY_BYTES],
			    unsigned long long epoch, const unsigned char *in,
			    unsigned char *out)
{
	unsigned char be[8], pad[CHAIN_KEY_BYTES];
	int i;

	ratchet_put_be64(be, epoch);
	chain_hmac(wrap, be, sizeof(be), pad);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		out[i] = in[i] ^ pad[i];
	explicit_bzero(pad, sizeof(pad));
}

static void ratchet_encode(const struct ratchet *r, unsigned long long epoch,
			   const unsigned char key[CHAIN_KEY_BYTES],
			   unsigned char flags, unsigned char s[RATCHET_SLOT])
{
	memset(s, 0, RATCHET_SLOT);
	memcpy(s, RATCHET_MAGIC, 8);
	ratchet_put_be64(s + 8, epoch);
	memcpy(s + 16, r->salt, RATCHET_SALT);
	s[24] = flags;
	ratchet_xor_pad(r->wrap, epoch, key, s + 32);
	chain_sha256(s, 64, s + 64);
}

/* A whole slot: magic and checksum hold. */
static bool ratchet_slot_whole(const unsigned char s[RATCHET_SLOT])
{
	unsigned char d[32];

	if (memcmp(s, RATCHET_MAGIC, 8) != 0)
		return false;
	chain_sha256(s, 64, d);
	return memcmp(d, s + 64, 32) == 0;
}

/* The file to update: the open one, or a parked file opened again. */
static int ratchet_fd_get(struct ratchet *r)
{
	if (r->fd >= 0 || !r->path)
		return r->fd;
	return openat(r->base_fd, r->path,
		      O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

static void ratchet_fd_put(struct ratchet *r, int fd)
{
	if (fd >= 0 && fd != r->fd)
		close(fd);
}

/*
 * Write (epoch, key, flags) to the idle slot, flush, then zero the old
 * slot and flush: the old key's bytes leave the file.
 */
static enum lf_err ratchet_store(struct ratchet *r, unsigned long long epoch,
				 const unsigned char key[CHAIN_KEY_BYTES],
				 unsigned char flags, struct lf_why *why)
{
	unsigned char s[RATCHET_SLOT], zero[RATCHET_SLOT] = {0};
	int idle = 1 - r->slot, fd = ratchet_fd_get(r);
	enum lf_err rc = LF_OK;

	if (fd < 0)
		return lf_fail(why, LF_IO, "cannot open the seal key: %s",
			       strerror(errno));
	ratchet_encode(r, epoch, key, flags, s);
	if (ledger_put(fd, s, sizeof(s), (long long)idle * RATCHET_SLOT) < 0 ||
	    fdatasync(fd) < 0) {
		rc = lf_fail(why, LF_IO, "cannot write the seal key: %s",
			     strerror(errno));
		goto out;
	}
	if (ledger_put(fd, zero, sizeof(zero), (off_t)r->slot * RATCHET_SLOT) <
		    0 ||
	    fdatasync(fd) < 0) {
		rc = lf_fail(why, LF_IO, "cannot wipe the old seal key: %s",
			     strerror(errno));
		goto out;
	}
	r->slot = idle;
out:
	ratchet_fd_put(r, fd);
	explicit_bzero(s, sizeof(s));
	return rc;
}

void ratchet_park(struct ratchet *r, int base_fd, const char *path)
{
	char *copy = strdup(path);

	/* No room to remember the name: the file simply stays open. */
	if (!copy || r->fd < 0) {
		free(copy);
		return;
	}
	free(r->path);
	r->path = copy;
	r->base_fd = base_fd;
	close(r->fd);
	r->fd = -1;
}

static struct ratchet *ratchet_alloc(void)
{
	struct ratchet *r = calloc(1, sizeof(*r));

	if (r) {
		r->fd = -1;
		r->epoch_rows = RATCHET_EPOCH_ROWS;
	}
	return r;
}

enum lf_err ratchet_create(int dirfd, const char *path,
			   const unsigned char host_key[CHAIN_KEY_BYTES],
			   unsigned long long epoch_rows, struct ratchet **out,
			   struct lf_why *why)
{
	unsigned char file[RATCHET_FILE_BYTES] = {0};
	struct ratchet *r = ratchet_alloc();
	enum lf_err rc;

	*out = NULL;
	if (!r)
		return lf_fail(why, LF_NOMEM, "out of memory");
	r->epoch_rows = epoch_rows ? epoch_rows : RATCHET_EPOCH_ROWS;
	/* K0 comes from the kernel: nothing derives it (not the host key). */
	if (chain_random(r->key, CHAIN_KEY_BYTES) < 0 ||
	    chain_random(r->salt, RATCHET_SALT) < 0) {
		rc = lf_fail(why, LF_IO, "no randomness for the seal key");
		goto fail;
	}
	ratchet_wrap_key(host_key, r->salt, r->wrap);
	r->fd = openat(dirfd, path,
		       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		       0600);
	if (r->fd < 0) {
		rc = lf_fail(why, errno == EEXIST ? LF_EXISTS : LF_IO,
			     "cannot create the seal key %s: %s", path,
			     strerror(errno));
		goto fail;
	}
	ratchet_encode(r, 0, r->key, 0, file);
	if (fchmod(r->fd, 0600) < 0 ||
	    ledger_put(r->fd, file, sizeof(file), 0) < 0 || fsync(r->fd) < 0 ||
	    ledger_sync_parent(dirfd, path) < 0) {
		rc = lf_fail(why, LF_IO, "cannot write the seal key %s: %s",
			     path, strerror(errno));
		goto fail;
	}
	explicit_bzero(file, sizeof(file));
	*out = r;
	return LF_OK;
fail:
	explicit_bzero(file, sizeof(file));
	ratchet_free(r);
	return rc;
}

/*
 * Read the file into r: the newest whole slot.  *stale: the other slot
 * also holds a whole, older state (an update was cut short).
 */
static enum lf_err ratchet_read(int fd, const char *path,
				const unsigned char host_key[CHAIN_KEY_BYTES],
				struct ratchet *r, bool *stale,
				struct lf_why *why)
{
	unsigned char file[RATCHET_FILE_BYTES], *s, *best = NULL;
	unsigned long long e, best_e = 0;
	struct stat st;
	ssize_t n;
	int i, whole = 0;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return lf_fail(why, LF_IO, "seal key %s: not a regular file",
			       path);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return lf_fail(
			why, LF_IO,
			"seal key %s: mode %04o lets group or others use it (want 0600)",
			path, (unsigned)(st.st_mode & 07777));
	do {
		n = pread(fd, file, sizeof(file), 0);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(file) || st.st_size != RATCHET_FILE_BYTES)
		return lf_fail(why, LF_VERIFY,
			       "seal key %s: %lld bytes, expected %d", path,
			       (long long)st.st_size, RATCHET_FILE_BYTES);
	for (i = 0; i < 2; i++) {
		s = file + i * RATCHET_SLOT;
		if (!ratchet_slot_whole(s))
			continue;
		whole++;
		e = ratchet_get_be64(s + 8);
		/* Same epoch twice: the later update set a flag. */
		if (!best || e > best_e || (e == best_e && s[24] > best[24])) {
			best = s;
			best_e = e;
			r->slot = i;
		}
	}
	if (!best) {
		explicit_bzero(file, sizeof(file));
		return lf_fail(why, LF_VERIFY, "seal key %s: no whole slot",
			       path);
	}
	*stale = whole == 2;
	r->epoch = best_e;
	memcpy(r->salt, best + 16, RATCHET_SALT);
	r->flags = best[24];
	ratchet_wrap_key(host_key, r->salt, r->wrap);
	ratchet_xor_pad(r->wrap, r->epoch, best + 32, r->key);
	explicit_bzero(file, sizeof(file));
	return LF_OK;
}

static int ratchet_open_file(int dirfd, const char *path, int flags)
{
	/* O_NONBLOCK: a FIFO planted as the file must not hang us. */
	return openat(dirfd, path,
		      flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

enum lf_err ratchet_load(int dirfd, const char *path,
			 const unsigned char host_key[CHAIN_KEY_BYTES],
			 struct ratchet **out, struct lf_why *why)
{
	unsigned char zero[RATCHET_SLOT] = {0};
	struct ratchet *r;
	enum lf_err rc;
	bool stale = false;

	*out = NULL;
	r = ratchet_alloc();
	if (!r)
		return lf_fail(why, LF_NOMEM, "out of memory");
	r->fd = ratchet_open_file(dirfd, path, O_RDWR);
	if (r->fd < 0) {
		rc = lf_fail(why, errno == ENOENT ? LF_NOT_FOUND : LF_IO,
			     "cannot open the seal key %s: %s", path,
			     strerror(errno));
		goto fail;
	}
	rc = ratchet_read(r->fd, path, host_key, r, &stale, why);
	if (rc != LF_OK)
		goto fail;
	/* An update cut short: finish it by wiping the older slot. */
	if (stale && (ledger_put(r->fd, zero, sizeof(zero),
				 (off_t)(1 - r->slot) * RATCHET_SLOT) < 0 ||
		      fdatasync(r->fd) < 0)) {
		rc = lf_fail(why, LF_IO, "cannot wipe the old seal key: %s",
			     strerror(errno));
		goto fail;
	}
	*out = r;
	return LF_OK;
fail:
	ratchet_free(r);
	return rc;
}

enum lf_err ratchet_read_keys(int dirfd, const char *path,
			      const unsigned char host_key[CHAIN_KEY_BYTES],
			      struct ratchet_keys *out, struct lf_why *why)
{
	struct ratchet r;
	enum lf_err rc;
	bool stale;
	int fd;

	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	fd = ratchet_open_file(dirfd, path, O_RDONLY);
	if (fd < 0)
		return lf_fail(why, errno == ENOENT ? LF_NOT_FOUND : LF_IO,
			       "cannot open the seal key %s: %s", path,
			       strerror(errno));
	rc = ratchet_read(fd, path, host_key, &r, &stale, why);
	close(fd);
	if (rc == LF_OK) {
		out->mode = RATCHET_KEYS_CURRENT;
		out->epoch = r.epoch;
		memcpy(out->key, r.key, CHAIN_KEY_BYTES);
	}
	explicit_bzero(&r, sizeof(r));
	return rc;
}

unsigned long long ratchet_epoch(const struct ratchet *r)
{
	return r->epoch;
}

const unsigned char *ratchet_key(const struct ratchet *r)
{
	return r->key;
}

unsigned long long ratchet_epoch_rows(const struct ratchet *r)
{
	return r->epoch_rows;
}

void ratchet_current_keys(const struct ratchet *r, struct ratchet_keys *out)
{
	out->mode = RATCHET_KEYS_CURRENT;
	out->epoch = r->epoch;
	memcpy(out->key, r->key, CHAIN_KEY_BYTES);
}

/* K(e) → K(e+1): stored first, then the old key wiped from memory. */
static enum lf_err ratchet_advance(struct ratchet *r, struct lf_why *why)
{
	unsigned char next[CHAIN_KEY_BYTES];
	enum lf_err rc;

	ratchet_step(r->key, next);
	rc = ratchet_store(r, r->epoch + 1, next, r->flags, why);
	if (rc == LF_OK) {
		memcpy(r->key, next, sizeof(next));
		r->epoch++;
		r->rows_in_epoch = 0;
	}
	explicit_bzero(next, sizeof(next));
	return rc;
}

enum lf_err ratchet_resume(struct ratchet *r, const struct ratchet_walk *w,
			   unsigned long long rows, struct lf_why *why)
{
	if (rows && w->epoch_rows)
		r->epoch_rows = w->epoch_rows;
	if (r->epoch == w->epoch) {
		r->rows_in_epoch = w->rows_in_epoch;
		return LF_OK;
	}
	/* The last row ended epoch e and the daemon died before ratcheting. */
	if (rows && r->epoch + 1 == w->epoch && w->rows_in_epoch == 0)
		return ratchet_advance(r, why);
	return lf_fail(
		why, LF_VERIFY,
		"the seal key is for epoch %llu but the ledger's next row is in epoch %llu",
		r->epoch, w->epoch);
}

bool ratchet_row_ends_epoch(const struct ratchet *r, const char *phase)
{
	return strcmp(phase, "turn") == 0 ||
	       strcmp(phase, "case_closed") == 0 ||
	       r->rows_in_epoch + 1 >= r->epoch_rows;
}

enum lf_err ratchet_row_written(struct ratchet *r, const char *phase,
				struct lf_why *why)
{
	bool ends = ratchet_row_ends_epoch(r, phase);

	r->rows_in_epoch++;
	return ends ? ratchet_advance(r, why) : LF_OK;
}

enum lf_err ratchet_handout(struct ratchet *r,
			    unsigned char k0[CHAIN_KEY_BYTES],
			    struct lf_why *why)
{
	enum lf_err rc;

	if (r->epoch != 0)
		return lf_fail(why, LF_NOT_FOUND,
			       "the initial seal key is gone (epoch %llu)",
			       r->epoch);
	if (r->flags & RATCHET_HANDED_OUT)
		return lf_fail(why, LF_NOT_FOUND,
			       "the initial seal key was handed out already");
	/* Durable before given: a second reader never gets it. */
	rc = ratchet_store(r, 0, r->key, r->flags | RATCHET_HANDED_OUT, why);
	if (rc != LF_OK)
		return rc;
	r->flags |= RATCHET_HANDED_OUT;
	memcpy(k0, r->key, CHAIN_KEY_BYTES);
	return LF_OK;
}

void ratchet_free(struct ratchet *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->path);
	explicit_bzero(r, sizeof(*r));
	free(r);
}
