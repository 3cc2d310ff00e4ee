/* SPDX-License-Identifier: MIT */
/*
 * criterion.h (stand-in) - used only when configure found no criterion:
 * each unit test still compiles, its tests become unused functions, and
 * its main reports the whole program as skipped (exit 77 for automake).
 * Install libcriterion-dev to run them.
 */
#ifndef LF_NOCRITERION_H
#define LF_NOCRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct criterion_test_params {
	size_t size;
	void *params;
	size_t length;
};

#define Test(suite, name, ...) static void suite##_##name(void)
#define TestSuite(...) struct lf_nocriterion_suite
#define ParameterizedTestParameters(suite, name)                                \
	static struct criterion_test_params suite##_##name##_params(void)
#define ParameterizedTest(param, suite, name, ...)                             \
	static void suite##_##name(param)
#define cr_make_param_array(...) ((struct criterion_test_params){0, 0, 0})

#define LF_NOCR(...) ((void)0)
#define cr_assert(...) LF_NOCR()
#define cr_assert_not(...) LF_NOCR()
#define cr_assert_fail(...) LF_NOCR()
#define cr_assert_eq(...) LF_NOCR()
#define cr_assert_neq(...) LF_NOCR()
#define cr_assert_lt(...) LF_NOCR()
#define cr_assert_leq(...) LF_NOCR()
#define cr_assert_gt(...) LF_NOCR()
#define cr_assert_geq(...) LF_NOCR()
#define cr_assert_null(...) LF_NOCR()
#define cr_assert_not_null(...) LF_NOCR()
#define cr_assert_str_eq(...) LF_NOCR()
#define cr_assert_str_neq(...) LF_NOCR()
#define cr_assert_str_empty(...) LF_NOCR()
#define cr_assert_str_not_empty(...) LF_NOCR()
#define cr_assert_arr_eq(...) LF_NOCR()
#define cr_assert_zero(...) LF_NOCR()
#define cr_assert_not_zero(...) LF_NOCR()
#define cr_assert_stdout_eq_str(...) LF_NOCR()
#define cr_assert_stderr_eq_str(...) LF_NOCR()
#define cr_expect(...) LF_NOCR()
#define cr_expect_not(...) LF_NOCR()
#define cr_expect_eq(...) LF_NOCR()
#define cr_expect_neq(...) LF_NOCR()
#define cr_expect_lt(...) LF_NOCR()
#define cr_expect_leq(...) LF_NOCR()
#define cr_expect_gt(...) LF_NOCR()
#define cr_expect_geq(...) LF_NOCR()
#define cr_expect_null(...) LF_NOCR()
#define cr_expect_not_null(...) LF_NOCR()
#define cr_expect_str_eq(...) LF_NOCR()
#define cr_expect_str_neq(...) LF_NOCR()
#define cr_log_info(...) LF_NOCR()
#define cr_log_warn(...) LF_NOCR()
#define cr_log_error(...) LF_NOCR()
#define cr_skip_test(...) LF_NOCR()
#define cr_redirect_stdout(...) LF_NOCR()
#define cr_redirect_stderr(...) LF_NOCR()

/* One per program, whichever of its files comes first. */
__attribute__((weak)) int main(void)
{
	puts("SKIP: built without criterion (install libcriterion-dev)");
	return 77;
}

#endif
