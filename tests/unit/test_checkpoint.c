/* SPDX-License-Identifier: MIT */
/*
 * test_checkpoint.c - signed checkpoints and verifier keys
 * (ledgerfs-ledger(5) CHECKPOINTS): the exact bytes written, the key id
 * of signed-note, canonical base64, every single-bit flip of a signed
 * checkpoint refused, keys of small order refused, and Ed25519 from
 * several threads at once.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

static void test_key(struct note_key *k, unsigned char seed[32])
{
	unsigned char pub[32];
	int i;

	for (i = 0; i < 32; i++)
		seed[i] = (unsigned char)i;
	cr_assert_eq(sign_public(seed, pub), 0);
	checkpoint_key_make(k, "ledgerfs/0123456789abcdef", pub);
}

static char *test_checkpoint(struct note_key *k, unsigned char seed[32],
			     struct checkpoint *cp)
{
	memset(cp, 0, sizeof(*cp));
	strcpy(cp->origin, "ledgerfs/0123456789abcdef/case-1");
	cp->size = 42;
	memset(cp->root, 0xab, sizeof(cp->root));
	test_key(k, seed);
	return checkpoint_sign(cp, k, seed);
}

Test(checkpoint, signed_checkpoint_has_the_documented_bytes)
{
	struct note_key k;
	struct checkpoint cp;
	unsigned char seed[32];
	char *s = test_checkpoint(&k, seed, &cp);
	const char *body = "ledgerfs/0123456789abcdef/case-1\n42\n"
			   "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=\n\n"
			   "\xe2\x80\x94 ledgerfs/0123456789abcdef ";

	cr_assert_not_null(s);
	cr_assert_eq(strncmp(s, body, strlen(body)), 0, "%s", s);
	/* base64 of 4 + 64 bytes, then the final newline. */
	cr_assert_eq(strlen(s), strlen(body) + 92 + 1);
	cr_assert_eq(s[strlen(s) - 1], '\n');
	free(s);
}

Test(checkpoint, own_signature_verifies)
{
	struct note_key k;
	struct checkpoint cp, got;
	unsigned char seed[32];
	struct lf_why why;
	char *s = test_checkpoint(&k, seed, &cp);

	cr_assert_eq(checkpoint_open(s, strlen(s), &k, &got, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_str_eq(got.origin, cp.origin);
	cr_assert_eq(got.size, 42);
	cr_assert_eq(memcmp(got.root, cp.root, 32), 0);
	free(s);
}

Test(checkpoint, every_single_bit_flip_is_refused)
{
	struct note_key k;
	struct checkpoint cp, got;
	unsigned char seed[32];
	struct lf_why why;
	char *s = test_checkpoint(&k, seed, &cp);
	size_t len = strlen(s), i;
	int bit;

	/* Every bit of the whole note: about 1600 checks. */
	for (i = 0; i < len; i++)
		for (bit = 0; bit < 8; bit++) {
			s[i] ^= (char)(1 << bit);
			cr_assert_neq(checkpoint_open(s, len, &k, &got, &why),
				      LF_OK, "byte %zu bit %d", i, bit);
			s[i] ^= (char)(1 << bit);
		}
	free(s);
}

Test(checkpoint, another_key_is_refused)
{
	struct note_key k, other;
	struct checkpoint cp, got;
	unsigned char seed[32], pub[32];
	struct lf_why why;
	char *s = test_checkpoint(&k, seed, &cp);

	seed[0] ^= 1;
	cr_assert_eq(sign_public(seed, pub), 0);
	checkpoint_key_make(&other, k.name, pub);
	cr_assert_eq(checkpoint_open(s, strlen(s), &other, &got, &why),
		     LF_VERIFY);
	free(s);
}

Test(checkpoint, other_keys_signature_lines_of_any_length_are_ignored)
{
	struct note_key k;
	struct checkpoint cp, got;
	unsigned char seed[32], cosig[4 + 8 + 64];
	char b64[200], text[CHECKPOINT_MAX];
	struct lf_why why;
	char *s = test_checkpoint(&k, seed, &cp);

	/* A witness's cosignature/v1 line: 76 bytes, not 68. */
	memset(cosig, 0x5a, sizeof(cosig));
	checkpoint_b64(cosig, sizeof(cosig), b64);
	snprintf(text, sizeof(text), "%s\xe2\x80\x94 witness.example/w1 %s\n",
		 s, b64);
	cr_assert_eq(checkpoint_open(text, strlen(text), &k, &got, &why),
		     LF_OK, "%s", why.msg);
	/* One that is not base64 at all still makes the note malformed. */
	snprintf(text, sizeof(text), "%s\xe2\x80\x94 witness.example/w1 !!\n",
		 s);
	cr_assert_eq(checkpoint_open(text, strlen(text), &k, &got, &why),
		     LF_VERIFY);
	free(s);
}

Test(checkpoint, vkey_round_trips_and_carries_the_signed_note_key_id)
{
	struct note_key k, back;
	unsigned char seed[32];
	struct lf_why why;
	char *v;

	test_key(&k, seed);
	v = checkpoint_vkey(&k);
	cr_assert_not_null(v);
	cr_assert_eq(strncmp(v, "ledgerfs/0123456789abcdef+", 26), 0);
	cr_assert_eq(checkpoint_vkey_parse(v, &back, &why), LF_OK, "%s",
		     why.msg);
	cr_assert_eq(memcmp(back.pub, k.pub, 32), 0);
	cr_assert_eq(memcmp(back.id, k.id, 4), 0);
	/* A key id that does not match is refused. */
	v[27] = v[27] == '0' ? '1' : '0';
	cr_assert_eq(checkpoint_vkey_parse(v, &back, &why), LF_VERIFY);
	free(v);
}

Test(checkpoint, only_canonical_base64_decodes)
{
	unsigned char out[8];

	cr_assert_eq(checkpoint_unb64("AAE=", 4, out, sizeof(out)), 2);
	/* Same bytes with nonzero unused bits: refused. */
	cr_assert_eq(checkpoint_unb64("AAF=", 4, out, sizeof(out)), -1);
	cr_assert_eq(checkpoint_unb64("AAE", 3, out, sizeof(out)), -1);
	cr_assert_eq(checkpoint_unb64("A=E=", 4, out, sizeof(out)), -1);
	cr_assert_eq(checkpoint_unb64("AA-=", 4, out, sizeof(out)), -1);
}

Test(checkpoint, tree_size_has_no_leading_zero)
{
	struct note_key k;
	struct checkpoint cp, got;
	unsigned char seed[32];
	struct lf_why why;
	char *s = test_checkpoint(&k, seed, &cp), *t, *at;

	t = malloc(strlen(s) + 2);
	cr_assert_not_null(t);
	/* "42" becomes "042": unsigned content, so the parse must refuse it. */
	strcpy(t, s);
	at = strstr(t, "\n42\n");
	cr_assert_not_null(at);
	memmove(at + 2, at + 1, strlen(at + 1) + 1);
	at[1] = '0';
	cr_assert_eq(checkpoint_open(t, strlen(t), NULL, &got, &why),
		     LF_VERIFY);
	free(t);
	free(s);
}

/* Points of small order, some with the sign bit set: never a real key. */
static const char *const small_order_hex[] = {
	"0000000000000000000000000000000000000000000000000000000000000000",
	"0100000000000000000000000000000000000000000000000000000000000000",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
	"c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
	"0100000000000000000000000000000000000000000000000000000000000080",
};

static void from_hex(const char *hex, unsigned char *out, size_t n)
{
	size_t i;
	unsigned v;

	for (i = 0; i < n; i++) {
		cr_assert_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (unsigned char)v;
	}
}

/* libgcrypt 1.10 aborts the process on some of these as a public key. */
Test(checkpoint, a_small_order_verifier_key_is_refused_without_a_crash)
{
	unsigned char pub[32], sig[64] = {0};
	size_t i;

	for (i = 0; i < sizeof(small_order_hex) / sizeof(*small_order_hex);
	     i++) {
		from_hex(small_order_hex[i], pub, 32);
		cr_assert(sign_small_order_point(pub), "%s",
			  small_order_hex[i]);
		cr_assert_not(sign_ed25519_verify(pub, "m", 1, sig), "%s",
			      small_order_hex[i]);
	}
}

/* Next to the list, and not on it: p - 2, p + 2, one byte off p - 1. */
Test(checkpoint, a_point_next_to_the_small_order_ones_is_not_refused_as_one)
{
	static const char *const near[] = {
		"ebffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"efffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
		"ecfffffffffffffffffffffffffffffffeffffffffffffffffffffffffffff7f",
		"0200000000000000000000000000000000000000000000000000000000000000",
	};
	unsigned char p[32];
	size_t i;

	for (i = 0; i < sizeof(near) / sizeof(*near); i++) {
		from_hex(near[i], p, 32);
		cr_assert_not(sign_small_order_point(p), "%s", near[i]);
	}
}

/*
 * With an order-8 key A, R = identity and S = 0 satisfy [S]B = R + [k]A
 * whenever 8 divides k, one message in eight ("m" is one of them for
 * libgcrypt 1.10): no signature was ever made, yet it would verify.
 */
Test(checkpoint, a_small_order_key_does_not_sign_every_message)
{
	unsigned char pub[32], sig[64] = {0};

	from_hex(small_order_hex[4], pub, 32);
	sig[0] = 1; /* R: the identity */
	cr_assert_not(sign_ed25519_verify(pub, "m", 1, sig));
}

Test(checkpoint, a_real_key_is_not_of_small_order)
{
	unsigned char seed[32], pub[32], sig[64];
	int i;

	for (i = 0; i < 32; i++)
		seed[i] = (unsigned char)(7 * i + 1);
	cr_assert_eq(sign_public(seed, pub), 0);
	cr_assert_not(sign_small_order_point(pub));
	cr_assert_eq(sign_ed25519(seed, "m", 1, sig), 0);
	cr_assert(sign_ed25519_verify(pub, "m", 1, sig));
}

#define SIGN_THREADS 8

struct sign_job {
	unsigned char seed[32];
	int ok;
};

static void *sign_worker(void *arg)
{
	struct sign_job *j = arg;
	unsigned char pub[32], sig[64];
	int i;

	for (i = 0; i < 8; i++)
		j->ok += sign_public(j->seed, pub) == 0 &&
			 sign_ed25519(j->seed, "row", 3, sig) == 0 &&
			 sign_ed25519_verify(pub, "row", 3, sig);
	return NULL;
}

/*
 * Cases load, turn and close on several threads: signing and verifying
 * from eight at once gives every right answer (and, in the sanitizer
 * build, leaks nothing: libgcrypt alone leaked in about one run of
 * fifteen).
 */
Test(checkpoint, ed25519_from_eight_threads_at_once_is_right_every_time)
{
	struct sign_job job[SIGN_THREADS];
	pthread_t t[SIGN_THREADS];
	int i;

	for (i = 0; i < SIGN_THREADS; i++) {
		memset(job[i].seed, i + 1, 32);
		job[i].ok = 0;
		cr_assert_eq(pthread_create(&t[i], NULL, sign_worker, &job[i]),
			     0);
	}
	for (i = 0; i < SIGN_THREADS; i++) {
		pthread_join(t[i], NULL);
		cr_assert_eq(job[i].ok, 8);
	}
}
