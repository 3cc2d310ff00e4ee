#!/bin/sh
# SPDX-License-Identifier: MIT
# closed_case.sh - ledgerfs(8) LIFECYCLE, "closed means closed": after
# case_closed no row is ever appended.  A hostile target's writes after
# close (whole lines, partial lines, over-long lines, a line begun before
# the close, registrations, results, many descriptors) all get EPIPE with
# the reason in error; the ledger's bytes do not change and it verifies.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start --max-line=65536
LFHOLD=$top_builddir/tests/integration/lfhold

lf_open_reg Z
lf_call Z z1 lookup_a >/dev/null
lf_call Z z2 send_a >/dev/null
# a line begun before the close, finished after it
mkfifo "$work/late.in"
(
	printf '{"call_id":"late","tool":'
	read -r _ <"$work/late.in"
	printf '"lookup_a","args":{}}\n'
) >"$(lf_tdir Z)/request" 2>"$work/late.err" &
late=$!
lf_bg_pids=$late
sleep 0.3
echo close >"$(lf_cdir Z)/ctl"
size0=$(stat -c %s "$(lf_ledger Z)")
view0=$(wc -c <"$(lf_cdir Z)/ledger")
status0=$(lf_status Z)
echo go >"$work/late.in"
wait "$late"
late_rc=$?
late_error=$(cat "$(lf_tdir Z)/error")
lf_bg_pids=

tok=$(lf_token Z)
T=$(lf_tdir Z)
rule_begin every_target_write_after_close_is_EPIPE
for item in \
	"request|{\"call_id\":\"a1\",\"tool\":\"lookup_a\",\"args\":{}}\\n" \
	"request|{\"call_id\":\"z1\",\"tool\":\"lookup_a\",\"args\":{}}\\n" \
	"request|not json at all\\n" \
	"request|{\"call_id\":\"partial\"" \
	"result|{\"call_id\":\"z1\",\"returned\":{},\"is_error\":false,\"real_executed\":true}\\n" \
	"result|{\"call_id\":\"nope\",\"returned\":1}\\n" \
	"register|{\"case_id\":\"Z\",\"token\":\"$tok\"}\\n" \
	"register|{\"case_id\":\"Z\",\"token\":\"00\"}\\n"; do
	f=${item%%|*}
	line=${item#*|}
	out=$(lf_write Z "$f" "$line")
	rule_eq "$f: $line" "write=EPIPE" "$(echo "$out" | grep -m1 '^write=')"
done
out=$(lf_write Z request --repeat-byte a 200000 -a '\n')
rule_eq "over-long line" "write=EPIPE" "$(echo "$out" | grep -m1 '^write=')"
rule_end

rule_begin a_line_begun_before_close_is_refused_when_it_ends
[ "$late_rc" -ne 0 ] || rule_fail "the writer's finishing write succeeded"
rule_eq "its error" "EPIPE request: case Z is closed" "$late_error"
rule_end

# many descriptors with unterminated lines, as in the memory attack
"$LFHOLD" "$T/request" 50 30000 </dev/null >"$work/hold.out" 2>&1
rule_begin held_lines_after_close_are_refused_and_not_kept
rule_has summary "$(head -n1 "$work/hold.out")" "held=0 refused=50 first_error=EPIPE"
rule_end

rule_begin closed_ledger_does_not_change_after_hostile_writes
rule_eq "backing file bytes" "$size0" "$(stat -c %s "$(lf_ledger Z)")"
rule_eq "view ledger bytes" "$view0" "$(wc -c <"$(lf_cdir Z)/ledger")"
rule_has "last row" "$(tail -n1 "$(lf_ledger Z)")" '"phase":"case_closed"'
rule_eq "status" "$status0" "$(lf_status Z)"
rule_end

rule_begin error_after_close_says_the_case_is_closed
rule_eq "error file" "EPIPE request: case Z is closed" "$(cat "$T/error")"
rule_end

rule_begin replies_stay_readable_after_close
rule_has "replies/z1" "$(cat "$T/replies/z1")" '"mode":"pass"'
rule_has "reply" "$(cat "$T/reply")" '"call_id":"z2"'
rule_end
check closed_ledger_verifies_after_hostile_writes lf_verify Z

# the same after a restart, and for a failed case
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start --max-line=65536
lf_open_reg Y
echo 'fail target misbehaved' >"$(lf_cdir Y)/ctl"
sizeY=$(stat -c %s "$(lf_ledger Y)")
lf_write Y request '{"call_id":"y1","tool":"lookup_a","args":{}}\n' >/dev/null
lf_write Z request '{"call_id":"r1","tool":"lookup_a","args":{}}\n' >/dev/null
rule_begin closed_and_failed_cases_append_nothing_after_a_restart
rule_eq "Z bytes" "$size0" "$(stat -c %s "$(lf_ledger Z)")"
rule_eq "Y bytes" "$sizeY" "$(stat -c %s "$(lf_ledger Y)")"
rule_eq "Y error" "EPIPE request: case Y is failed" "$(cat "$(lf_tdir Y)/error")"
rule_end
rule_begin every_ledger_verifies
for c in Y Z; do
	v=$(lf_verify "$c" 2>&1) || rule_fail "$c: $v"
done
rule_end
lf_finish
