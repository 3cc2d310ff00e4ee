/* SPDX-License-Identifier: MIT */
/*
 * fuzz_cassette.c - fuzz harness for the ledger-to-cassette conversion:
 * the input is JSON lines taken as a case's rows (their args and
 * returned values are the target's, so anything), turned into the replay
 * and compared with itself.  A broken promise aborts: the mocks text
 * must read back as its document, a built replay must load in ledgerfs,
 * a ledger compared with itself must be the same.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cassette_write.h"
#include "doc.h"
#include "fuzz_request.h"
#include "mocks.h"

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

/* Each line that parses as a JSON object is a row. */
static json_t *rows_of(const uint8_t *data, size_t size)
{
	json_t *rows = json_array(), *r;
	size_t at = 0;

	while (rows && at < size) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;

		r = json_loadb((const char *)data + at, len, 0, NULL);
		if (json_is_object(r))
			json_array_append(rows, r);
		json_decref(r);
		at += len + 1;
	}
	return rows;
}

static void check_built(const struct cassette_set *s)
{
	struct lf_why why = {{0}};
	struct mocks *m = NULL;
	json_t *doc = doc_parse(s->mocks_yaml, strlen(s->mocks_yaml), &why);

	CHECK(doc && json_equal(doc, s->mocks));
	json_object_del(doc, "cassette_dir");
	json_object_set(doc, "cassettes", s->recordings);
	CHECK(mocks_load(doc, &m, &why) == LF_OK);
	mocks_free(m);
	json_decref(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cassette_set s;
	struct cassette_diff d;
	struct lf_why why = {{0}};
	json_t *rows = rows_of(data, size), *calls;
	char *line;

	if (!rows)
		return 0;
	if (cassette_build(rows, "F", "# fuzz\n", &s, &why) == LF_OK) {
		check_built(&s);
		cassette_set_clear(&s);
	} else {
		/* The whole reason, not a part: reasons quote tool names. */
		CHECK(strcmp(why.msg,
			     "the mocks text does not read back as written") !=
		      0);
		CHECK(!strchr(why.msg, '\n'));
	}
	calls = cassette_calls(rows, &why);
	if (calls) {
		cassette_compare(calls, calls, &d);
		CHECK(d.same);
		line = cassette_diff_line(&d);
		CHECK(line && !strchr(line, '\n'));
		free(line);
		cassette_diff_clear(&d);
		json_decref(calls);
	}
	json_decref(rows);
	return 0;
}
