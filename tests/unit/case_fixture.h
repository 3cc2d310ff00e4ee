/* SPDX-License-Identifier: MIT */
/*
 * case_fixture.h - what the core's case tests share: a temporary backing
 * folder with its cases/, opened, a host key, and a case registered
 * there.  A test program includes it once; its suite runs
 * case_fixture_setup and case_fixture_teardown around every test.
 */
#ifndef LF_CASE_FIXTURE_H
#define LF_CASE_FIXTURE_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case.h"
#include "chain.h"

static char dir[64];	 /* the backing folder */
static int backing = -1; /* open on it */
static unsigned char key[CHAIN_KEY_BYTES];

/*
 * A new backing folder below parent (/tmp, or /var/tmp where flushes
 * must reach a device), named for the test program; every key byte is
 * key_byte.
 */
static inline void case_fixture_setup(const char *parent, const char *name,
				      unsigned char key_byte)
{
	char sub[96];

	chain_init();
	snprintf(dir, sizeof(dir), "%s/%s.XXXXXX", parent, name);
	cr_assert(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/cases", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	backing = open(dir, O_RDONLY | O_DIRECTORY);
	cr_assert(backing >= 0);
	memset(key, key_byte, sizeof(key));
}

static inline void case_fixture_teardown(void)
{
	char cmd[128];

	close(backing);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
}

/*
 * Case name created under limits l, its rows through group g (NULL: one
 * fdatasync each), with policy and mocks (NULL: none) set, and
 * registered with its token.
 */
static inline struct lf_case *case_fixture_registered(const char *name,
						      struct case_limits l,
						      struct commit_group *g,
						      const char *policy,
						      const char *mocks)
{
	struct lf_case *c;
	struct lf_why why;
	char tok[CHAIN_HEX_LEN + 1], line[256];

	cr_assert_eq(case_create(backing, key, name, &l, &c, &why), LF_OK, "%s",
		     why.msg);
	if (g)
		case_set_commit(c, g);
	cr_assert_eq(case_set_policy(c, policy, strlen(policy), &why), LF_OK,
		     "%s", why.msg);
	if (mocks)
		cr_assert_eq(case_set_mocks(c, mocks, strlen(mocks), &why),
			     LF_OK, "%s", why.msg);
	case_token(c, tok);
	snprintf(line, sizeof(line), "{\"case_id\":\"%s\",\"token\":\"%s\"}",
		 name, tok);
	cr_assert_eq(case_register(c, line, strlen(line), &why), LF_OK, "%s",
		     why.msg);
	return c;
}

#endif
