#!/bin/sh
# SPDX-License-Identifier: MIT
# ledger_cap.sh - ledgerfs(8) LIMITS, --max-ledger: past the cap a case's
# calls are blocked with one over_limit row, as past --max-calls; results
# that would not fit are refused with EFBIG; the rows that end the case
# still fit, so the closed ledger stays within the cap and verifies.
. "$(dirname "$0")/lib.sh"
lf_setup
cap=524288
lf_start --max-line=8192 --max-ledger=512K
lf_open_reg L

# sixty passed calls whose results are still to come, then mocked calls
# with 1 KiB of arguments until the cap blocks one
pad=$(head -c 1000 /dev/zero | tr '\0' p)
for i in $(seq 1 60); do lf_call L "p$i" lookup_a >/dev/null; done
i=0
while [ $i -lt 1000 ]; do
	i=$((i + 1))
	r=$(lf_call L "m$i" send_a "{\"pad\":\"$pad\"}")
	case $r in *'"over_limit"'* | *'"mode":"block"'*) break ;; esac
done
size=$(stat -c %s "$(lf_ledger L)")
rule_begin call_past_max_ledger_is_blocked_with_one_over_limit_row
rule_has reply "$r" '"mode":"block"'
rule_has reason "$r" "ledger limit of $cap bytes reached"
rule_eq "over_limit rows" 1 "$(lf_rows L '"over_limit":true')"
rule_has "last row" "$(tail -n1 "$(lf_ledger L)")" "\"call_id\":\"m$i\""
[ "$i" -gt 50 ] || rule_fail "blocked after only $i calls (ledger $size bytes)"
rule_end

before=$(lf_rows L)
r=$(lf_call L small send_a)
rule_begin further_calls_past_max_ledger_are_blocked_without_rows
rule_has reply "$r" '"mode":"block"'
rule_eq "new rows" 0 $(($(lf_rows L) - before))
rule_eq "status over_limit" 2 "$(lf_count L over_limit)"
rule_end

# results of the pending calls, 7 KiB each (more than the room kept for a
# missing result), until one does not fit
big=$(head -c 7000 /dev/zero | tr '\0' r)
ok_results=0 refused_at=
for i in $(seq 1 60); do
	out=$(lf_write L result "{\"call_id\":\"p$i\",\"returned\":\"$big\",\"is_error\":false,\"real_executed\":true}\\n")
	case $out in
	*write=EFBIG*)
		refused_at=$i
		break
		;;
	*write=[0-9]*) ok_results=$((ok_results + 1)) ;;
	esac
done
rule_begin result_past_max_ledger_is_refused_with_EFBIG
[ -n "$refused_at" ] || rule_fail "every result fitted"
[ "$ok_results" -gt 0 ] || rule_fail "no result fitted under the room kept"
rule_eq "error file" \
	"EFBIG result: result of call 'p$refused_at' does not fit under the ledger limit of $cap bytes" \
	"$(cat "$(lf_tdir L)/error")"
rule_end

echo close >"$(lf_cdir L)/ctl"
size=$(stat -c %s "$(lf_ledger L)")
echo "# ledger: $size bytes under a cap of $cap; $ok_results results fitted"
rule_begin closed_ledger_stays_within_max_ledger
rule_has "last row" "$(tail -n1 "$(lf_ledger L)")" '"phase":"case_closed"'
rule_eq "completion_missing rows" $((60 - ok_results)) "$(lf_rows L '"phase":"completion_missing"')"
[ "$size" -le "$cap" ] || rule_fail "ledger is $size bytes"
rule_end
check ledger_past_max_ledger_verifies lf_verify L

# a restart keeps the case blocked: its ledger is still at the cap
lf_open_reg K
for i in $(seq 1 800); do
	r=$(lf_call K "k$i" send_a "{\"pad\":\"$pad\"}")
	case $r in *'"mode":"block"'*) break ;; esac
done
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start --max-line=8192 --max-ledger=512K
before=$(lf_rows K)
rule_begin calls_stay_blocked_past_max_ledger_after_a_restart
rule_has reply "$(lf_call K after send_a "{\"pad\":\"$pad\"}")" '"mode":"block"'
rule_eq "new rows" 0 $(($(lf_rows K) - before))
rule_end

rule_begin max_ledger_below_the_room_for_a_case_is_refused_at_start
out=$("$LEDGERFS" -f --backing="$backing" --key="$key" --max-line=4096 \
	--max-ledger=64K "$work/tmp" 2>&1)
rule_eq "exit status" 2 $?
rule_has message "$out" "--max-ledger must be at least"
rule_end
lf_finish
