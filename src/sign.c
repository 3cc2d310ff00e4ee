/* SPDX-License-Identifier: MIT */
/*
 * sign.c - Ed25519 (RFC 8032, through libgcrypt's "eddsa" flag) and plain
 * SHA-256 for the Merkle tree and checkpoints.  Kept apart from chain.c,
 * which holds the chain and MAC keys: the signing key never derives from
 * them (ledgerfs-ledger(5) SIGNED CHECKPOINTS).
 */
#include "sign.h"

#include <gcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"

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

int sign_public(const unsigned char seed[SIGN_SEED_BYTES],
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

int sign_ed25519(const unsigned char seed[SIGN_SEED_BYTES], const void *msg,
		 size_t len, unsigned char sig[SIGN_SIG_BYTES])
{
	gcry_sexp_t key = NULL, data = NULL, s = NULL;
	unsigned char pub[SIGN_PUB_BYTES];
	int rc = -1;

	chain_init();
	/* With q given, libgcrypt need not derive it again for each row. */
	if (sign_public(seed, pub) < 0)
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

bool sign_ed25519_verify(const unsigned char pub[SIGN_PUB_BYTES],
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

char *sign_key_path(const char *host_key_path)
{
	char *p = NULL;

	if (asprintf(&p, "%s.sign", host_key_path) < 0)
		return NULL;
	return p;
}
