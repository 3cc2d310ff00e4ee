#!/bin/sh
# SPDX-License-Identifier: MIT
# python_client.sh - examples/python against a real mount: the standard
# library client's rules and the function-calling loop, as Python
# unittest cases (test_ledgerfs_client.py), then the loop's demo as a
# user runs it.
. "$(dirname "$0")/lib.sh"
# Debian's python3 first: a version manager's shim adds seconds a call.
[ -x /usr/bin/python3 ] && PATH=/usr/bin:$PATH
command -v python3 >/dev/null || lf_skip_all "python3 is not installed"
lf_setup
lf_start
lf_open P
lf_open U
lf_open_reg X
echo close >"$(lf_cdir X)/ctl"

LF_EXAMPLES=$top_srcdir/examples/python LF_DIR=$(lf_tdir P) \
	LF_LEDGER=$(lf_ledger P) LF_CLOSED_DIR=$(lf_tdir X) LF_UNREG_DIR=$(lf_tdir U) \
	LEDGERFS_CASE=P LEDGERFS_TOKEN=$(lf_token P) \
	timeout 120 python3 "$top_srcdir/tests/integration/test_ledgerfs_client.py" \
	>"$work/unittest.out" 2>&1
rc=$?
# One line per test: "name (class.name) ... ok"
sed -n 's/^\(test_[a-z0-9_]*\) .* \.\.\. ok$/ok - \1/p' "$work/unittest.out"
lf_passed=$((lf_passed + $(grep -c ' \.\.\. ok$' "$work/unittest.out")))
if [ "$rc" -ne 0 ]; then
	not_ok python_unittest_passes "$(grep -v ' \.\.\. ok$' "$work/unittest.out" | tail -n 30)"
fi

# The demo as documented, on a case opened with the shipped example files.
timeout 30 "$LEDGERCTL" --mount "$mnt" open D \
	--policy "$top_srcdir/examples/policy.yaml" \
	--mocks "$top_srcdir/examples/mocks.yaml" >/dev/null || exit 99
out=$(LEDGERFS_DIR=$(lf_tdir D) LEDGERFS_CASE=D LEDGERFS_TOKEN=$(lf_token D) \
	timeout 60 python3 "$top_srcdir/examples/python/function_calling_loop.py")
rc=$?
rule_begin the_function_calling_demo_runs_its_script_through_a_case
rule_eq status 0 "$rc"
rule_has answer "$out" '"content": "Ada was messaged; the account was not deleted."'
rule_eq decisions 3 "$(lf_rows D '"phase":"decision"')"
rule_eq results 1 "$(lf_rows D '"phase":"completion"')"
rule_end
lf_finish
