#!/bin/sh
# SPDX-License-Identifier: MIT
# host_executor_close.sh - a case closed, failed or turned while its host
# executor runs holds nothing (ledgerfs(8) HOST EXECUTORS): the close
# itself, another case's call and status, and a new case are all served,
# the executor's process group is killed, its writer gets EPIPE and the
# call is recorded completion_missing, all before the executor would have
# ended.  Ordering, not timing: each is checked while the executor still
# waits for a release file, which a watchdog touches after 30 s.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_gate_executor

lf_open_reg E "$LF_POLICY_DEFAULT"

# held_close C ACTION: C's gate call runs; ACTION (close, or fail) on C,
# then the rules; finally the release.
held_close() {
	rm -f "$run/release" "$run"/started.*
	lf_open_reg "$1" "$GATE_POLICY" ""
	(sleep 30; touch "$run/release") &
	lf_bg_pids="$lf_bg_pids $!"
	(lf_call "$1" "${1}g" gate >"$work/$1.reply" 2>"$work/$1.err"; echo "rc=$?" >>"$work/$1.err") &
	writer=$!
	lf_bg_pids="$lf_bg_pids $writer"
	lf_wait_gates 1
	(echo "$2" >"$(lf_cdir "$1")/ctl") &
	closer=$!
	lf_wait_done "$closer"
	rule_begin "${2}_during_a_host_executor_returns_before_it_ends"
	lf_released && rule_fail "$2 waited for the executor"
	rule_end
	rule_begin "${2}_during_a_host_executor_holds_no_other_case"
	lf_served_while_gated "e$1" "N$1"
	rule_end
	lf_wait_done "$writer"
	rule_begin "${2}_during_a_host_executor_answers_its_writer_epipe"
	lf_released && rule_fail "the writer waited for the executor"
	rule_has "writer" "$(cat "$work/$1.err")" "rc=1"
	rule_has "target/error" "$(cat "$(lf_tdir "$1")/error")" "EPIPE"
	rule_has "ledger" "$(cat "$(lf_ledger "$1")")" '"phase":"completion_missing"'
	rule_hasnt "ledger" "$(cat "$(lf_ledger "$1")")" '"released"'
	rule_end
	rule_begin "${2}_during_a_host_executor_kills_it"
	_n=0
	while pgrep -f "$tools/gate" >/dev/null && [ $_n -lt 100 ] && ! lf_released; do
		_n=$((_n + 1))
		sleep 0.05
	done
	pgrep -f "$tools/gate" >/dev/null && rule_fail "the executor runs on"
	lf_released && rule_fail "the executor ran until its release"
	rule_end
	touch "$run/release"
	wait "$writer"
	lf_bg_pids=
}

held_close C close
held_close F fail
held_close T turn

lf_finish
