/* SPDX-License-Identifier: MIT */
/*
 * checkpoint.c - C2SP tlog-checkpoint and signed-note, Ed25519 only
 * (ledgerfs-ledger(5) SIGNED CHECKPOINTS).  Everything read is checked to be the
 * canonical form, so no two texts carry the same checkpoint: a flipped bit
 * anywhere is a refusal, never a silent equivalent.
 */
#include "checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* U+2014 EM DASH and a space: what starts a signature line. */
#define DASH "\xe2\x80\x94 "

static const char b64_digits[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void checkpoint_b64(const unsigned char *in, size_t n, char *out)
{
	size_t i, o = 0;
	unsigned long v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned long)in[i] << 16 | (unsigned long)in[i + 1] << 8 |
		    in[i + 2];
		out[o++] = b64_digits[v >> 18 & 63];
		out[o++] = b64_digits[v >> 12 & 63];
		out[o++] = b64_digits[v >> 6 & 63];
		out[o++] = b64_digits[v & 63];
	}
	if (n - i == 1) {
		v = (unsigned long)in[i] << 16;
		out[o++] = b64_digits[v >> 18 & 63];
		out[o++] = b64_digits[v >> 12 & 63];
		out[o++] = '=';
		out[o++] = '=';
	} else if (n - i == 2) {
		v = (unsigned long)in[i] << 16 | (unsigned long)in[i + 1] << 8;
		out[o++] = b64_digits[v >> 18 & 63];
		out[o++] = b64_digits[v >> 12 & 63];
		out[o++] = b64_digits[v >> 6 & 63];
		out[o++] = '=';
	}
	out[o] = '\0';
}

long checkpoint_unb64(const char *in, size_t n, unsigned char *out, size_t cap)
{
	unsigned char tmp[CHECKPOINT_MAX];
	char again[CHECKPOINT_MAX + 4];
	size_t i, o = 0, pad = 0;
	unsigned long v = 0;
	const char *d;

	if (n == 0 || n % 4 || n > CHECKPOINT_MAX)
		return -1;
	if (in[n - 1] == '=')
		pad = in[n - 2] == '=' ? 2 : 1;
	for (i = 0; i < n; i++) {
		if (i >= n - pad) {
			if (in[i] != '=')
				return -1;
			v <<= 6;
		} else {
			d = in[i] ? strchr(b64_digits, in[i]) : NULL;
			if (!d)
				return -1;
			v = v << 6 | (unsigned long)(d - b64_digits);
		}
		if (i % 4 == 3) {
			tmp[o++] = (unsigned char)(v >> 16);
			tmp[o++] = (unsigned char)(v >> 8);
			tmp[o++] = (unsigned char)v;
			v = 0;
		}
	}
	o -= pad;
	if (o > cap)
		return -1;
	/* Canonical only: the unused bits of the last digit must be zero. */
	checkpoint_b64(tmp, o, again);
	if (strlen(again) != n || memcmp(again, in, n) != 0)
		return -1;
	memcpy(out, tmp, o);
	return (long)o;
}

void checkpoint_key_name(const char *host_fp, char out[CHECKPOINT_NAME_MAX])
{
	snprintf(out, CHECKPOINT_NAME_MAX, "ledgerfs/%s", host_fp);
}

void checkpoint_key_make(struct note_key *k, const char *name,
			 const unsigned char pub[SIGN_PUB_BYTES])
{
	static const unsigned char sep[2] = {0x0a, CHECKPOINT_ED25519};
	unsigned char d[SIGN_HASH_BYTES];
	struct sign_buf v[3] = {
		{name, strlen(name)}, {sep, 2}, {pub, SIGN_PUB_BYTES}};

	snprintf(k->name, sizeof(k->name), "%s", name);
	memcpy(k->pub, pub, SIGN_PUB_BYTES);
	sign_sha256v(v, 3, d);
	memcpy(k->id, d, 4);
}

char *checkpoint_vkey(const struct note_key *k)
{
	unsigned char raw[1 + SIGN_PUB_BYTES];
	char b64[64], *s = NULL;

	raw[0] = CHECKPOINT_ED25519;
	memcpy(raw + 1, k->pub, SIGN_PUB_BYTES);
	checkpoint_b64(raw, sizeof(raw), b64);
	if (asprintf(&s, "%s+%02x%02x%02x%02x+%s", k->name, k->id[0], k->id[1],
		     k->id[2], k->id[3], b64) < 0)
		return NULL;
	return s;
}

/* A key name as signed-note allows: non-empty, no space, '+' or control. */
static int checkpoint_name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n >= CHECKPOINT_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || s[i] == '+' || s[i] == 0x7f)
			return 0;
	return 1;
}

static int checkpoint_hex_byte(const char *s)
{
	int v = 0, i;

	for (i = 0; i < 2; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else
			return -1;
	}
	return v;
}

enum lf_err checkpoint_vkey_parse(const char *s, struct note_key *k,
				  struct lf_why *why)
{
	unsigned char raw[1 + SIGN_PUB_BYTES], id[4];
	const char *plus, *b64, *end;
	char name[CHECKPOINT_NAME_MAX];
	int i, b;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\n' || end[-1] == '\r'))
		end--;
	plus = memchr(s, '+', (size_t)(end - s));
	if (!plus || !checkpoint_name_ok(s, (size_t)(plus - s)) ||
	    end - plus < 10 || plus[9] != '+')
		return lf_fail(why, LF_VERIFY,
			       "verifier key: not NAME+HEXID+BASE64");
	for (i = 0; i < 4; i++) {
		b = checkpoint_hex_byte(plus + 1 + 2 * i);
		if (b < 0)
			return lf_fail(
				why, LF_VERIFY,
				"verifier key: key id is not 8 hex digits");
		id[i] = (unsigned char)b;
	}
	b64 = plus + 10;
	if (checkpoint_unb64(b64, (size_t)(end - b64), raw, sizeof(raw)) !=
		    (long)sizeof(raw) ||
	    raw[0] != CHECKPOINT_ED25519)
		return lf_fail(
			why, LF_VERIFY,
			"verifier key: not an Ed25519 key (0x01 and 32 bytes, base64)");
	memcpy(name, s, (size_t)(plus - s));
	name[plus - s] = '\0';
	checkpoint_key_make(k, name, raw + 1);
	if (memcmp(k->id, id, 4) != 0)
		return lf_fail(
			why, LF_VERIFY,
			"verifier key: key id does not match name and key");
	return LF_OK;
}

char *checkpoint_body(const struct checkpoint *cp)
{
	char b64[48], *s = NULL;

	checkpoint_b64(cp->root, MERKLE_HASH, b64);
	if (asprintf(&s, "%s\n%llu\n%s\n", cp->origin,
		     (unsigned long long)cp->size, b64) < 0)
		return NULL;
	return s;
}

char *checkpoint_sign(const struct checkpoint *cp, const struct note_key *k,
		      const unsigned char seed[SIGN_SEED_BYTES])
{
	unsigned char sig[4 + SIGN_SIG_BYTES];
	char b64[128], *body, *s = NULL;

	body = checkpoint_body(cp);
	if (!body)
		return NULL;
	memcpy(sig, k->id, 4);
	if (sign_ed25519(seed, body, strlen(body), sig + 4) == 0) {
		checkpoint_b64(sig, sizeof(sig), b64);
		if (asprintf(&s, "%s\n" DASH "%s %s\n", body, k->name, b64) < 0)
			s = NULL;
	}
	free(body);
	return s;
}

/* Next line of [*p, end) without its newline; -1 when none ends. */
static int checkpoint_line(const char **p, const char *end, const char **line,
			   size_t *len)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));

	if (!nl)
		return -1;
	*line = *p;
	*len = (size_t)(nl - *p);
	*p = nl + 1;
	return 0;
}

/* Tree size: decimal, no leading zero, under 2^63. */
static int checkpoint_size(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 19 || (n > 1 && s[0] == '0'))
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >> 63)
		return -1;
	*out = v;
	return 0;
}

/*
 * One signature line (after the dash): does it carry k's valid signature
 * of body?  -1 malformed, 0 another key's, 1 k's and valid, 2 k's, bad.
 */
static int checkpoint_sigline(const char *s, size_t n, const char *body,
			      size_t body_len, const struct note_key *k)
{
	/* Other keys may sign with other schemes (a witness's cosignature). */
	unsigned char sig[CHECKPOINT_MAX];
	const char *sp = memchr(s, ' ', n);
	long got;

	if (!sp || !checkpoint_name_ok(s, (size_t)(sp - s)))
		return -1;
	got = checkpoint_unb64(sp + 1, n - (size_t)(sp + 1 - s), sig,
			       sizeof(sig));
	if (got < 5)
		return -1;
	if (!k || strlen(k->name) != (size_t)(sp - s) ||
	    memcmp(k->name, s, (size_t)(sp - s)) != 0 ||
	    memcmp(sig, k->id, 4) != 0)
		return 0;
	if (got != 4 + SIGN_SIG_BYTES)
		return 2;
	return sign_ed25519_verify(k->pub, body, body_len, sig + 4) ? 1 : 2;
}

enum lf_err checkpoint_open(const char *text, size_t len,
			    const struct note_key *k, struct checkpoint *out,
			    struct lf_why *why)
{
	const char *p = text, *end = text + len, *l[3], *sl;
	size_t n[3], sn, body_len;
	int i, found = 0, r, lines = 0;

	if (len > CHECKPOINT_MAX || memchr(text, '\0', len))
		return lf_fail(why, LF_VERIFY,
			       "checkpoint: over %d bytes or holds NUL",
			       CHECKPOINT_MAX);
	for (i = 0; i < 3; i++)
		if (checkpoint_line(&p, end, &l[i], &n[i]) < 0 || n[i] == 0)
			return lf_fail(
				why, LF_VERIFY,
				"checkpoint: body is not origin, size and root lines");
	body_len = (size_t)(p - text);
	if (n[0] >= CHECKPOINT_ORIGIN_MAX)
		return lf_fail(why, LF_VERIFY, "checkpoint: origin too long");
	memcpy(out->origin, l[0], n[0]);
	out->origin[n[0]] = '\0';
	if (checkpoint_size(l[1], n[1], &out->size) < 0)
		return lf_fail(
			why, LF_VERIFY,
			"checkpoint: tree size is not a decimal without leading zeros");
	if (checkpoint_unb64(l[2], n[2], out->root, MERKLE_HASH) != MERKLE_HASH)
		return lf_fail(
			why, LF_VERIFY,
			"checkpoint: root is not the base64 of 32 bytes");
	/* ledgerfs writes no extension lines: the blank line comes next. */
	if (p == end || *p != '\n')
		return lf_fail(
			why, LF_VERIFY,
			"checkpoint: no blank line after the three body lines");
	p++;
	while (p < end) {
		if (checkpoint_line(&p, end, &sl, &sn) < 0)
			return lf_fail(why, LF_VERIFY,
				       "checkpoint: last line has no newline");
		if (sn < 4 || memcmp(sl, DASH, 4) != 0)
			return lf_fail(
				why, LF_VERIFY,
				"checkpoint: a signature line does not start with an em dash and a space");
		r = checkpoint_sigline(sl + 4, sn - 4, text, body_len, k);
		if (r < 0)
			return lf_fail(why, LF_VERIFY,
				       "checkpoint: malformed signature line");
		if (r == 2)
			return lf_fail(
				why, LF_VERIFY,
				"checkpoint: signature of %s does not verify",
				k->name);
		found |= r == 1;
		lines++;
	}
	if (lines == 0)
		return lf_fail(why, LF_VERIFY, "checkpoint: no signature line");
	if (k && !found)
		return lf_fail(
			why, LF_VERIFY,
			"checkpoint: not signed by %s (key id %02x%02x%02x%02x)",
			k->name, k->id[0], k->id[1], k->id[2], k->id[3]);
	return LF_OK;
}
