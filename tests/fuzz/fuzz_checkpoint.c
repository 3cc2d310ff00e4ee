/* SPDX-License-Identifier: MIT */
/*
 * fuzz_checkpoint.c - fuzz harness for what a verifier reads from others
 * (ledgerfs-ledger(5) SIGNED CHECKPOINTS): signed checkpoints, verifier
 * keys and base64.  A checkpoint that parses must be canonical: its body
 * written again is the input's first three lines, byte for byte.  A
 * broken promise aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char out[CHECKPOINT_MAX];
	struct checkpoint cp;
	struct note_key k;
	struct lf_why why = {{0}};
	char *text = malloc(size + 1), *body;
	long n;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (checkpoint_open(text, size, NULL, &cp, &why) == LF_OK) {
		body = checkpoint_body(&cp);
		CHECK(body && strlen(body) <= size &&
		      !memcmp(body, text, strlen(body)));
		free(body);
	} else {
		CHECK(why.msg[0] && !strchr(why.msg, '\n'));
	}
	if (checkpoint_vkey_parse(text, &k, &why) == LF_OK) {
		char *again = checkpoint_vkey(&k);

		CHECK(again && strstr(text, again));
		free(again);
	}
	n = checkpoint_unb64(text, size, out, sizeof(out));
	CHECK(n <= (long)sizeof(out));
	if (n >= 0) {
		char *enc = malloc((size_t)n * 4 / 3 + 8);

		CHECK(enc);
		checkpoint_b64(out, (size_t)n, enc);
		CHECK(strlen(enc) == size && !memcmp(enc, text, size));
		free(enc);
	}
	free(text);
	return 0;
}
