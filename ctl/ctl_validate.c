/* SPDX-License-Identifier: MIT */
/*
 * ctl_validate.c - `ledgerctl validate POLICY [MOCKS]`: check policy and
 * mocks documents offline, the same way the daemon will, and warn about
 * mock-mode policy rules that would only ever get the placeholder.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cassette.h"
#include "ctl.h"
#include "mocks.h"
#include "policy.h"

/* Unreadable is a usage-class failure (2), unlike an invalid document (1). */
static int readable(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

/* Parse and inline a file. New reference, or NULL after printing why. */
static json_t *load(const char *path, const char *dir)
{
	struct lf_why why = {{0}};
	json_t *doc = cassette_load_file(path, dir, &why);

	if (!doc)
		fprintf(stderr, "%s: %s\n", path, why.msg);
	return doc;
}

int ctl_validate_main(int argc, char **argv)
{
	const char *ppath, *mpath;
	char *pdir = NULL, where[4200];
	struct lf_why why = {{0}};
	struct policy *pol = NULL;
	struct mocks *lib = NULL;
	json_t *pdoc = NULL, *mdoc = NULL, *gaps = NULL, *g;
	int rc = 1;
	size_t i;

	if (argc < 2 || argc > 3 || argv[1][0] == '-' ||
	    (argc == 3 && argv[2][0] == '-')) {
		fprintf(stderr, "usage: ledgerctl validate POLICY [MOCKS]\n");
		return 2;
	}
	ppath = argv[1];
	mpath = argc == 3 ? argv[2] : NULL;
	if (!readable(ppath) || (mpath && !readable(mpath)))
		return 2;
	pdir = cassette_policy_dir(NULL, mpath);
	pdoc = load(ppath, pdir);
	if (!pdoc)
		goto out;
	if (policy_load(pdoc, &pol, &why)) {
		cassette_where(ppath, why.msg, where, sizeof(where));
		fprintf(stderr, "%s: %s\n", where, why.msg);
		goto out;
	}
	if (mpath) {
		mdoc = load(mpath, NULL);
		if (!mdoc)
			goto out;
		if (mocks_load(mdoc, &lib, &why)) {
			cassette_where(mpath, why.msg, where, sizeof(where));
			fprintf(stderr, "%s: %s\n", where, why.msg);
			goto out;
		}
	}
	printf("%s: ok, %zu rules\n", ppath,
	       json_array_size(json_object_get(pdoc, "interactions")));
	if (mpath)
		printf("%s: ok, %zu rules\n", mpath,
		       json_array_size(json_object_get(mdoc, "mocks")));
	gaps = mocks_uncovered(pdoc, lib, policy_cassettes(pol));
	json_array_foreach(gaps, i, g)
	{
		printf("%s: %s (mode mock): no mock rule covers every call; "
		       "the others get the placeholder\n",
		       ppath, json_string_value(g));
	}
	rc = 0;
out:
	json_decref(gaps);
	mocks_free(lib);
	policy_free(pol);
	json_decref(mdoc);
	json_decref(pdoc);
	free(pdir);
	return rc;
}
