/* SPDX-License-Identifier: MIT */
/*
 * checkpoint.h - signed tree heads: the C2SP tlog-checkpoint body in a
 * C2SP signed-note with one Ed25519 signature, and the verifier key
 * ("vkey") that checks it (ledgerfs-ledger(5) SIGNED CHECKPOINTS).  Parsing is
 * strict and bounded: a checkpoint is refused unless it is exactly what
 * checkpoint_sign writes.
 */
#ifndef LF_CHECKPOINT_H
#define LF_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "merkle.h"
#include "sign.h"

#define CHECKPOINT_MAX	      4096 /* bytes of a signed checkpoint we read */
#define CHECKPOINT_NAME_MAX   128  /* a key name, with its NUL */
#define CHECKPOINT_ORIGIN_MAX 320
#define CHECKPOINT_ED25519    0x01 /* signed-note's signature type */

/* A note verifier key: name, 4-byte key id, Ed25519 public key. */
struct note_key {
	char name[CHECKPOINT_NAME_MAX];
	unsigned char id[4];
	unsigned char pub[SIGN_PUB_BYTES];
};

struct checkpoint {
	char origin[CHECKPOINT_ORIGIN_MAX];
	uint64_t size;
	merkle_hash root;
};

/* The daemon's key name, "ledgerfs/<host key fingerprint>". */
void checkpoint_key_name(const char *host_fp, char out[CHECKPOINT_NAME_MAX]);

/* Fill k: id = SHA-256(name || 0x0A || 0x01 || pub)[0..3] (signed-note). */
void checkpoint_key_make(struct note_key *k, const char *name,
			 const unsigned char pub[SIGN_PUB_BYTES]);

/* "<name>+<8 hex id>+<base64(0x01 || pub)>", malloc'd (NULL: no memory). */
char *checkpoint_vkey(const struct note_key *k);

/* Parse a vkey (surrounding white space ignored); the id must match. */
enum lf_err checkpoint_vkey_parse(const char *s, struct note_key *k,
				  struct lf_why *why);

/* The body (three lines) of cp into a malloc'd string. */
char *checkpoint_body(const struct checkpoint *cp);

/* The signed note of cp under seed (k names it), malloc'd; NULL on fault. */
char *checkpoint_sign(const struct checkpoint *cp, const struct note_key *k,
		      const unsigned char seed[SIGN_SEED_BYTES]);

/*
 * Parse a signed checkpoint into out.  k: the key whose signature line
 * must be present and verify (NULL: parse only, signatures not checked).
 * LF_VERIFY with a reason for anything else.
 */
enum lf_err checkpoint_open(const char *text, size_t len,
			    const struct note_key *k, struct checkpoint *out,
			    struct lf_why *why);

/* Standard base64 with padding; out holds 4 * ((n + 2) / 3) + 1. */
void checkpoint_b64(const unsigned char *in, size_t n, char *out);

/*
 * Decode exactly the canonical base64 of n chars into out (cap bytes):
 * the decoded length, or -1 for anything checkpoint_b64 would not write.
 */
long checkpoint_unb64(const char *in, size_t n, unsigned char *out, size_t cap);

#endif
