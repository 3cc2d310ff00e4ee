#!/bin/sh
# SPDX-License-Identifier: MIT
# mcp_inspector_cli.sh - the MCP Inspector's CLI mode
# (@modelcontextprotocol/inspector, installed by npm into the build
# folder, cached) lists a case's tools and calls a mocked and a blocked
# tool through ledgerfs-mcp.  The Inspector asks for Node >= 22.19; it
# installs and runs on Debian's Node 20 all the same, and this test skips
# (77) when it does not install or does not run.
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null || lf_skip_all "node is not installed"
command -v npm >/dev/null || lf_skip_all "npm is not installed"
[ -x "$top_builddir/ledgerfs-mcp" ] || lf_skip_all "ledgerfs-mcp not built"
npmdir=$top_builddir/npm-inspector
insp=$npmdir/node_modules/.bin/mcp-inspector
if [ ! -x "$insp" ]; then
	mkdir -p "$npmdir" &&
		(cd "$npmdir" && timeout 600 npm install --no-audit --no-fund \
			--cache "$npmdir/.npm" @modelcontextprotocol/inspector >npm.log 2>&1) ||
		lf_skip_all "npm could not install @modelcontextprotocol/inspector (see $npmdir/npm.log)"
fi
lf_setup
lf_start
ctl() { timeout 30 "$LEDGERCTL" --mount "$mnt" "$@"; }
printf '%s' "$LF_POLICY_DEFAULT" >"$work/policy.yaml"
ctl open I --policy "$work/policy.yaml" \
	--tools "$top_srcdir/tests/data/mcp/tools.json" --env-file "$work/I.env" ||
	exit 99
set -a
. "$work/I.env"
set +a
# inspect ARGS...: one Inspector CLI run against ledgerfs-mcp
inspect() {
	timeout 60 node "$insp" --cli "$top_builddir/ledgerfs-mcp" \
		--dir="$(lf_tdir I)" "$@" 2>>"$work/insp.err"
}
out=$(inspect --method tools/list) ||
	lf_skip_all "the Inspector CLI does not run on node $(node --version): $(tail -c 300 "$work/insp.err")"
rule_begin the_inspector_lists_the_tools_file
rule_has lookup "$out" '"name": "lookup_customer"'
rule_has schema "$out" '"required": ['
rule_end
out=$(inspect --method tools/call --tool-name send_email --tool-arg to=a@b)
rule_begin the_inspector_gets_the_host_result_of_a_mocked_call
rule_has structured "$out" '"status": "sent"'
rule_has row "$(grep -F '"tool":"send_email"' "$(lf_ledger I)")" '"mode":"mock"'
rule_has args "$(grep -F '"tool":"send_email"' "$(lf_ledger I)")" '"args":{"to":"a@b"}'
rule_end
out=$(inspect --method tools/call --tool-name delete_account)
rule_begin the_inspector_gets_a_tool_error_for_a_blocked_call
rule_has isError "$out" '"isError": true'
rule_has reason "$out" "blocked by mediation policy rule"
rule_has row "$(grep -F '"tool":"delete_account"' "$(lf_ledger I)")" '"mode":"block"'
rule_end
lf_finish
