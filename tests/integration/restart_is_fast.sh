#!/bin/sh
# restart_is_fast.sh - a restart does not match recorded calls again
# (ledgerfs(8), RESTART): calls whose `when` pattern is slow to match
# are recorded, then the daemon restarts; it must be serving again in far
# less time than matching them once took.  The argument grows until one
# call takes a measurable time with the pattern engine in use.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

POLICY='interactions:
  - match: slow_match
    mode: mock
default: {mode: block}
'
# A back-reference makes matching slow on a long run of a.
MOCKS='version: 1
mocks:
  - tool: slow_match
    when: {s: {regex: "(a*)\\1x"}}
    response: {hit: true}
  - tool: slow_match
    response: {hit: false}
'
lf_open_reg SLOW "$POLICY" "$MOCKS"
now() { date +%s%N; }
arg() { printf '{"s":"%sb"}' "$(head -c "$1" /dev/zero | tr '\0' a)"; }

# ms8 N PREFIX: milliseconds for 8 calls with an N-character argument
ms8() {
	_t0=$(now)
	for _i in 1 2 3 4 5 6 7 8; do
		lf_call SLOW "$2$_i" slow_match "$(arg "$1")" >/dev/null
	done
	echo $(( ($(now) - _t0) / 1000000 ))
}
# What a call costs without matching worth the name.
base=$(ms8 1 base)
n=100 matching=0
while [ $n -le 3200 ]; do
	matching=$(( $(ms8 $n "n$n-") - base ))
	[ $matching -ge 2000 ] && break
	n=$((n * 2))
done
echo "# 8 calls: $base ms with a short argument, $matching ms more with a $n-character one"
lf_stop || not_ok daemon_stops_cleanly "had to be killed"
t0=$(now)
lf_start
restart=$(( ($(now) - t0) / 1000000 ))
echo "# restart took $restart ms"
if [ $matching -lt 1000 ]; then
	echo "# SKIP restart timing: matching here takes $matching ms for 8 calls, too little to tell"
else
	rule_begin restart_does_not_match_recorded_calls_again
	[ $((restart * 2)) -lt $matching ] ||
		rule_fail "restart took $restart ms, matching the calls once took $matching ms"
	rule_eq state registered "$(lf_state SLOW)"
	rule_end
fi
assert_contains recorded_replies_survive_the_restart \
	"$(cat "$(lf_tdir SLOW)/replies/n$n-8")" '"returned":{"hit":false}'
lf_finish
