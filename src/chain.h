/* SPDX-License-Identifier: MIT */
/*
 * chain.h - SHA-256 chaining, HMAC and key derivation for the ledger.
 * The one place libgcrypt lives.
 */
#ifndef LF_CHAIN_H
#define LF_CHAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define CHAIN_KEY_BYTES 32
#define CHAIN_HEX_LEN	64 /* hex digits of a SHA-256; buffers are +1 */

#define CHAIN_FP_LEN 16 /* hex digits of a key fingerprint; buffers +1 */

/*
 * Fingerprint of a key: the first 8 bytes of SHA-256("ledgerfs-key-
 * fingerprint\n" || key), as 16 lower-case hex digits (ledgerfs-ledger(5)
 * KEYS).  Names a key without revealing it.
 */
void chain_key_fingerprint(const unsigned char *key, size_t len,
			   char out[CHAIN_FP_LEN + 1]);

/* Initialise libgcrypt once (thread-safe, idempotent). */
void chain_init(void);

/* Lower-case hex SHA-256 of buf into out[65]. */
void chain_sha256_hex(const void *buf, size_t len, char out[CHAIN_HEX_LEN + 1]);

/* Lower-case hex HMAC-SHA256 of buf under key into out[65]. */
void chain_hmac_hex(const unsigned char key[CHAIN_KEY_BYTES], const void *buf,
		    size_t len, char out[CHAIN_HEX_LEN + 1]);

/*
 * A reusable HMAC-SHA256 context for checking many rows: the key's inner
 * and outer pads are hashed once per key instead of once per row.  One
 * thread at a time.  chain_mac_new: NULL when out of memory.
 */
struct chain_mac;
struct chain_mac *chain_mac_new(void);
void chain_mac_free(struct chain_mac *m);

/*
 * Lower-case hex HMAC-SHA256 of a || b under key into out[65] (the same
 * value as chain_hmac_hex of the concatenation).  0, or -1 when libgcrypt
 * refused the key (out is then zeros, which no MAC equals).
 */
int chain_mac2_hex(struct chain_mac *m,
		   const unsigned char key[CHAIN_KEY_BYTES], const void *a,
		   size_t an, const void *b, size_t bn,
		   char out[CHAIN_HEX_LEN + 1]);

/*
 * The chain hash of line[0..n) into hex, and the MAC of a || b under key
 * into mac as chain_mac2_hex makes it: on a processor with the SHA
 * extensions, both at once (chain_x2.c), else one after the other.  0,
 * or -1 as chain_mac2_hex (hex is always set).
 */
int chain_sha256_mac2_hex(struct chain_mac *m,
			  const unsigned char key[CHAIN_KEY_BYTES],
			  const void *line, size_t n, const void *a, size_t an,
			  const void *b, size_t bn, char hex[CHAIN_HEX_LEN + 1],
			  char mac[CHAIN_HEX_LEN + 1]);

/*
 * Whether chain_sha256_mac2_hex may use the SHA extensions where the
 * processor has them (the default), for tests of both paths.  Returns
 * whether it now does.
 */
bool chain_use_x2(bool on);

/* Per-case MAC key: HMAC(host, "ledgerfs/case-key/v1\0" case_id). */
void chain_case_key(const unsigned char host[CHAIN_KEY_BYTES],
		    const char *case_id, unsigned char out[CHAIN_KEY_BYTES]);

/*
 * Registration token for a case: hex HMAC(host,
 * "ledgerfs/token/v1\0" case_id "\0" nonce).
 */
void chain_case_token(const unsigned char host[CHAIN_KEY_BYTES],
		      const char *case_id, const char *nonce,
		      char out[CHAIN_HEX_LEN + 1]);

/* Raw HMAC-SHA256 of buf under a 32-byte key into out[32]. */
void chain_hmac(const unsigned char key[CHAIN_KEY_BYTES], const void *buf,
		size_t len, unsigned char out[32]);

/* Raw SHA-256 of buf into out[32]. */
void chain_sha256(const void *buf, size_t len, unsigned char out[32]);

/* n random bytes from the kernel into buf.  0 or -1 (errno set). */
int chain_random(unsigned char *buf, size_t n);

/* n random bytes from the kernel as hex into out[2n+1]. 0 or -1. */
int chain_random_hex(size_t n, char *out);

/* Constant-time equality of two NUL-terminated strings. */
bool chain_equal(const char *a, const char *b);
/* Constant-time equality of n bytes (n is public, as a digest's size). */
bool chain_equal_n(const char *a, const char *b, size_t n);

/*
 * Load the 32-byte host key from path; when absent, create it (0600,
 * O_EXCL, from the kernel's random source, fsync'd).  A key file that is
 * not exactly 32 bytes, or readable by group/others, is refused.
 */
enum lf_err chain_load_host_key(const char *path,
				unsigned char key[CHAIN_KEY_BYTES],
				struct lf_why *why);

/*
 * Read an existing host key for checking (ledgerctl): never creates one,
 * does not judge its mode.  LF_NOT_FOUND when the file is absent or not
 * ours to read (errno is ENOENT or EACCES), LF_IO for anything else.
 */
enum lf_err chain_read_host_key(const char *path,
				unsigned char key[CHAIN_KEY_BYTES],
				struct lf_why *why);

#endif
