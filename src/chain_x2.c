/* SPDX-License-Identifier: MIT */
/*
 * chain_x2.c - SHA-256 (FIPS 180-4) on the x86 SHA extensions, two
 * messages at a time (see chain_x2.h).  One message's rounds are a chain
 * in which each step waits for the one before; the processor can run
 * rounds of a second, independent message in those waits, so a row's
 * chain hash and its MAC cost little more than either alone.  libgcrypt
 * hashes one message at a time, so this is the one SHA-256 of our own;
 * test_chain holds it equal to libgcrypt's for every length and join.
 */
#include "chain_x2.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)

#include <cpuid.h>
#include <immintrin.h>

#define X2_TARGET __attribute__((target("sha,sse4.1,ssse3")))

static const uint32_t x2_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static const uint32_t x2_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
				  0xa54ff53a, 0x510e527f, 0x9b05688c,
				  0x1f83d9ab, 0x5be0cd19};

bool chain_x2_usable(void)
{
	unsigned a, b, c, d;

	/* SSSE3 and SSE4.1: leaf 1, ecx bits 9 and 19; SHA: leaf 7, ebx 29. */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) ||
	    !(c & (1u << 19)))
		return false;
	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
		return false;
	return (b & (1u << 29)) != 0;
}

/*
 * A hash state as the extensions want it: a, b, e, f in s0 and c, d, g,
 * h in s1.
 */
struct x2_state {
	__m128i s0, s1;
};

X2_TARGET static struct x2_state x2_load(const uint32_t h[8])
{
	__m128i dcba = _mm_loadu_si128((const __m128i *)&h[0]);
	__m128i hgfe = _mm_loadu_si128((const __m128i *)&h[4]);
	__m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
	__m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
	struct x2_state s;

	s.s0 = _mm_alignr_epi8(cdab, efgh, 8);	  /* abef */
	s.s1 = _mm_blend_epi16(efgh, cdab, 0xF0); /* cdgh */
	return s;
}

X2_TARGET static void x2_store(struct x2_state s, uint32_t h[8])
{
	__m128i feba = _mm_shuffle_epi32(s.s0, 0x1B);
	__m128i dchg = _mm_shuffle_epi32(s.s1, 0xB1);

	_mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
	_mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

/* The digest of a state: its words big-endian. */
X2_TARGET static void x2_digest(struct x2_state s, unsigned char out[32])
{
	uint32_t h[8];
	int i;

	x2_store(s, h);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (unsigned char)(h[i] >> 24);
		out[4 * i + 1] = (unsigned char)(h[i] >> 16);
		out[4 * i + 2] = (unsigned char)(h[i] >> 8);
		out[4 * i + 3] = (unsigned char)h[i];
	}
}

/* Four words of a block, big-endian. */
#define X2_LOAD(p, i)                                                          \
	_mm_shuffle_epi8(                                                      \
		_mm_loadu_si128((const __m128i *)((p) + 16 * (i))),            \
		_mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL))
/* w0 becomes the next four words of the schedule from the last sixteen. */
#define X2_NEXT(w0, w1, w2, w3)                                                \
	((w0) = _mm_sha256msg2_epu32(                                          \
		 _mm_add_epi32(_mm_sha256msg1_epu32((w0), (w1)),               \
			       _mm_alignr_epi8((w3), (w2), 4)),                \
		 (w3)))
/* Four rounds of state s with the words w of group i. */
#define X2_ROUNDS(s0, s1, w, i)                                                \
	do {                                                                   \
		__m128i m_ = _mm_add_epi32(                                    \
			(w),                                                   \
			_mm_loadu_si128((const __m128i *)&x2_k[4 * (i)]));     \
		(s1) = _mm_sha256rnds2_epu32((s1), (s0), m_);                  \
		(s0) = _mm_sha256rnds2_epu32((s0), (s1),                       \
					     _mm_shuffle_epi32(m_, 0x0E));     \
	} while (0)

/*
 * Rounds 16 to 63 of state s0, s1, the schedule w0..w3 holding the words
 * of the last four groups.
 */
#define X2_LATER_ROUNDS(s0, s1, w0, w1, w2, w3)                                \
	do {                                                                   \
		int i_;                                                        \
		for (i_ = 4; i_ < 16; i_ += 4) {                               \
			X2_NEXT(w0, w1, w2, w3);                               \
			X2_ROUNDS(s0, s1, w0, i_);                             \
			X2_NEXT(w1, w2, w3, w0);                               \
			X2_ROUNDS(s0, s1, w1, i_ + 1);                         \
			X2_NEXT(w2, w3, w0, w1);                               \
			X2_ROUNDS(s0, s1, w2, i_ + 2);                         \
			X2_NEXT(w3, w0, w1, w2);                               \
			X2_ROUNDS(s0, s1, w3, i_ + 3);                         \
		}                                                              \
	} while (0)

/* Rounds 0 to 15 of state s0, s1 from block p, its words into w0..w3. */
#define X2_FIRST_ROUNDS(s0, s1, p, w0, w1, w2, w3)                             \
	do {                                                                   \
		(w0) = X2_LOAD(p, 0);                                          \
		(w1) = X2_LOAD(p, 1);                                          \
		(w2) = X2_LOAD(p, 2);                                          \
		(w3) = X2_LOAD(p, 3);                                          \
		X2_ROUNDS(s0, s1, w0, 0);                                      \
		X2_ROUNDS(s0, s1, w1, 1);                                      \
		X2_ROUNDS(s0, s1, w2, 2);                                      \
		X2_ROUNDS(s0, s1, w3, 3);                                      \
	} while (0)

/* One block p into state x. */
X2_TARGET static void x2_block(struct x2_state *x, const unsigned char *p)
{
	__m128i a0 = x->s0, a1 = x->s1, w0, w1, w2, w3;

	X2_FIRST_ROUNDS(a0, a1, p, w0, w1, w2, w3);
	X2_LATER_ROUNDS(a0, a1, w0, w1, w2, w3);
	x->s0 = _mm_add_epi32(x->s0, a0);
	x->s1 = _mm_add_epi32(x->s1, a1);
}

/*
 * Block p into state x and block q into state y.  Written one after the
 * other, the two run interleaved: the processor runs ahead into y's
 * rounds while each of x's waits for the one before.
 */
X2_TARGET static void x2_blocks(struct x2_state *x, const unsigned char *p,
				struct x2_state *y, const unsigned char *q)
{
	__m128i a0 = x->s0, a1 = x->s1, w0, w1, w2, w3;
	__m128i b0 = y->s0, b1 = y->s1, v0, v1, v2, v3;

	X2_FIRST_ROUNDS(a0, a1, p, w0, w1, w2, w3);
	X2_FIRST_ROUNDS(b0, b1, q, v0, v1, v2, v3);
	X2_LATER_ROUNDS(a0, a1, w0, w1, w2, w3);
	X2_LATER_ROUNDS(b0, b1, v0, v1, v2, v3);
	x->s0 = _mm_add_epi32(x->s0, a0);
	x->s1 = _mm_add_epi32(x->s1, a1);
	y->s0 = _mm_add_epi32(y->s0, b0);
	y->s1 = _mm_add_epi32(y->s1, b1);
}

/*
 * A message as 64-byte blocks: two pieces, then the padding with the
 * length in bits of prefix bytes hashed before it and the message (FIPS
 * 180-4 5.1.1).  A block wholly inside a piece is read in place; the one
 * across the pieces' join, and the last one or two, are copies.
 */
struct x2_msg {
	const unsigned char *p[2];
	size_t n[2];
	size_t full;   /* blocks of the message's own bytes */
	size_t blocks; /* full and the tail's one or two */
	unsigned char join[64];
	unsigned char tail[128];
};

/* len bytes of the message from off into out. */
static void x2_msg_copy(const struct x2_msg *m, size_t off, size_t len,
			unsigned char *out)
{
	size_t k;

	if (off < m->n[0]) {
		k = m->n[0] - off < len ? m->n[0] - off : len;
		memcpy(out, m->p[0] + off, k);
		out += k;
		off += k;
		len -= k;
	}
	if (len)
		memcpy(out, m->p[1] + (off - m->n[0]), len);
}

static void x2_msg_init(struct x2_msg *m, const void *a, size_t an,
			const void *b, size_t bn, size_t prefix)
{
	size_t len = an + bn, rest = len % 64, tl = rest < 56 ? 64 : 128;
	uint64_t bits = (uint64_t)(prefix + len) * 8;
	int i;

	m->p[0] = a;
	m->n[0] = an;
	m->p[1] = b;
	m->n[1] = bn;
	m->full = len / 64;
	m->blocks = m->full + tl / 64;
	memset(m->tail, 0, sizeof(m->tail));
	x2_msg_copy(m, len - rest, rest, m->tail);
	m->tail[rest] = 0x80;
	for (i = 0; i < 8; i++)
		m->tail[tl - 1 - i] = (unsigned char)(bits >> (8 * i));
}

static const unsigned char *x2_msg_block(struct x2_msg *m, size_t j)
{
	size_t off = 64 * j;

	if (j >= m->full)
		return m->tail + 64 * (j - m->full);
	if (off + 64 <= m->n[0])
		return m->p[0] + off;
	if (off >= m->n[0])
		return m->p[1] + (off - m->n[0]);
	x2_msg_copy(m, off, 64, m->join);
	return m->join;
}

/* The state after the key's pad of byte (0x36 inner, 0x5c outer). */
X2_TARGET static void x2_pad_state(const unsigned char key[32],
				   unsigned char byte, uint32_t state[8])
{
	unsigned char pad[64];
	struct x2_state s = x2_load(x2_iv);
	int i;

	/* The key is shorter than a block, so it is zero-padded. */
	memset(pad, byte, sizeof(pad));
	for (i = 0; i < 32; i++)
		pad[i] ^= key[i];
	x2_block(&s, pad);
	x2_store(s, state);
	explicit_bzero(pad, sizeof(pad));
}

void chain_x2_pads(const unsigned char key[32], struct chain_x2_pads *p)
{
	x2_pad_state(key, 0x36, p->in);
	x2_pad_state(key, 0x5c, p->out);
}

X2_TARGET void chain_x2_sha256_hmac(const void *line, size_t n, const void *a,
				    size_t an, const void *b, size_t bn,
				    const struct chain_x2_pads *p,
				    unsigned char hash[32],
				    unsigned char mac[32])
{
	struct x2_msg ml, mm;
	struct x2_state h = x2_load(x2_iv), k = x2_load(p->in), o;
	unsigned char last[64];
	size_t j;

	x2_msg_init(&ml, line, n, NULL, 0, 0);
	x2_msg_init(&mm, a, an, b, bn, 64); /* after the inner pad's block */
	for (j = 0; j < ml.blocks && j < mm.blocks; j++)
		x2_blocks(&h, x2_msg_block(&ml, j), &k, x2_msg_block(&mm, j));
	for (; j < ml.blocks; j++)
		x2_block(&h, x2_msg_block(&ml, j));
	for (; j < mm.blocks; j++)
		x2_block(&k, x2_msg_block(&mm, j));
	x2_digest(h, hash);
	/* The outer hash: the inner digest after the outer pad's block. */
	memset(last, 0, sizeof(last));
	x2_digest(k, last);
	last[32] = 0x80;
	last[62] = (96 * 8) >> 8;
	last[63] = (96 * 8) & 0xff;
	o = x2_load(p->out);
	x2_block(&o, last);
	x2_digest(o, mac);
}

#else /* not x86: chain.c never calls the two below */

bool chain_x2_usable(void)
{
	return false;
}

void chain_x2_pads(const unsigned char key[32], struct chain_x2_pads *p)
{
	(void)key;
	(void)p;
	abort();
}

void chain_x2_sha256_hmac(const void *line, size_t n, const void *a, size_t an,
			  const void *b, size_t bn,
			  const struct chain_x2_pads *p, unsigned char hash[32],
			  unsigned char mac[32])
{
	(void)line, (void)n, (void)a, (void)an, (void)b, (void)bn, (void)p;
	(void)hash, (void)mac;
	abort();
}

#endif
