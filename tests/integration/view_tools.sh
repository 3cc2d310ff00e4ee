#!/bin/sh
# SPDX-License-Identifier: MIT
# view_tools.sh - the tools file (ledgerfs(8) FILES, ledgerctl(1) open
# --tools): shown read-only to the target as target/tools, made from the
# policy's names without wildcards when none is given, frozen at
# registration, and kept in case.json with its hash, checked at load.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
ctl() { timeout 30 "$LEDGERCTL" --mount "$mnt" "$@"; }
tools=$top_srcdir/tests/data/mcp/tools.json
printf '%s' "$LF_POLICY_DEFAULT
" >"$work/policy.yaml"
# A policy with exact names beside the wildcards of the default one.
printf '%s' 'interactions:
  - match: lookup_customer
    mode: pass
  - match: send_*
    mode: mock
    mock: {status: sent}
  - match: get_weather
    mode: pass
  - match: lookup_customer
    mode: block
default: {mode: block}
' >"$work/exact.yaml"

ctl open T --policy "$work/policy.yaml" --tools "$tools" >"$work/T.env"
assert_eq target_tools_shows_the_tools_file_given_at_open \
	"$(cat "$tools")" "$(cat "$mnt/cases/T/target/tools")"

ctl open P --policy "$work/exact.yaml" >/dev/null
assert_eq target_tools_without_a_file_lists_the_policy_names_without_wildcards \
	'{"tools":[{"name":"lookup_customer","inputSchema":{"type":"object"}},{"name":"get_weather","inputSchema":{"type":"object"}}]}' \
	"$(cat "$mnt/cases/P/target/tools")"

out=$(timeout 10 "$LFWRITE" "$mnt/cases/T/target/tools" '{"tools":[]}\n' 2>&1)
assert_contains target_tools_is_read_only "$out" "open=EROFS"

printf '{"tools":[{"name":""}]}' >"$work/bad.json"
rule_begin a_malformed_tools_file_is_refused_at_open
err=$(ctl open B --policy "$work/policy.yaml" --tools "$work/bad.json" 2>&1)
rule_eq status 1 $?
rule_has reason "$err" "tools[0].name"
rule_end

# ledgerctl(1) open: FILE:LINE: reason, the line of the tool it names;
# what MCP's Tool asks of a member an SDK client checks is checked too.
printf '{"tools":[\n {"name":"a"},\n {"name":"b"},\n {"name":"c",\n  "outputSchema":{"type":"string"}}\n]}\n' \
	>"$work/bad-line.json"
printf '{"tools":[\n {"name":"a"},\n {"name":"a"}\n]}\n' >"$work/twice.json"
rule_begin a_refused_tools_file_is_named_with_the_line_of_its_fault
err=$(ctl open B --policy "$work/policy.yaml" --tools "$work/bad-line.json" 2>&1)
rule_eq status 1 $?
rule_has reason "$err" "$work/bad-line.json:5: tools[2].outputSchema: an object whose \"type\" is \"object\""
err=$(ctl open B --policy "$work/policy.yaml" --tools "$work/twice.json" 2>&1)
rule_eq "status, a name twice" 1 $?
rule_has "a name twice" "$err" "$work/twice.json:3: tools[1].name: 'a' is tools[0]'s already"
[ -e "$mnt/cases/B" ] && rule_fail "a refused open left case B"
rule_end

rule_begin the_view_refuses_a_malformed_tools_file
out=$(timeout 10 "$LFWRITE" "$mnt/cases/P/tools" '{"tools":{}}' 2>&1)
rule_has close "$out" "close=EINVAL"
rule_eq "tools kept" "" "$(cat "$mnt/cases/P/tools")"
rule_end

rule_begin case_json_records_the_tools_file_and_its_hash
sum=$(sha256sum <"$tools" | cut -d' ' -f1)
meta=$(cat "$backing/cases/T/case.json")
rule_has hash "$meta" "\"tools_sha256\":\"$sum\""
rule_has text "$meta" '"tools":"{\"tools\":['
rule_end

lf_register T
rule_begin the_registered_row_records_the_tools_hash
rule_has row "$(grep -F '"phase":"registered"' "$(lf_ledger T)")" "\"tools_sha256\":\"$sum\""
rule_end

out=$(timeout 10 "$LFWRITE" "$mnt/cases/T/tools" '{"tools":[]}' 2>&1)
assert_contains tools_are_frozen_once_the_target_registered "$out" "close=EBUSY"

rule_begin an_export_carries_the_tools_file
ctl export T "$work/T.tar" --backing "$backing" --key "$key" >/dev/null 2>&1
rule_eq member "$(cat "$tools")" "$(tar -xOf "$work/T.tar" T/tools.json 2>&1)"
rule_has sums "$(tar -xOf "$work/T.tar" T/SHA256SUMS)" "$sum  tools.json"
rule_eq verify 0 "$(ctl verify "$work/T.tar" --key "$key" >/dev/null 2>&1; echo $?)"
rule_end

# Tamper with the stored tools file while the daemon is down.
lf_stop
sed -i 's/Find a customer/Find anybody/' "$backing/cases/T/case.json"
lf_start
rule_begin a_tools_file_changed_in_case_json_stops_the_case_loading
rule_eq "not serving" "" "$(lf_state T | grep -v failed)"
rule_has daemon "$(cat "$work/daemon.err")" "tools do not match tools_sha256"
rule_eq "no calls taken" 1 "$(lf_write T request '{"call_id":"x","tool":"lookup_a"}\n' | grep -c 'write=E')"
rule_eq "other case served" "yes" "$([ -d "$mnt/cases/P" ] && echo yes || echo no)"
rule_end
lf_finish
