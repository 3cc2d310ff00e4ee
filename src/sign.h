/* SPDX-License-Identifier: MIT */
/*
 * sign.h - Ed25519 signatures and plain SHA-256 for the Merkle tree and
 * signed checkpoints (ledgerfs-ledger(5) SIGNED CHECKPOINTS).  With chain.c, the
 * only place libgcrypt lives.
 */
#ifndef LF_SIGN_H
#define LF_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#define SIGN_SEED_BYTES 32 /* the private key file: an Ed25519 seed */
#define SIGN_PUB_BYTES	32
#define SIGN_SIG_BYTES	64
#define SIGN_HASH_BYTES 32

/* One piece of a message hashed as a concatenation. */
struct sign_buf {
	const void *p;
	size_t n;
};

/* SHA-256 of v[0] || ... || v[n-1] (n <= 4). */
void sign_sha256v(const struct sign_buf *v, int n,
		  unsigned char out[SIGN_HASH_BYTES]);

/* The public key of a seed (RFC 8032 5.1.5).  0, or -1 on a library fault. */
int sign_public(const unsigned char seed[SIGN_SEED_BYTES],
		unsigned char pub[SIGN_PUB_BYTES]);

/* Ed25519 signature of msg (RFC 8032 5.1.6, pure).  0 or -1. */
int sign_ed25519(const unsigned char seed[SIGN_SEED_BYTES], const void *msg,
		 size_t len, unsigned char sig[SIGN_SIG_BYTES]);

/* Does sig verify for msg under pub?  Never true for a malformed key. */
bool sign_ed25519_verify(const unsigned char pub[SIGN_PUB_BYTES],
			 const void *msg, size_t len,
			 const unsigned char sig[SIGN_SIG_BYTES]);

/*
 * The signing key's file, kept beside the host key: the host key's path
 * with ".sign" appended (ledgerfs(8) --key).  malloc'd, NULL if no memory.
 */
char *sign_key_path(const char *host_key_path);

/* Is p the encoding of a point of small order (refused as key or R)? */
bool sign_small_order_point(const unsigned char p[32]);

#endif
