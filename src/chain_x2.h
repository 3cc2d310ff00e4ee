/* SPDX-License-Identifier: MIT */
/*
 * chain_x2.h - a row's chain hash and its HMAC-SHA256 computed at once,
 * two SHA-256 streams interleaved on the x86 SHA extensions, for reading
 * ledgers fast (ledgerctl(1) verify).  Used only through chain.c, which
 * falls back to libgcrypt where the processor lacks the extensions.
 */
#ifndef LF_CHAIN_X2_H
#define LF_CHAIN_X2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key's HMAC-SHA256 state after its inner and after its outer pad. */
struct chain_x2_pads {
	uint32_t in[8], out[8];
};

/* Does this processor have what chain_x2 needs (SHA, SSSE3, SSE4.1)? */
bool chain_x2_usable(void);

/* The pads of a 32-byte key.  Only when chain_x2_usable. */
void chain_x2_pads(const unsigned char key[32], struct chain_x2_pads *p);

/*
 * SHA-256 of line[0..n) into hash and HMAC-SHA256 of a[0..an) || b[0..bn)
 * under the key of p into mac, both as bytes.  Only when chain_x2_usable.
 */
void chain_x2_sha256_hmac(const void *line, size_t n, const void *a, size_t an,
			  const void *b, size_t bn,
			  const struct chain_x2_pads *p, unsigned char hash[32],
			  unsigned char mac[32]);

#endif
