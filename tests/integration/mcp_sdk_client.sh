#!/bin/sh
# SPDX-License-Identifier: MIT
# mcp_sdk_client.sh - an MCP client nobody here wrote drives a case end to
# end: the official TypeScript SDK (@modelcontextprotocol/sdk, installed
# by npm into the build folder, cached) talks to ledgerfs-mcp over stdio;
# passed calls go on to a downstream server written with the same SDK.
# Then the ledger rows are checked.  Skips (77) when npm cannot install.
. "$(dirname "$0")/lib.sh"
here=$top_srcdir/tests/integration
command -v node >/dev/null || lf_skip_all "node is not installed"
command -v npm >/dev/null || lf_skip_all "npm is not installed"
[ -x "$top_builddir/ledgerfs-mcp" ] || lf_skip_all "ledgerfs-mcp not built"
npmdir=$top_builddir/npm-cache
if [ ! -f "$npmdir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	mkdir -p "$npmdir" &&
		(cd "$npmdir" && timeout 300 npm install --no-audit --no-fund \
			--cache "$npmdir/.npm" @modelcontextprotocol/sdk >npm.log 2>&1) ||
		lf_skip_all "npm could not install @modelcontextprotocol/sdk (see $npmdir/npm.log)"
fi
lf_setup
lf_start
ctl() { timeout 30 "$LEDGERCTL" --mount "$mnt" "$@"; }
printf '%s' "$LF_POLICY_DEFAULT" >"$work/policy.yaml"
ctl open M --policy "$work/policy.yaml" \
	--tools "$top_srcdir/tests/data/mcp/tools.json" --env-file "$work/M.env" ||
	exit 99
# The server registers from the environment, as inside a sandbox.
set -a
. "$work/M.env"
set +a
LF_NODE_MODULES=$npmdir/node_modules LF_MCP=$top_builddir/ledgerfs-mcp \
	LF_DIR=$(lf_tdir M) timeout 60 node "$here/mcp_sdk_client.mjs" \
	>"$work/sdk.out" 2>"$work/sdk.err"
sdk_rc=$?
cat "$work/sdk.out"
lf_passed=$((lf_passed + $(grep -c '^ok - ' "$work/sdk.out")))
lf_failed=$((lf_failed + $(grep -c '^not ok - ' "$work/sdk.out")))
if [ "$sdk_rc" -ne 0 ] || ! grep -q '^sdk_failed 0' "$work/sdk.out"; then
	not_ok sdk_client_script_completes "exit $sdk_rc: $(tail -c 800 "$work/sdk.err")"
fi

led=$(lf_ledger M)
row_of() { # TOOL PHASE: the first row of that phase for that tool
	grep -F "\"tool\":\"$1\"" "$led" | grep -F "\"phase\":\"$2\"" | head -n1
}
rule_begin the_sdk_client_registered_the_case_through_the_server
rule_eq rows 1 "$(lf_rows M '"phase":"registered"')"
rule_end
rule_begin the_ledger_records_the_passed_call_and_its_downstream_result
rule_has decision "$(row_of lookup_customer decision)" '"mode":"pass"'
rule_has args "$(row_of lookup_customer decision)" '"args":{"id":42}'
rule_has result "$(row_of lookup_customer completion)" '"structuredContent":{"id":42,"name":"Ada"}'
rule_has executed "$(row_of lookup_customer completion)" '"real_executed":true'
rule_end
rule_begin the_ledger_records_the_mocked_and_the_blocked_call
rule_has mock "$(row_of send_email decision)" '"mode":"mock"'
rule_has block "$(row_of delete_account decision)" '"mode":"block"'
rule_eq "no result rows" "" "$(row_of send_email completion)$(row_of delete_account completion)"
rule_end
rule_begin the_cancelled_call_is_recorded_with_its_cancellation
rule_eq decisions 2 "$(grep -F '"tool":"lookup_slow"' "$led" | grep -cF '"phase":"decision"')"
rule_has result "$(grep -F '"tool":"lookup_slow"' "$led" | grep -F '"phase":"completion"' | tail -n1)" '"message":"cancelled"'
rule_end
check the_ledger_verifies lf_verify M
lf_finish
