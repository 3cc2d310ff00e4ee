/* SPDX-License-Identifier: MIT */
/*
 * sign.c - Ed25519 (RFC 8032, through libgcrypt's "eddsa" flag) and plain
 * SHA-256 for the Merkle tree and checkpoints.  Kept apart from chain.c,
 * which holds the chain and MAC keys: the signing key never derives from
 * them (ledgerfs-ledger(5) SIGNED CHECKPOINTS).
 */
#include "sign.h"

#include <gcrypt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"

/*
 * libgcrypt's Ed25519 (1.10) is not safe to enter from several threads at
 * once: eight threads signing, verifying and deriving keys together leak
 * one of its numbers in about one run of fifteen (LeakSanitizer).  Cases
 * load on several threads, and turn and close on any, so every Ed25519
 * operation here holds this lock; there are a few of them a case, never
 * one a row.
 */
static pthread_mutex_t sign_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * The encodings of the points of small order (libsodium refuses the same
 * list), compared without the sign bit: 0, 1, the two of order 8 below,
 * and p - 1, p, p + 1 (0xec, 0xed or 0xee, then 30 bytes 0xff, then
 * 0x7f).  No honest key or signature is one.  libgcrypt 1.10 aborts the
 * whole process when some of them are the public key ("mulm_25519:
 * different sizes"), and with an order-8 key it accepts R = identity,
 * S = 0 for one message in eight; a verifier key comes from others
 * (ledgerctl(1) verify --pubkey), so they are refused before it is asked.
 */
static const unsigned char sign_small_order[4][32] = {
	{0x00},
	{0x01},
	{0x26, 0xe8, 0x95, 0x8f, 0xc2, 0xb2, 0x27, 0xb0, 0x45, 0xc3, 0xf4,
	 0x89, 0xf2, 0xef, 0x98, 0xf0, 0xd5, 0xdf, 0xac, 0x05, 0xd3, 0xc6,
	 0x33, 0x39, 0xb1, 0x38, 0x02, 0x88, 0x6d, 0x53, 0xfc, 0x05},
	{0xc7, 0x17, 0x6a, 0x70, 0x3d, 0x4d, 0xd8, 0x4f, 0xba, 0x3c, 0x0b,
	 0x76, 0x0d, 0x10, 0x67, 0x0f, 0x2a, 0x20, 0x53, 0xfa, 0x2c, 0x39,
	 0xcc, 0xc6, 0x4e, 0xc7, 0xfd, 0x77, 0x92, 0xac, 0x03, 0x7a},
};

bool sign_small_order_point(const unsigned char p[32])
{
	unsigned char d, ff = (unsigned char)(p[31] | 0x80);
	size_t k, i;

	for (k = 0; k < sizeof(sign_small_order) / 32; k++) {
		d = (unsigned char)((p[31] & 0x7f) ^ sign_small_order[k][31]);
		for (i = 0; i < 31; i++)
			d |= (unsigned char)(p[i] ^ sign_small_order[k][i]);
		if (!d)
			return true;
	}
	/* p - 1, p, p + 1 */
	for (i = 1; i < 31; i++)
		ff &= p[i];
	return ff == 0xff && p[0] >= 0xec && p[0] <= 0xee;
}

void sign_sha256v(const struct sign_buf *v, int n,
		  unsigned char out[SIGN_HASH_BYTES])
{
	gcry_buffer_t iov[4];
	int i;

	chain_init();
	memset(iov, 0, sizeof(iov));
	for (i = 0; i < n && i < 4; i++) {
		iov[i].data = (void *)v[i].p;
		iov[i].size = iov[i].len = v[i].n;
	}
	if (gcry_md_hash_buffers(GCRY_MD_SHA256, 0, out, iov, i)) {
		/* Only reachable if libgcrypt is broken: fail closed. */
		fputs("ledgerfs: SHA-256 failed\n", stderr);
		abort();
	}
}

/*
 * Copy the n-byte value of token name in s into out, left-padded with
 * zeros when libgcrypt dropped leading zero bytes.  0 or -1.
 */
static int sign_token(gcry_sexp_t s, const char *name, unsigned char *out,
		      size_t n)
{
	gcry_sexp_t t = gcry_sexp_find_token(s, name, 0);
	const char *d;
	size_t len = 0;
	int rc = -1;

	if (!t)
		return -1;
	d = gcry_sexp_nth_data(t, 1, &len);
	if (d && len <= n) {
		memset(out, 0, n - len);
		memcpy(out + n - len, d, len);
		rc = 0;
	}
	gcry_sexp_release(t);
	return rc;
}

static int sign_public_locked(const unsigned char seed[SIGN_SEED_BYTES],
			      unsigned char pub[SIGN_PUB_BYTES])
{
	gcry_sexp_t key = NULL;
	gcry_ctx_t ctx = NULL;
	gcry_mpi_t q = NULL;
	const unsigned char *b;
	unsigned int bits = 0;
	int rc = -1;

	chain_init();
	if (gcry_sexp_build(&key, NULL,
			    "(private-key (ecc (curve Ed25519) (flags eddsa)"
			    " (d %b)))",
			    (int)SIGN_SEED_BYTES, seed))
		goto out;
	if (gcry_mpi_ec_new(&ctx, key, NULL))
		goto out;
	/* "q@eddsa": the point in RFC 8032's 32-byte encoding. */
	q = gcry_mpi_ec_get_mpi("q@eddsa", ctx, 1);
	if (!q || !gcry_mpi_get_flag(q, GCRYMPI_FLAG_OPAQUE))
		goto out;
	b = gcry_mpi_get_opaque(q, &bits);
	if (!b || bits != 8 * SIGN_PUB_BYTES)
		goto out;
	memcpy(pub, b, SIGN_PUB_BYTES);
	rc = 0;
out:
	gcry_mpi_release(q);
	gcry_ctx_release(ctx);
	gcry_sexp_release(key);
	return rc;
}

int sign_public(const unsigned char seed[SIGN_SEED_BYTES],
		unsigned char pub[SIGN_PUB_BYTES])
{
	int rc;

	pthread_mutex_lock(&sign_lock);
	rc = sign_public_locked(seed, pub);
	pthread_mutex_unlock(&sign_lock);
	return rc;
}

static int sign_ed25519_locked(const unsigned char seed[SIGN_SEED_BYTES],
			       const void *msg, size_t len,
			       unsigned char sig[SIGN_SIG_BYTES])
{
	gcry_sexp_t key = NULL, data = NULL, s = NULL;
	unsigned char pub[SIGN_PUB_BYTES];
	int rc = -1;

	chain_init();
	/* With q given, libgcrypt need not derive it again for each row. */
	if (sign_public_locked(seed, pub) < 0)
		return -1;
	if (gcry_sexp_build(&key, NULL,
			    "(private-key (ecc (curve Ed25519) (flags eddsa)"
			    " (q %b) (d %b)))",
			    (int)SIGN_PUB_BYTES, pub, (int)SIGN_SEED_BYTES,
			    seed) ||
	    gcry_sexp_build(&data, NULL,
			    "(data (flags eddsa) (hash-algo sha512)"
			    " (value %b))",
			    (int)len, msg))
		goto out;
	if (gcry_pk_sign(&s, data, key))
		goto out;
	if (sign_token(s, "r", sig, 32) < 0 || sign_token(s, "s", sig + 32, 32))
		goto out;
	rc = 0;
out:
	gcry_sexp_release(s);
	gcry_sexp_release(data);
	gcry_sexp_release(key);
	return rc;
}

int sign_ed25519(const unsigned char seed[SIGN_SEED_BYTES], const void *msg,
		 size_t len, unsigned char sig[SIGN_SIG_BYTES])
{
	int rc;

	pthread_mutex_lock(&sign_lock);
	rc = sign_ed25519_locked(seed, msg, len, sig);
	pthread_mutex_unlock(&sign_lock);
	return rc;
}

static bool sign_verify_locked(const unsigned char pub[SIGN_PUB_BYTES],
			       const void *msg, size_t len,
			       const unsigned char sig[SIGN_SIG_BYTES])
{
	gcry_sexp_t key = NULL, data = NULL, s = NULL;
	bool ok = false;

	chain_init();
	if (gcry_sexp_build(&key, NULL,
			    "(public-key (ecc (curve Ed25519) (flags eddsa)"
			    " (q %b)))",
			    (int)SIGN_PUB_BYTES, pub) ||
	    gcry_sexp_build(&data, NULL,
			    "(data (flags eddsa) (hash-algo sha512)"
			    " (value %b))",
			    (int)len, msg) ||
	    gcry_sexp_build(&s, NULL, "(sig-val (eddsa (r %b) (s %b)))", 32,
			    sig, 32, sig + 32))
		goto out;
	ok = gcry_pk_verify(s, data, key) == 0;
out:
	gcry_sexp_release(s);
	gcry_sexp_release(data);
	gcry_sexp_release(key);
	return ok;
}

bool sign_ed25519_verify(const unsigned char pub[SIGN_PUB_BYTES],
			 const void *msg, size_t len,
			 const unsigned char sig[SIGN_SIG_BYTES])
{
	bool ok;

	if (sign_small_order_point(pub) || sign_small_order_point(sig))
		return false;
	pthread_mutex_lock(&sign_lock);
	ok = sign_verify_locked(pub, msg, len, sig);
	pthread_mutex_unlock(&sign_lock);
	return ok;
}

char *sign_key_path(const char *host_key_path)
{
	char *p = NULL;

	if (asprintf(&p, "%s.sign", host_key_path) < 0)
		return NULL;
	return p;
}
