/* SPDX-License-Identifier: MIT */
/*
 * fuzz_doc.c - fuzz harness for policy and mocks documents: the input is
 * YAML or JSON text, read by the one document parser, then loaded both as
 * a policy and as a mock library by the daemon's own loaders; a library
 * that loads resolves a few calls.  A broken promise aborts.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "mocks.h"
#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			abort();                                               \
	} while (0)

static void check_reason(enum lf_err e, const struct lf_why *why)
{
	const char *end = memchr(why->msg, '\0', sizeof(why->msg));

	CHECK(e == LF_EINVAL_DOC || e == LF_NOMEM);
	CHECK(end && end != why->msg);
	CHECK(!strchr(why->msg, '\n'));
}

/* The tools and arguments a fuzzed library is asked about. */
static void resolve_some(const struct mocks *lib, const struct policy *pol)
{
	static const char *const tools[] = {"t", "lookup_a", "send_x", "*"};
	struct mocks_state *st = mocks_state_new();
	json_t *args = json_pack("{s:s, s:i, s:[s]}", "a", "aaaaaaaa!", "n", 5,
				 "l", "x");
	struct mock_result mr;
	struct lf_why why;
	size_t i;

	for (i = 0; st && args && i < sizeof(tools) / sizeof(tools[0]); i++) {
		struct policy_decision d;
		enum lf_err e;

		policy_decide(pol, tools[i], &d);
		e = mocks_resolve(lib, st, "case", tools[i], args, d.rule,
				  policy_cassettes(pol), &mr, &why);
		/* LF_EINVAL_JSON: a condition's error, as ASSERT's HTTP 400. */
		CHECK(e == LF_OK || e == LF_PATTERN_LIMIT || e == LF_NOMEM ||
		      e == LF_EINVAL_JSON);
		if (e == LF_OK)
			mocks_result_clear(&mr);
	}
	json_decref(args);
	mocks_state_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lf_why why = {{0}};
	struct policy *pol = NULL;
	struct mocks *lib = NULL;
	enum lf_err e;
	json_t *doc;

	doc = doc_parse((const char *)data, size, &why);
	if (!doc) {
		check_reason(LF_EINVAL_DOC, &why);
		return 0;
	}
	e = policy_load(doc, &pol, &why);
	if (e != LF_OK)
		check_reason(e, &why);
	e = mocks_load(doc, &lib, &why);
	if (e != LF_OK)
		check_reason(e, &why);
	if (lib)
		resolve_some(lib, pol);
	mocks_free(lib);
	policy_free(pol);
	json_decref(doc);
	return 0;
}
