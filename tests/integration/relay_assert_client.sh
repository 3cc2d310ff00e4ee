#!/bin/sh
# SPDX-License-Identifier: MIT
# relay_assert_client.sh - ASSERT's own target client
# (RemoteActionMediator, from the reference copy of ASSERT, unchanged)
# drives a real mounted case through ledgerfs-relay (ledgerfs-relay(1)):
# pass runs the tool and reports it, mock and block never run it, a
# failing tool's error is reported, and the ledger holds every row.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relay_lib.sh"
# The reference copy of ASSERT: $ASSERT_DIR, else ../shared/reference/assert
# beside the checkout (or beside its parent, for a worktree).
for d in "${ASSERT_DIR:-}" "$top_srcdir/../shared/reference/assert" \
	"$top_srcdir/../../shared/reference/assert"; do
	[ -n "$d" ] && [ -d "$d/assert_ai/integrations/sandbox" ] && break
	d=
done
[ -n "$d" ] || lf_skip_all "no reference copy of ASSERT (set ASSERT_DIR)"
ASSERT_DIR=$d
command -v python3 >/dev/null || lf_skip_all "python3 missing"
relay_require
lf_setup
lf_start
lf_open_reg C
relay_start C

timeout 60 python3 "$top_srcdir/tests/integration/relay_assert_client.py" \
	"$ASSERT_DIR" "$relay_url" "$RELAY_TOKEN" C >"$work/client.json" 2>"$work/client.err"
rc=$?
out=$(cat "$work/client.json")
assert_eq assert_client_runs_through_the_relay "0" "$rc$(head -c 600 "$work/client.err")"
j() { printf '%s' "$out" | jq -c "$1"; }
led=$(cat "$(lf_ledger C)")
id_of() { j ".records[] | select(.tool==\"$1\") | .id" | tr -d '"'; }

rule_begin pass_runs_the_tool_and_reports_its_result
rule_eq "returned" '{"id":42,"name":"Ada"}' "$(j '.returned.lookup_a')"
rule_eq "decision mode" '"pass"' "$(j '.records[0].decision.mode')"
rule_eq "real_executed" 'true' "$(j '.records[0].decision.real_executed')"
rule_has "completion row" "$(grep -F "\"$(id_of lookup_a)\"" "$(lf_ledger C)" | grep -F '"phase":"completion"')" '"real_executed":true'
rule_end

rule_begin mock_returns_the_hosts_payload_and_never_runs_the_tool
rule_eq "returned" '{"status":"sent"}' "$(j '.returned.send_a')"
rule_eq "mode" '"mock"' "$(j '.records[1].decision.mode')"
rule_eq "mock_source" '"inline"' "$(j '.records[1].decision.mock_source')"
rule_eq "flagged" 'true' "$(j '.records[1].decision.flagged')"
rule_hasnt "ran" "$(j '.ran')" send_a
rule_end

rule_begin block_is_an_error_and_never_runs_the_tool
rule_eq "mode" '"block"' "$(j '.records[2].decision.mode')"
rule_eq "is_error" 'true' "$(j '.records[2].is_error')"
rule_hasnt "ran" "$(j '.ran')" delete_a
rule_end

rule_begin failing_tool_is_reported_as_an_error
rule_has "raised" "$(j '.raised.lookup_broken')" "backend down"
rule_has "completion row" "$(grep -F '"tool":"lookup_broken"' "$(lf_ledger C)" | tr '\n' ' ')" '"is_error":true'
rule_end

rule_begin the_ledger_holds_a_decision_row_per_call
for t in lookup_a send_a delete_a lookup_broken; do
	rule_has "$t" "$led" "\"tool\":\"$t\""
done
rule_end

check ledger_verifies lf_verify C
relay_stop
assert_eq relay_exits_0_on_term 0 $?
relay_check_sanitizer
lf_finish
