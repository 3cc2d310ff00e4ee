/* SPDX-License-Identifier: MIT */
/*
 * console_mhd.c - load libmicrohttpd for `ledgerctl console` (see
 * console_mhd.h).  Every other ledgerctl command starts without it.
 */
#define CONSOLE_MHD_LOADER
#include "console_mhd.h"

#include <dlfcn.h>
#include <stdio.h>

struct console_mhd console_mhd;

int console_mhd_load(void)
{
	void *lib = dlopen(CONSOLE_MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *sym;

	if (!lib) {
		fprintf(stderr, "ledgerctl console: cannot load %s: %s\n",
			CONSOLE_MHD_SONAME, dlerror());
		return -1;
	}
	/* Kept loaded until the process ends: its threads run its code. */
#define CONSOLE_MHD_LOAD(f)                                                    \
	if (!(sym = dlsym(lib, #f))) {                                         \
		fprintf(stderr, "ledgerctl console: %s has no %s\n",           \
			CONSOLE_MHD_SONAME, #f);                               \
		return -1;                                                     \
	}                                                                      \
	*(void **)&console_mhd.f = sym;
	CONSOLE_MHD_FUNCTIONS(CONSOLE_MHD_LOAD)
#undef CONSOLE_MHD_LOAD
	return 0;
}
