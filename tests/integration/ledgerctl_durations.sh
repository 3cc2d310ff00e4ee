#!/bin/sh
# SPDX-License-Identifier: MIT
# ledgerctl_durations.sh - `ledgerctl wait --timeout` takes the one
# duration grammar (ledgerctl(1) DURATIONS): N seconds, or N with ms, s,
# m or h; anything else exits 2 with a message and leaves the case alone.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
ctl() { timeout 60 "$LEDGERCTL" --mount "$mnt" "$@"; }

lf_open W
for bad in 2x 1.5 -3 '' 5sec 10S; do
	out=$(ctl wait W --timeout "$bad" 2>&1)
	rc=$?
	rule_begin "timeout_${bad:-empty}_is_refused_with_exit_2"
	rule_eq exit 2 "$rc"
	rule_has message "$out" "--timeout"
	rule_eq "case untouched" ready "$(lf_state W)"
	rule_end
done

# elapsed COMMAND...: milliseconds the command took.
elapsed() {
	_t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	echo $((($(date +%s%N) - _t0) / 1000000))
}

for form in '--timeout=300ms' '--timeout 300ms'; do
	lf_open "M$((${n:-0} + 1))"
	n=$((${n:-0} + 1))
	# shellcheck disable=SC2086
	ms=$(elapsed ctl wait "M$n" $form)
	rule_begin "timeout_300ms_waits_300ms_then_fails_the_case (${form%% *})"
	[ "$ms" -ge 250 ] && [ "$ms" -lt 2500 ] || rule_fail "waited $ms ms"
	rule_eq state failed "$(lf_state "M$n")"
	rule_end
done

lf_open S
ms=$(elapsed ctl wait S --timeout 1)
rule_begin bare_number_is_seconds
[ "$ms" -ge 900 ] && [ "$ms" -lt 4000 ] || rule_fail "waited $ms ms"
rule_end

# 2m is two minutes, not two seconds: still waiting after three.
lf_open L
ctl wait L --timeout 2m >/dev/null 2>&1 &
w=$!
lf_bg_pids="$lf_bg_pids $w"
sleep 3
rule_begin two_m_is_minutes
kill -0 "$w" 2>/dev/null || rule_fail "wait ended within 3 s"
rule_eq state ready "$(lf_state L)"
rule_end
kill "$w" 2>/dev/null
wait "$w" 2>/dev/null
lf_finish
