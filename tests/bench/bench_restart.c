/* SPDX-License-Identifier: MIT */
/*
 * bench_restart.c - fills a backing folder with CASES registered cases of
 * CALLS mocked and passed calls each, made by the daemon's own core (real
 * decisions, scenario steps, `when` conditions), for timing a restart
 * (README, restart figure; tests/integration/restart_is_fast.sh).  Run it
 * on a tmpfs, where flushes cost nothing.
 *
 *   bench_restart BACKING KEYFILE CASES CALLS [--sign]
 *
 * With --sign the cases are signed as the daemon signs them (ledgerfs(8)
 * --key: KEYFILE.sign, made when missing; a checkpoint every 1000 rows),
 * for timing `ledgerctl verify --pubkey`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "case.h"
#include "case_ckpt.h"
#include "chain.h"
#include "registry.h"
#include "sign.h"

static const char policy[] = "interactions:\n"
			     "  - {match: lookup_*, mode: pass}\n"
			     "  - {match: resume_line, mode: mock}\n"
			     "  - {match: send_*, mode: mock}\n"
			     "default: {mode: block}\n";
static const char mocks[] =
	"version: 1\n"
	"mocks:\n"
	"  - tool: resume_line\n"
	"    scenario: restore\n"
	"    responses:\n"
	"      - {response: {step: 1}, sets_state: resumed}\n"
	"      - {response: {step: 2}}\n"
	"  - tool: send_*\n"
	"    when: {to: {regex: '^[a-z]+@example[.]com$'}}\n"
	"    response: {status: sent}\n"
	"  - tool: send_*\n"
	"    response: {status: refused}\n";

static int fill_case(struct registry *r, const char *name, long calls)
{
	struct lf_why why = {{0}};
	struct lf_case *c;
	char token[CHAIN_HEX_LEN + 1], line[512], *reply;
	long i;

	if (registry_create(r, name, &c, &why) != LF_OK ||
	    case_set_policy(c, policy, strlen(policy), &why) != LF_OK ||
	    case_set_mocks(c, mocks, strlen(mocks), &why) != LF_OK)
		goto fail;
	case_token(c, token);
	snprintf(line, sizeof(line), "{\"case_id\":\"%s\",\"token\":\"%s\"}",
		 name, token);
	if (case_register(c, line, strlen(line), &why) != LF_OK)
		goto fail;
	for (i = 0; i < calls; i++) {
		static const char *const tools[] = {"resume_line", "send_mail",
						    "lookup_user"};
		snprintf(line, sizeof(line),
			 "{\"call_id\":\"c%ld\",\"tool\":\"%s\",\"args\":"
			 "{\"to\":\"user%ld@example.com\",\"n\":%ld}}",
			 i, tools[i % 3], i, i);
		if (case_call(c, line, strlen(line), &reply, &why) != LF_OK)
			goto fail;
		free(reply);
	}
	return 0;
fail:
	fprintf(stderr, "bench_restart: case %s: %s\n", name, why.msg);
	return -1;
}

/* Sign checkpoints with KEYFILE.sign, as the daemon does.  0 or 1 (said). */
static int set_signer(const char *host_key_path,
		      const unsigned char key[CHAIN_KEY_BYTES])
{
	unsigned char seed[SIGN_SEED_BYTES];
	char fp[CHAIN_FP_LEN + 1], *path = sign_key_path(host_key_path);
	struct lf_why why = {{0}};

	if (!path || chain_load_host_key(path, seed, &why) != LF_OK) {
		fprintf(stderr, "bench_restart: signing key: %s\n",
			path ? why.msg : "out of memory");
		free(path);
		return 1;
	}
	chain_key_fingerprint(key, CHAIN_KEY_BYTES, fp);
	case_ckpt_set_signer(seed, fp);
	free(path);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char key[CHAIN_KEY_BYTES];
	struct case_limits lim = {0};
	struct lf_why why = {{0}};
	struct registry *r;
	char name[32];
	long cases, calls, i;
	int rc = 0;

	if (argc != 5 && (argc != 6 || strcmp(argv[5], "--sign"))) {
		fputs("usage: bench_restart BACKING KEYFILE CASES CALLS [--sign]\n",
		      stderr);
		return 2;
	}
	cases = atol(argv[3]);
	calls = atol(argv[4]);
	chain_init();
	mkdir(argv[1], 0700);
	lim.max_calls = (unsigned long)calls + 1;
	if (chain_load_host_key(argv[2], key, &why) != LF_OK ||
	    registry_open(argv[1], key, &lim, NULL, &r, &why) != LF_OK) {
		fprintf(stderr, "bench_restart: %s\n", why.msg);
		return 1;
	}
	if (argc == 6 && set_signer(argv[2], key) != 0)
		return 1;
	registry_group_commit(r);
	for (i = 0; i < cases && rc == 0; i++) {
		snprintf(name, sizeof(name), "bench%03ld", i);
		rc = fill_case(r, name, calls);
	}
	registry_free(r);
	return rc ? 1 : 0;
}
