/* SPDX-License-Identifier: MIT */
/*
 * chain.c - SHA-256, HMAC-SHA256, key derivation and the host key file.
 * The one place libgcrypt lives: replacing the crypto library touches only
 * this file.
 */
#include "chain.h"

#include <errno.h>
#include <fcntl.h>
#include <gcrypt.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "chain_x2.h"

#define CASE_KEY_LABEL "ledgerfs/case-key/v1"
#define TOKEN_LABEL    "ledgerfs/token/v1"

static pthread_once_t chain_once = PTHREAD_ONCE_INIT;
/* Has the processor what chain_x2 needs; may it be used (chain_use_x2)? */
static bool chain_x2_has;
static atomic_bool chain_x2_on = true;

static void chain_init_once(void)
{
	/*
	 * Secure memory is disabled: the keys live in ordinary buffers of
	 * the callers anyway, and secmem needs privileges to lock pages.
	 */
	gcry_check_version(NULL);
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	chain_x2_has = chain_x2_usable();
}

void chain_init(void)
{
	pthread_once(&chain_once, chain_init_once);
}

static void chain_to_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void chain_sha256_hex(const void *buf, size_t len, char out[CHAIN_HEX_LEN + 1])
{
	unsigned char d[32];

	chain_init();
	gcry_md_hash_buffer(GCRY_MD_SHA256, d, buf, len);
	chain_to_hex(d, sizeof(d), out);
}

void chain_key_fingerprint(const unsigned char *key, size_t len,
			   char out[CHAIN_FP_LEN + 1])
{
	static const char tag[] = "ledgerfs-key-fingerprint\n";
	unsigned char d[32];
	gcry_md_hd_t h;

	chain_init();
	if (gcry_md_open(&h, GCRY_MD_SHA256, 0)) {
		memset(out, '0', CHAIN_FP_LEN);
		out[CHAIN_FP_LEN] = '\0';
		return;
	}
	gcry_md_write(h, tag, sizeof(tag) - 1);
	gcry_md_write(h, key, len);
	memcpy(d, gcry_md_read(h, GCRY_MD_SHA256), sizeof(d));
	gcry_md_close(h);
	chain_to_hex(d, CHAIN_FP_LEN / 2, out);
}

/* SHA-256 of the concatenation of iov[0..n-1]. */
static void chain_hash_iov(gcry_buffer_t *iov, int n, unsigned char d[32])
{
	gcry_error_t err;

	err = gcry_md_hash_buffers(GCRY_MD_SHA256, 0, d, iov, n);
	if (err) {
		/* Only reachable if libgcrypt is broken: fail closed. */
		fprintf(stderr, "ledgerfs: SHA-256 failed: %s\n",
			gcry_strerror(err));
		abort();
	}
}

static void chain_iov_set(gcry_buffer_t *b, const void *p, size_t len)
{
	memset(b, 0, sizeof(*b));
	b->data = (void *)p;
	b->size = len;
	b->len = len;
}

/*
 * HMAC-SHA256 (RFC 2104) of the concatenation of msg[0..n-1] under a
 * 32-byte key.  Built from two one-shot SHA-256 calls rather than an HMAC
 * handle: no allocation per call, which keeps verification of many short
 * rows fast, and no shared state, so any thread may call it.
 */
static void chain_hmac_iov(const unsigned char key[CHAIN_KEY_BYTES],
			   const gcry_buffer_t *msg, int n, unsigned char d[32])
{
	unsigned char ipad[64], opad[64], inner[32];
	gcry_buffer_t iov[8];
	int i;

	chain_init();
	/* The key is shorter than a block, so it is zero-padded. */
	memset(ipad, 0x36, sizeof(ipad));
	memset(opad, 0x5c, sizeof(opad));
	for (i = 0; i < CHAIN_KEY_BYTES; i++) {
		ipad[i] ^= key[i];
		opad[i] ^= key[i];
	}
	chain_iov_set(&iov[0], ipad, sizeof(ipad));
	for (i = 0; i < n && i < 7; i++)
		iov[i + 1] = msg[i];
	chain_hash_iov(iov, i + 1, inner);
	chain_iov_set(&iov[0], opad, sizeof(opad));
	chain_iov_set(&iov[1], inner, sizeof(inner));
	chain_hash_iov(iov, 2, d);
	explicit_bzero(ipad, sizeof(ipad));
	explicit_bzero(opad, sizeof(opad));
}

void chain_hmac_hex(const unsigned char key[CHAIN_KEY_BYTES], const void *buf,
		    size_t len, char out[CHAIN_HEX_LEN + 1])
{
	gcry_buffer_t msg;
	unsigned char d[32];

	chain_iov_set(&msg, buf, len);
	chain_hmac_iov(key, &msg, 1, d);
	chain_to_hex(d, sizeof(d), out);
}

void chain_hmac(const unsigned char key[CHAIN_KEY_BYTES], const void *buf,
		size_t len, unsigned char out[32])
{
	gcry_buffer_t msg;

	chain_iov_set(&msg, buf, len);
	chain_hmac_iov(key, &msg, 1, out);
}

void chain_sha256(const void *buf, size_t len, unsigned char out[32])
{
	chain_init();
	gcry_md_hash_buffer(GCRY_MD_SHA256, out, buf, len);
}

struct chain_mac {
	gcry_md_hd_t h;
	bool keyed;
	unsigned char key[CHAIN_KEY_BYTES];
	struct chain_x2_pads pads; /* of key too, where chain_x2 runs */
};

struct chain_mac *chain_mac_new(void)
{
	struct chain_mac *m = calloc(1, sizeof(*m));

	chain_init();
	if (m && gcry_md_open(&m->h, GCRY_MD_SHA256, GCRY_MD_FLAG_HMAC)) {
		free(m);
		return NULL;
	}
	return m;
}

void chain_mac_free(struct chain_mac *m)
{
	if (!m)
		return;
	gcry_md_close(m->h);
	explicit_bzero(m->key, sizeof(m->key));
	explicit_bzero(&m->pads, sizeof(m->pads));
	free(m);
}

/*
 * Give m the key: libgcrypt's pads (it keeps both pads' hash states for
 * reset) and, where chain_x2 runs, its own, so the two never disagree
 * on the key they are of.  0, or -1 when libgcrypt refused the key.
 */
static int chain_mac_rekey(struct chain_mac *m,
			   const unsigned char key[CHAIN_KEY_BYTES])
{
	if (m->keyed && memcmp(m->key, key, CHAIN_KEY_BYTES) == 0)
		return 0;
	m->keyed = false;
	if (gcry_md_setkey(m->h, key, CHAIN_KEY_BYTES))
		return -1;
	if (chain_x2_has)
		chain_x2_pads(key, &m->pads);
	memcpy(m->key, key, CHAIN_KEY_BYTES);
	m->keyed = true;
	return 0;
}

/* A MAC that could not be made: zeros, which no MAC equals. */
static int chain_mac_refused(char out[CHAIN_HEX_LEN + 1])
{
	memset(out, '0', CHAIN_HEX_LEN);
	out[CHAIN_HEX_LEN] = '\0';
	return -1;
}

int chain_mac2_hex(struct chain_mac *m,
		   const unsigned char key[CHAIN_KEY_BYTES], const void *a,
		   size_t an, const void *b, size_t bn,
		   char out[CHAIN_HEX_LEN + 1])
{
	if (chain_mac_rekey(m, key) < 0)
		return chain_mac_refused(out);
	gcry_md_reset(m->h); /* back to the state right after the key */
	gcry_md_write(m->h, a, an);
	gcry_md_write(m->h, b, bn);
	chain_to_hex(gcry_md_read(m->h, GCRY_MD_SHA256), 32, out);
	return 0;
}

bool chain_use_x2(bool on)
{
	chain_init();
	atomic_store(&chain_x2_on, on);
	return on && chain_x2_has;
}

int chain_sha256_mac2_hex(struct chain_mac *m,
			  const unsigned char key[CHAIN_KEY_BYTES],
			  const void *line, size_t n, const void *a, size_t an,
			  const void *b, size_t bn, char hex[CHAIN_HEX_LEN + 1],
			  char mac[CHAIN_HEX_LEN + 1])
{
	unsigned char h[32], d[32];

	chain_init();
	if (!chain_x2_has || !atomic_load(&chain_x2_on)) {
		chain_sha256_hex(line, n, hex);
		return chain_mac2_hex(m, key, a, an, b, bn, mac);
	}
	if (chain_mac_rekey(m, key) < 0) {
		chain_sha256_hex(line, n, hex);
		return chain_mac_refused(mac);
	}
	chain_x2_sha256_hmac(line, n, a, an, b, bn, &m->pads, h, d);
	chain_to_hex(h, sizeof(h), hex);
	chain_to_hex(d, sizeof(d), mac);
	return 0;
}

void chain_case_key(const unsigned char host[CHAIN_KEY_BYTES],
		    const char *case_id, unsigned char out[CHAIN_KEY_BYTES])
{
	gcry_buffer_t msg[2];

	/* The label's NUL separates it from the case id unambiguously. */
	chain_iov_set(&msg[0], CASE_KEY_LABEL, sizeof(CASE_KEY_LABEL));
	chain_iov_set(&msg[1], case_id, strlen(case_id));
	chain_hmac_iov(host, msg, 2, out);
}

void chain_case_token(const unsigned char host[CHAIN_KEY_BYTES],
		      const char *case_id, const char *nonce,
		      char out[CHAIN_HEX_LEN + 1])
{
	gcry_buffer_t msg[3];
	unsigned char d[32];

	/* Case ids never hold NUL, so "case\0nonce" cannot be confused. */
	chain_iov_set(&msg[0], TOKEN_LABEL, sizeof(TOKEN_LABEL));
	chain_iov_set(&msg[1], case_id, strlen(case_id) + 1);
	chain_iov_set(&msg[2], nonce, strlen(nonce));
	chain_hmac_iov(host, msg, 3, d);
	chain_to_hex(d, sizeof(d), out);
}

/* Fill buf from the kernel's random source.  0 or -1 (errno set). */
static int chain_random_bytes(unsigned char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = getrandom(buf + got, n - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)r;
	}
	return 0;
}

int chain_random(unsigned char *buf, size_t n)
{
	return chain_random_bytes(buf, n);
}

int chain_random_hex(size_t n, char *out)
{
	unsigned char chunk[64];
	size_t done = 0, k;

	while (done < n) {
		k = n - done < sizeof(chunk) ? n - done : sizeof(chunk);
		if (chain_random_bytes(chunk, k) < 0)
			return -1;
		chain_to_hex(chunk, k, out + 2 * done);
		done += k;
	}
	out[2 * n] = '\0';
	return 0;
}

bool chain_equal_n(const char *a, const char *b, size_t n)
{
	unsigned char acc = 0;
	size_t i;

	for (i = 0; i < n; i++)
		acc |= (unsigned char)(a[i] ^ b[i]);
	return acc == 0;
}

bool chain_equal(const char *a, const char *b)
{
	size_t la;

	if (!a || !b)
		return false;
	la = strlen(a);
	/* Lengths are public (hex digests); only the contents are secret. */
	return la == strlen(b) && chain_equal_n(a, b, la);
}

static int chain_read_full(int fd, unsigned char *buf, size_t n)
{
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		r = read(fd, buf + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (int)got;
}

static int chain_write_full(int fd, const unsigned char *buf, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		r = write(fd, buf + done, n - done);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

/* Split path into its parent folder (into dir[PATH_MAX]). */
static void chain_parent(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		strcpy(dir, ".");
	} else if (slash == path) {
		strcpy(dir, "/");
	} else {
		size_t n = (size_t)(slash - path);

		if (n >= PATH_MAX)
			n = PATH_MAX - 1;
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
}

/*
 * Create a new key file at path.  LF_EXISTS when another process won the
 * race (the caller then loads that one).
 */
static enum lf_err chain_create_key(const char *path,
				    unsigned char key[CHAIN_KEY_BYTES],
				    struct lf_why *why)
{
	char dir[PATH_MAX];
	enum lf_err rc = LF_IO;
	int fd = -1, dfd = -1;

	if (strlen(path) >= PATH_MAX)
		return lf_fail(why, LF_IO, "host key path too long");
	chain_parent(path, dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return lf_fail(why, LF_IO, "cannot create key folder %s: %s",
			       dir, strerror(errno));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		lf_fail(why, LF_IO, "cannot open key folder %s: %s", dir,
			strerror(errno));
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0) {
		if (errno == EEXIST)
			rc = LF_EXISTS;
		else
			lf_fail(why, LF_IO, "cannot create host key %s: %s",
				path, strerror(errno));
		goto out;
	}
	/* The umask may have taken bits away; never added any. Be exact. */
	if (fchmod(fd, 0600) < 0 || chain_random_bytes(key, CHAIN_KEY_BYTES) ||
	    chain_write_full(fd, key, CHAIN_KEY_BYTES) < 0 || fsync(fd) < 0) {
		lf_fail(why, LF_IO, "cannot write host key %s: %s", path,
			strerror(errno));
		/* Leave no half-written key behind to be refused later. */
		unlink(path);
		goto out;
	}
	if (fsync(dfd) < 0) {
		lf_fail(why, LF_IO, "cannot sync key folder %s: %s", dir,
			strerror(errno));
		goto out;
	}
	rc = LF_OK;
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/*
 * The key in fd: a regular file of exactly CHAIN_KEY_BYTES.  strict: the
 * daemon's own key must also be unreadable to group and others.
 */
static enum lf_err chain_key_from_fd(int fd, const char *path, bool strict,
				     unsigned char key[CHAIN_KEY_BYTES],
				     struct lf_why *why)
{
	struct stat st;
	int n;

	if (fstat(fd, &st) < 0)
		return lf_fail(why, LF_IO, "cannot stat host key %s: %s", path,
			       strerror(errno));
	if (!S_ISREG(st.st_mode))
		return lf_fail(why, LF_IO, "host key %s: not a regular file",
			       path);
	/* Checked on the open file too: the path may have changed since. */
	if (strict && st.st_uid != 0 && st.st_uid != geteuid())
		return lf_fail(
			why, LF_IO,
			"host key %s: owned by uid %u, not by root or this user",
			path, (unsigned)st.st_uid);
	if (strict && (st.st_mode & (S_IRWXG | S_IRWXO)))
		return lf_fail(
			why, LF_IO,
			"host key %s: mode %04o lets group or others read or write it (want 0600)",
			path, (unsigned)(st.st_mode & 07777));
	if (st.st_size != CHAIN_KEY_BYTES)
		return lf_fail(why, LF_IO,
			       "host key %s: %lld bytes, expected %d", path,
			       (long long)st.st_size, CHAIN_KEY_BYTES);
	n = chain_read_full(fd, key, CHAIN_KEY_BYTES);
	if (n != CHAIN_KEY_BYTES)
		return lf_fail(why, LF_IO, "cannot read host key %s: %s", path,
			       n < 0 ? strerror(errno) : "short read");
	return LF_OK;
}

enum lf_err chain_load_host_key(const char *path,
				unsigned char key[CHAIN_KEY_BYTES],
				struct lf_why *why)
{
	enum lf_err rc;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		/* O_NONBLOCK: a FIFO planted as the key must not hang us. */
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
					O_NONBLOCK);
		if (fd >= 0)
			break;
		if (errno == ELOOP)
			return lf_fail(
				why, LF_IO,
				"host key %s: is a symbolic link, not a regular file",
				path);
		if (errno != ENOENT)
			return lf_fail(why, LF_IO,
				       "cannot open host key %s: %s", path,
				       strerror(errno));
		rc = chain_create_key(path, key, why);
		if (rc != LF_EXISTS)
			return rc;
	}
	if (fd < 0)
		return lf_fail(why, LF_IO, "cannot open host key %s", path);
	rc = chain_key_from_fd(fd, path, true, key, why);
	close(fd);
	return rc;
}

enum lf_err chain_read_host_key(const char *path,
				unsigned char key[CHAIN_KEY_BYTES],
				struct lf_why *why)
{
	enum lf_err rc;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = errno;
		rc = lf_fail(
			why,
			err == ENOENT || err == EACCES ? LF_NOT_FOUND : LF_IO,
			"cannot open host key %s: %s", path, strerror(err));
		errno = err;
		return rc;
	}
	rc = chain_key_from_fd(fd, path, false, key, why);
	close(fd);
	return rc;
}
