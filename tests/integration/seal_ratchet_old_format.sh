#!/bin/sh
# SPDX-License-Identifier: MIT
# seal_ratchet_old_format.sh - a case written before forward-secure seals
# (tests/fixtures/pre-ratchet: MACs under the case key derived from the
# host key) still verifies, still loads, and goes on without seals
# (ledgerfs-ledger(5) SEALS: a ledger never changes kind).
. "$(dirname "$0")/lib.sh"
fix=$top_srcdir/tests/fixtures/pre-ratchet
[ -d "$fix/cases/OLD" ] || lf_skip_all "no fixture $fix"
lf_setup
mkdir -p "$backing/cases"
chmod 0700 "$backing" "$backing/cases"
cp -r "$fix/cases/OLD" "$backing/cases/OLD"
chmod 0700 "$backing/cases/OLD"
chmod 0600 "$backing/cases/OLD"/*
cp "$fix/host.key" "$key"
chmod 0600 "$key"
led=$(lf_ledger OLD)

out=$(timeout 30 "$LEDGERCTL" verify "$fix/cases/OLD/ledger.jsonl" --key "$fix/host.key" 2>&1)
rc=$?
rule_begin old_format_ledger_still_verifies
rule_eq exit 0 "$rc"
rule_has ok "$out" "ok: 8 rows, head 384f31524e14961fbce5da8ae12b04794e4010bf68a55d03dfe4e86f4b2dd57a, MACs checked"
rule_hasnt "no epochs" "$(cat "$fix/cases/OLD/ledger.jsonl")" '"epoch"'
rule_end

lf_start
state=$(lf_state OLD)
lf_call OLD c5 lookup_z >/dev/null
echo turn >"$mnt/cases/OLD/ctl"
lf_call OLD c6 send_z >/dev/null
lf_stop
out=$(timeout 30 "$LEDGERCTL" verify "$backing/cases/OLD" --key "$key" 2>&1)
rc=$?
rule_begin old_format_case_loads_and_goes_on_without_seals
rule_eq exit 0 "$rc"
rule_has ok "$out" "MACs checked"
rule_hasnt "no epochs" "$(cat "$led")" '"epoch"'
[ -e "$led.seal" ] && rule_fail "a seal key file appeared"
rule_eq "state at load" registered "$state"
# c5, c4's and c5's completion_missing at the turn, the turn, c6.
rule_eq rows 13 "$(wc -l <"$led" | tr -d ' ')"
rule_end

lf_finish
