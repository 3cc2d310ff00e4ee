#!/bin/sh
# SPDX-License-Identifier: MIT
# host_executor_limits.sh - at most 16 host executors run at once in all
# (ledgerfs(8) HOST EXECUTORS): 17 cases each call a tool whose executor
# waits for a release file; 16 start, the 17th call waits for a slot
# (ordering, not timing: it is checked after the 16 have started and
# before any is released), and runs once the others end.  A SIGTERM
# then stops the daemon without waiting for running executors.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_gate_executor

i=1
while [ $i -le 17 ]; do
	lf_open_reg "G$i" "$GATE_POLICY" ""
	i=$((i + 1))
done
# start_gates PREFIX: each case calls gate, until 16 have started.
start_gates() {
	lf_gate_calls "$1" 17
	pids=$gate_pids
	lf_wait_gates 16
}
start_gates g
# The 17th would have started by now if a slot were free for it.
sleep 1
rule_begin at_most_16_executors_run_at_once_in_all
rule_eq "started before any ended" 16 "$(lf_gate_started)"
rule_end

touch "$run/release"
for p in $pids; do
	wait "$p"
done
rule_begin the_call_past_the_bound_runs_once_a_slot_frees
rule_eq "started in all" 17 "$(lf_gate_started)"
i=1
while [ $i -le 17 ]; do
	rule_has "G$i" "$(cat "$work/reply.$i")" '"returned":{"released":true}'
	i=$((i + 1))
done
rule_end
lf_bg_pids=

# SIGTERM while 16 executors run and a 17th call waits for a slot: the
# daemon stops without waiting for them (before the watchdog's release),
# kills them, and their calls stay pending, as after a crash.
rm -f "$run/release" "$run"/started.*
start_gates h
kill -TERM "$lf_daemon"
n=0
while kill -0 "$lf_daemon" 2>/dev/null && [ ! -e "$run/release" ]; do
	n=$((n + 1))
	sleep 0.05
done
rule_begin sigterm_stops_the_daemon_without_waiting_for_running_executors
[ -e "$run/release" ] && rule_fail "the daemon waited for the executors"
wait "$lf_daemon" 2>/dev/null
lf_daemon=
n=0
while pgrep -f "$tools/gate" >/dev/null && [ $n -lt 100 ]; do
	n=$((n + 1))
	sleep 0.05
done
pgrep -f "$tools/gate" >/dev/null && rule_fail "an executor outlived the daemon"
rule_eq "completion rows of the stopped calls" 0 \
	"$(grep -h '"call_id":"h[0-9]*"' "$backing"/cases/G*/ledger.jsonl | grep -c '"phase":"completion"')"
rule_end
for p in $pids; do
	wait "$p"
done
lf_bg_pids=

lf_finish
