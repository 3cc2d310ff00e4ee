#!/bin/sh
# SPDX-License-Identifier: MIT
# load_fault_view.sh - a case the daemon loads failed because its ledger
# does not verify (ledgerfs(8) FAILURE) shows only the rows that verify,
# and ledgerctl verify and evidence of the mounted case say it is bad
# (ledgerctl(1) verify, evidence); a torn tail after case_closed is no
# crash's, so it is left as it is and the case loads failed (ledgerfs(8)
# RECOVERY).
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_open_reg ALTERED
lf_call ALTERED a1 lookup_a >/dev/null
lf_open_reg INTACT
lf_call INTACT i1 lookup_a >/dev/null
lf_open_reg CLOSED
lf_call CLOSED c1 lookup_a >/dev/null
printf 'close\n' >"$mnt/cases/CLOSED/ctl" || fail "close CLOSED"
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

# Row 2 (registered) altered in place: its MAC no longer matches.
sed -i '2s/"registered"/"registerex"/' "$(lf_ledger ALTERED)"
closed_rows=$(wc -l <"$(lf_ledger CLOSED)")
printf '{"case_id":"CLOSED","ro' >>"$(lf_ledger CLOSED)"
closed_sum=$(sha256sum <"$(lf_ledger CLOSED)")
lf_start

rule_begin a_row_whose_mac_fails_at_load_is_not_shown
rule_eq state failed "$(lf_state ALTERED)"
rule_has reason "$(lf_status ALTERED)" "at load: row 2"
rule_eq "rows in the view" 1 "$(wc -l <"$mnt/cases/ALTERED/ledger")"
rule_hasnt "view" "$(cat "$mnt/cases/ALTERED/ledger")" registerex
rule_eq "status rows" 1 "$(lf_status ALTERED | python3 -c 'import json,sys; print(json.load(sys.stdin)["rows"])')"
rule_end

rule_begin verify_of_a_mounted_case_failed_at_load_is_bad
out=$(timeout 30 "$LEDGERCTL" verify "$mnt/cases/ALTERED" 2>&1)
rule_eq "exit" 1 "$?"
rule_has "says" "$out" "bad: "
rule_has "names the daemon's reason" "$out" "the daemon found it bad when it loaded the case (at load: row 2"
out=$(timeout 30 "$LEDGERCTL" verify --json "$mnt/cases/ALTERED" 2>/dev/null)
rule_has "json" "$out" '"verdict": "bad"'
out=$(timeout 30 "$LEDGERCTL" verify "$mnt/cases/INTACT" 2>&1)
rule_eq "an intact case's exit" 0 "$?"
rule_end

rule_begin evidence_of_a_mounted_case_failed_at_load_prints_nothing
out=$(timeout 30 "$LEDGERCTL" evidence "$mnt/cases/ALTERED" 2>"$work/ev.err")
rule_eq "exit" 3 "$?"
rule_eq "stdout" "" "$out"
rule_has "stderr" "$(cat "$work/ev.err")" "does not verify: the daemon found it bad when it loaded the case"
rule_end

rule_begin a_torn_tail_after_case_closed_is_left_and_fails_the_case
rule_eq state failed "$(lf_state CLOSED)"
rule_has reason "$(lf_status CLOSED)" "which ends the ledger"
rule_eq "ledger untouched" "$closed_sum" "$(sha256sum <"$(lf_ledger CLOSED)")"
rule_eq "rows in the view" "$closed_rows" "$(wc -l <"$mnt/cases/CLOSED/ledger")"
rule_hasnt "no recovered row" "$(cat "$mnt/cases/CLOSED/ledger")" '"recovered"'
rule_end

lf_finish
