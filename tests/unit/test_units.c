/* SPDX-License-Identifier: MIT */
/*
 * test_units.c - the duration and size grammar (units.h), as tables:
 * input -> accepted value, or refused.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "units.h"

struct units_case {
	const char *in;
	int ok;
	uint64_t want;
};

Test(units, durations_are_n_or_n_with_ms_s_m_h)
{
	static const struct units_case tab[] = {
		{"30", 1, 30000},
		{"30s", 1, 30000},
		{"2m", 1, 120000},
		{"1h", 1, 3600000},
		{"250ms", 1, 250},
		{"0", 1, 0},
		{"2x", 0, 0},
		{"", 0, 0},
		{"-1", 0, 0},
		{"1.5s", 0, 0},
		{" 3", 0, 0},
		{"3 s", 0, 0},
		{"s", 0, 0},
		{"1S", 0, 0},
		{"1d", 0, 0},
		{"99999999999999999999", 0, 0},
		{"9999999999999999h", 0, 0},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct lf_why why = {{0}};
		uint64_t v = 7;
		enum lf_err rc = units_duration_ms(tab[i].in, &v, &why);

		cr_expect_eq(rc == LF_OK, tab[i].ok, "%s", tab[i].in);
		if (tab[i].ok)
			cr_expect_eq(v, tab[i].want, "%s", tab[i].in);
		else
			cr_expect(why.msg[0], "%s has a reason", tab[i].in);
	}
}

Test(units, sizes_are_n_or_n_with_binary_suffixes)
{
	static const struct units_case tab[] = {
		{"512", 1, 512},
		{"4K", 1, 4096},
		{"4KiB", 1, 4096},
		{"64M", 1, 64ULL << 20},
		{"64MiB", 1, 64ULL << 20},
		{"1G", 1, 1ULL << 30},
		{"1GiB", 1, 1ULL << 30},
		{"1k", 0, 0},
		{"1KB", 0, 0},
		{"1MB", 0, 0},
		{"1.5M", 0, 0},
		{"", 0, 0},
		{"M", 0, 0},
		{"-4K", 0, 0},
		{"99999999999G", 0, 0},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct lf_why why = {{0}};
		uint64_t v = 7;
		enum lf_err rc = units_size(tab[i].in, &v, &why);

		cr_expect_eq(rc == LF_OK, tab[i].ok, "%s", tab[i].in);
		if (tab[i].ok)
			cr_expect_eq(v, tab[i].want, "%s", tab[i].in);
	}
}
