#!/bin/sh
# SPDX-License-Identifier: MIT
# host_executor_threads.sh - a call on a host executor, running or waiting
# for a slot, holds none of the daemon's worker threads (ledgerfs(8) HOST
# EXECUTORS): with -o max_threads=12, 17 cases each call a tool whose
# executor waits for a release file (16 run, one waits for a slot), and
# another case's call, its status and a new case are still served before
# any executor ends.  Ordering, not timing: each is checked while the
# executors still wait; a watchdog releases them after 30 s.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start -o max_threads=12

lf_gate_executor

lf_open_reg E "$LF_POLICY_DEFAULT"
i=1
while [ $i -le 17 ]; do
	lf_open_reg "G$i" "$GATE_POLICY" ""
	i=$((i + 1))
done
lf_gate_calls g 17
lf_wait_gates 16

rule_begin seventeen_executor_calls_are_taken_with_twelve_worker_threads
rule_eq "executors started" 16 "$(lf_gate_started)"
lf_released && rule_fail "the executors were released before they started"
rule_end

rule_begin executor_calls_hold_no_worker_thread
lf_served_while_gated e1 N
rule_end

touch "$run/release"
for p in $gate_pids; do
	wait "$p"
done
lf_bg_pids=
rule_begin every_waiting_executor_call_gets_its_result
rule_eq "started in all" 17 "$(lf_gate_started)"
i=1
while [ $i -le 17 ]; do
	rule_has "G$i" "$(cat "$work/reply.$i")" '"returned":{"released":true}'
	rule_has "G$i ledger" "$(cat "$(lf_ledger "G$i")")" '"result_source":"host_executed"'
	i=$((i + 1))
done
rule_end

# The same with each call the first of two lines in one write(2): the
# second line is taken once the first's result is durable, and no thread
# waits meanwhile.
# two I: case GI's two lines, a gate call and a blocked one.
two() {
	printf '%s' "{\"call_id\":\"m$1\",\"tool\":\"gate\",\"args\":{}}\\n{\"call_id\":\"n$1\",\"tool\":\"other\",\"args\":{}}\\n"
}
rm -f "$run/release" "$run"/started.*
(sleep 30; touch "$run/release") &
lf_bg_pids="$lf_bg_pids $!"
pids=
i=1
while [ $i -le 17 ]; do
	(lf_write "G$i" request --rdwr "$(two "$i")" >"$work/two.$i" 2>&1) &
	pids="$pids $!"
	i=$((i + 1))
done
lf_bg_pids="$lf_bg_pids $pids"
lf_wait_gates 16
rule_begin executor_lines_before_a_writes_last_hold_no_worker_thread
rule_eq "executors started" 16 "$(lf_gate_started)"
lf_served_while_gated e2
rule_end
touch "$run/release"
for p in $pids; do
	wait "$p"
done
lf_bg_pids=
rule_begin the_line_after_an_executor_line_is_taken_once_its_result_is_durable
i=1
while [ $i -le 17 ]; do
	out=$(cat "$work/two.$i")
	rule_has "G$i write" "$out" "write=$(blen "$(two "$i")")"
	rule_has "G$i first reply" "$out" '"returned":{"released":true}'
	rule_has "G$i second reply" "$out" '"call_id":"n'"$i"'"'
	# m's completion row comes before n's decision row.
	rows=$(grep -n '"call_id":"[mn]'"$i"'"' "$(lf_ledger "G$i")" | grep -o '^[0-9]*:.*"phase":"[a-z_]*"' | sed 's/^\([0-9]*\):.*"phase":"\([a-z_]*\)"$/\2/' | tr '\n' ' ')
	rule_eq "G$i rows" "decision completion decision " "$rows"
	i=$((i + 1))
done
rule_end

# Lines after an executor's line in the same write, a passed call of the
# same executor among them and a partial line at the end: each taken in
# turn, the partial line kept for the next write.
lf_open_host_echo H
rule_begin a_write_of_several_lines_is_taken_in_order_around_its_executors
w1='{"call_id":"a1","tool":"echo_args","args":{"n":1}}\n{"call_id":"b2","tool":"blocked","args":{}}\n{"call_id":"a3","tool":"echo_args","args":{"n":3}}\n{"call_id":"a4",'
w2='"tool":"echo_args","args":{"n":4}}\n'
out=$(lf_write H request --rdwr "$w1" "$w2")
rule_has "first write" "$out" "write=$(blen "$w1")"
rule_has "second write" "$out" "write=$(blen "$w2")"
replies=$(echo "$out" | sed -n 's/^read=//; /^{/p' | grep -o '"call_id":"[ab][0-9]"' | tr '\n' ' ')
rule_eq "replies in order" '"call_id":"a1" "call_id":"b2" "call_id":"a3" "call_id":"a4" ' "$replies"
rows=$(grep -o '"call_id":"[ab][0-9]"' "$(lf_ledger H)" | tr '\n' ' ')
rule_eq "ledger order" '"call_id":"a1" "call_id":"a1" "call_id":"b2" "call_id":"a3" "call_id":"a3" "call_id":"a4" "call_id":"a4" ' "$rows"
rule_has "a3's result" "$(grep '"call_id":"a3"' "$(lf_ledger H)" | grep '"phase":"completion"')" '"got":{"n":3}'
rule_end

# A target killed while its executor runs: the kernel keeps its write
# until the daemon answers it, so the call completes and is recorded, and
# the case and the daemon go on.
rm -f "$run/release" "$run"/started.*
lf_open_reg K "$GATE_POLICY" ""
(sleep 30; touch "$run/release") &
lf_bg_pids="$lf_bg_pids $!"
(lf_call K k1 gate >/dev/null 2>&1) &
killed=$!
lf_wait_gates 1
kill -9 "$killed"
touch "$run/release"
wait "$killed" 2>/dev/null
lf_bg_pids=
rule_begin a_target_killed_while_its_executor_runs_leaves_the_case_serving
k1=$(grep -F '"call_id":"k1"' "$(lf_ledger K)" | grep -F '"phase":"completion"')
rule_has "k1's completion" "$k1" '"returned":{"released":true}'
rule_has "next call" "$(lf_call K k2 gate)" '"returned":{"released":true}'
kill -0 "$lf_daemon" || rule_fail "the daemon is gone"
rule_end

lf_finish
