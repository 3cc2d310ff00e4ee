/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hostexec.c - fuzz harness for what the executor helper reads from
 * the daemon (ledgerfs(8) HOST EXECUTORS): the bytes go through the frame
 * reader in odd-sized pieces, and every whole frame through the strict
 * request parser.  A request that parses must survive the wire again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostexec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

static void one_frame(const char *body, size_t len)
{
	struct hostexec_request rq, back;
	struct lf_why why;
	size_t tlen;
	char *text;

	if (hostexec_parse_request(body, len, &rq, &why) != LF_OK) {
		CHECK(memchr(why.msg, '\0', sizeof(why.msg)));
		return;
	}
	CHECK(rq.op != HOSTEXEC_RUN || (rq.spec && rq.stdin_text));
	if (rq.op == HOSTEXEC_RUN) {
		CHECK(rq.spec->argc > 0 && rq.spec->argv[0][0] == '/');
		CHECK(rq.spec->argv[rq.spec->argc] == NULL);
	}
	text = hostexec_request_text(&rq, &tlen);
	if (text) {
		CHECK(hostexec_parse_request(text, tlen, &back, &why) == LF_OK);
		CHECK(back.id == rq.id && back.op == rq.op);
		hostexec_request_clear(&back);
		free(text);
	}
	hostexec_request_clear(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hostexec_reader rd = {0};
	const char *body;
	size_t off = 0, piece = 1, len;
	char *room;
	int got;

	/* The whole input as one frame body, then as a framed stream. */
	one_frame((const char *)data, size);
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;

		room = hostexec_reader_space(&rd, n);
		CHECK(room);
		memcpy(room, data + off, n);
		rd.len += n;
		off += n;
		piece = piece * 3 + 1;
		while ((got = hostexec_reader_next(&rd, &body, &len)) == 1) {
			CHECK(len > 0 && len <= HOSTEXEC_FRAME_MAX);
			one_frame(body, len);
		}
		if (got < 0)
			break;
	}
	hostexec_reader_free(&rd);
	return 0;
}
