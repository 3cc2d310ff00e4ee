#!/bin/sh
# SPDX-License-Identifier: MIT
# restart_is_fast.sh - a restart does not match recorded calls again
# (ledgerfs(8), RESTART): calls whose `when` pattern is slow to match
# are recorded, then the daemon restarts; it must be serving again having
# spent far less CPU than matching them once took.  The argument grows
# until one call's matching is measurable, under the per-call budget.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

POLICY='interactions:
  - match: slow_match
    mode: mock
default: {mode: block}
'
# Polynomial backtracking: slow on a long run of a, yet under the
# per-call budget, so each call is a recorded mock.
MOCKS='version: 1
mocks:
  - tool: slow_match
    when: {s: {regex: "a*a*b"}}
    response: {hit: true}
  - tool: slow_match
    response: {hit: false}
'
lf_open_reg SLOW "$POLICY" "$MOCKS"
arg() { printf '{"s":"%scb"}' "$(head -c "$1" /dev/zero | tr '\0' a)"; }
# The daemon's CPU time in ms (user + system): wall time is too noisy on
# a busy machine, CPU time is what matching costs.
cpu_ms() { awk '{ print ($14 + $15) * 1000 / 100 }' "/proc/$lf_daemon/stat"; }
# cpu_calls K N PREFIX: the daemon's CPU ms for K calls, N-character arguments
cpu_calls() {
	_c0=$(cpu_ms)
	_i=0
	while [ $_i -lt "$1" ]; do
		_i=$((_i + 1))
		lf_call SLOW "$3$_i" slow_match "$(arg "$2")" >/dev/null
	done
	echo $(( $(cpu_ms) - _c0 ))
}
base=$(cpu_calls 8 1 base)
n=100 per=0 good=0
while [ $n -le 6400 ]; do
	spent=$(( $(cpu_calls 4 $n "n$n-") - base / 2 ))
	grep -q pattern_limit "$(lf_tdir SLOW)/replies/n$n-4" && break
	good=$n per=$((spent / 4))
	[ $per -ge 25 ] && break
	# Matching is quadratic in n here: steps of 1.5 make each call at
	# most 2.25 times the last, so the size kept costs 25-60 ms a call,
	# far enough under the 100 ms budget for a busy machine.
	n=$((n * 3 / 2))
done
calls=0 matching=0
if [ $per -gt 0 ]; then
	calls=$(( 3000 / per + 1 ))
	[ $calls -le 200 ] || calls=200
	matching=$(( $(cpu_calls $calls $good slow-) - base * calls / 8 ))
fi
echo "# $calls calls with a $good-character argument: $matching ms of the daemon's CPU for matching"
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
lf_start
restart=$(cpu_ms)
echo "# restart: $restart ms of the daemon's CPU until it served"
if [ $matching -lt 1000 ]; then
	echo "# SKIP restart timing: matching cost only $matching ms here, too little to tell"
else
	rule_begin restart_does_not_match_recorded_calls_again
	[ $((restart * 4)) -lt $matching ] ||
		rule_fail "restart took $restart ms of CPU, matching the calls once took $matching ms"
	rule_eq state registered "$(lf_state SLOW)"
	rule_has "recorded reply" "$(cat "$(lf_tdir SLOW)/replies/slow-$calls")" '"returned":{"hit":true}'
	rule_end
fi
lf_finish
