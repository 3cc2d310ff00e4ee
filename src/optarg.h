/* SPDX-License-Identifier: MIT */
/*
 * optarg.h - an option with a value, in both forms every program takes
 * (each program's man page, OPTIONS): "--name VALUE" and "--name=VALUE".
 * Header-only, so that the target's programs, which link no host core,
 * share it with ledgerctl.
 */
#ifndef LF_OPTARG_H
#define LF_OPTARG_H

#include <stdbool.h>
#include <string.h>

/*
 * Is argv[*i] the option name with a value?  Then *val is the value and,
 * in the separate form, *i steps past it.  A name without a value left
 * (the last argument) is not taken: the caller's usage answers it.
 */
static inline bool opt_value(int argc, char **argv, int *i, const char *name,
			     const char **val)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, name, n) != 0)
		return false;
	if (a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (a[n] != '\0' || *i + 1 >= argc)
		return false;
	*val = argv[++*i];
	return true;
}

#endif
