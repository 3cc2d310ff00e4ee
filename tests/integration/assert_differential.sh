#!/bin/sh
# SPDX-License-Identifier: MIT
# assert_differential.sh - ASSERT's own Python mediator and a mounted
# ledgerfs decide the same generated documents and calls (fixed seed);
# every difference must be one ledgerfs-policy(5) DIFFERENCES FROM ASSERT
# lists.  Needs ASSERT's code in ../shared/reference/assert (or
# $ASSERT_ROOT) and python3-yaml; skips with a message otherwise.
. "$(dirname "$0")/lib.sh"
: "${ASSERT_ROOT:=$top_srcdir/../shared/reference/assert}"
[ -d "$ASSERT_ROOT/assert_ai/integrations/sandbox" ] ||
	[ -d "$top_srcdir/../../shared/reference/assert/assert_ai" ] ||
	lf_skip_all "ASSERT's code is not in $ASSERT_ROOT"
[ -d "$ASSERT_ROOT/assert_ai" ] ||
	ASSERT_ROOT=$top_srcdir/../../shared/reference/assert
command -v python3 >/dev/null || lf_skip_all "python3 missing"
python3 -c 'import yaml' 2>/dev/null || lf_skip_all "python3-yaml missing"
lf_setup
lf_start
: "${ASSERT_DIFF_SEED:=7}" "${ASSERT_DIFF_CASES:=40}" "${ASSERT_DIFF_CALLS:=12}"
timeout 600 python3 "$top_srcdir/tests/integration/assert_compare.py" \
	"$ASSERT_ROOT" "$mnt" "$LEDGERCTL" "$work/tmp" \
	"$ASSERT_DIFF_SEED" "$ASSERT_DIFF_CASES" "$ASSERT_DIFF_CALLS" \
	>"$work/diff.out" 2>&1
rc=$?
sed 's/^/# /' "$work/diff.out" | tail -n 60
assert_eq no_difference_that_the_man_page_does_not_list 0 "$rc"
lf_finish
