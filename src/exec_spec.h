/* SPDX-License-Identifier: MIT */
/*
 * exec_spec.h - a policy rule's `exec:` mapping (ledgerfs-policy(5) HOST
 * EXECUTORS): how the host runs a passed tool itself.  Parsed and checked
 * when the policy loads; run by the executor helper (hostexec.h).
 */
#ifndef LF_EXEC_SPEC_H
#define LF_EXEC_SPEC_H

#include <jansson.h>
#include <stdint.h>

#include "err.h"

#define EXEC_TIMEOUT_DEFAULT_MS 10000ULL
#define EXEC_TIMEOUT_MAX_MS	(3600ULL * 1000)
#define EXEC_OUTPUT_DEFAULT	(1ULL << 20)
#define EXEC_OUTPUT_MAX		(8ULL << 20)
#define EXEC_ARGV_MAX		64
#define EXEC_ARG_BYTES_MAX	4096

struct exec_spec {
	char **argv; /* NULL-terminated; argv[0] an absolute path */
	size_t argc;
	uint64_t timeout_ms;
	uint64_t max_output; /* bytes of stdout */
	char *env_file;	     /* NULL: none */
	char *user;	     /* NULL: the default user (ledgerfs(8) HELPER) */
	char *cwd;	     /* NULL: / */
};

/*
 * Parse v (the value of a rule's `exec` key; borrowed) into a new spec.
 * Unknown keys, a missing or empty argv, a relative argv[0], durations
 * and sizes outside units.h's grammar or the bounds above are refused:
 * LF_EINVAL_DOC with why naming at.exec.KEY.
 */
enum lf_err exec_spec_parse(const json_t *v, const char *at,
			    struct exec_spec **out, struct lf_why *why);

void exec_spec_free(struct exec_spec *s);

/* The spec as the helper's request carries it (new reference). */
json_t *exec_spec_to_json(const struct exec_spec *s);

#endif
