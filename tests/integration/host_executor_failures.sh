#!/bin/sh
# SPDX-License-Identifier: MIT
# host_executor_failures.sh - every way a host executor can fail is a
# clear error result, recorded, and the case goes on (ledgerfs-policy(5)
# HOST EXECUTORS): missing, not executable, unsafe owner or mode, timeout
# (its whole process group killed), output over the cap, output that is
# not JSON, a non-zero exit.  Executors are bounded per case, and a slow
# one holds neither another case's calls nor more than its case's slots
# (ledgerfs(8) HOST EXECUTORS).
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_executor_dirs
mk() { # NAME MODE BODY: an executor script in $tools
	printf '#!/bin/sh\ncat >/dev/null\n%s\n' "$3" >"$tools/$1"
	chmod "$2" "$tools/$1"
}
mk ok 0755 'echo "{\"ok\":true}"'
mk noexec 0644 'echo "{}"'
mk foreign 0755 'echo "{}"'
chown 65534 "$tools/foreign"
mk groupw 0775 'echo "{}"'
mk hang 0755 "sleep 300 & echo \$! >$run/hang.child; sleep 300"
mk flood 0755 'yes "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"" | head -c 100000'
mk text 0755 'echo "customer acme found"'
mk fail 0755 'echo "{\"partial\":1}"; exit 3'
mk gate 0755 "mktemp $run/started.XXXXXX >/dev/null
while [ ! -e $run/release ]; do sleep 0.05; done
echo '{\"released\":true}'"

rule() { # TOOL ARGV0 [EXTRA EXEC KEYS]
	printf '  - match: %s\n    mode: pass\n    exec: {argv: [%s]%s}\n' \
		"$1" "$2" "${3:+, $3}"
}
POLICY="interactions:
$(rule ok "$tools/ok")
$(rule missing "$tools/absent")
$(rule noexec "$tools/noexec")
$(rule foreign "$tools/foreign")
$(rule groupw "$tools/groupw")
$(rule hang "$tools/hang" "timeout: 1s")
$(rule flood "$tools/flood" "max_output: 1KiB")
$(rule text "$tools/text")
$(rule fail "$tools/fail")
$(rule gate "$tools/gate")
default: {mode: block}
"
lf_open_reg C "$POLICY" ""
lf_open_reg D "$POLICY" ""

# expect_error RULE TOOL KIND REASON: the call's reply is an error result
# of KIND whose reason has REASON; the completion row records both; the
# next call of the case still runs.
n=0
expect_error() {
	n=$((n + 1))
	_r=$(lf_call C "e$n" "$2")
	_row=$(grep '"phase":"completion"' "$(lf_ledger C)" | grep "\"call_id\":\"e$n\"")
	rule_begin "$1"
	rule_has mode "$_r" '"mode":"pass"'
	rule_has is_error "$_r" '"is_error":true'
	rule_has source "$_r" '"result_source":"host_executed"'
	rule_has authoritative "$_r" '"result_authoritative":true'
	rule_has kind "$_r" "\"error\":\"$3\""
	rule_has reason "$_r" "$4"
	rule_has "row kind" "$_row" "\"exec_error\":\"$3\""
	rule_has "row reason" "$_row" "$4"
	rule_has "case goes on" "$(lf_call C "ok$n" ok)" '"returned":{"ok":true}'
	rule_end
}

expect_error executor_missing_is_an_error_result_and_case_goes_on \
	missing executor_missing "executor $tools/absent: No such file"
expect_error executor_not_executable_is_an_error_result_and_case_goes_on \
	noexec executor_not_executable "executor $tools/noexec is not executable"
expect_error executor_of_another_owner_is_refused_and_case_goes_on \
	foreign executor_unsafe "is owned by uid 65534, not by root or this user"
expect_error group_writable_executor_is_refused_and_case_goes_on \
	groupw executor_unsafe "has mode 0775: group or others may write it"
expect_error executor_timeout_is_an_error_result_and_case_goes_on \
	hang timeout "passed its timeout of 1000 ms; its process group was killed"
expect_error executor_output_over_the_cap_is_an_error_result_and_case_goes_on \
	flood output_too_large "more than max_output (1024 bytes)"
expect_error executor_output_not_json_is_an_error_result_and_case_goes_on \
	text output_not_json "not one JSON value (at byte"
expect_error executor_nonzero_exit_is_an_error_result_and_case_goes_on \
	fail exit_status "exited with status 3"

# The timeout killed the group, the executor's own child included.
child=$(cat "$run/hang.child" 2>/dev/null)
i=0
while [ -n "$child" ] && kill -0 "$child" 2>/dev/null && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.05
done
rule_begin executor_timeout_kills_its_whole_process_group
[ -n "$child" ] || rule_fail "the executor's child never started"
[ -n "$child" ] && kill -0 "$child" 2>/dev/null && rule_fail "child $child still alive"
rule_end

# A slow call in case C (its executor waits for a release file) holds
# neither case D's calls nor C's status: ordering, not timing.
(lf_call C slow1 gate >/dev/null) &
slow=$!
lf_bg_pids="$lf_bg_pids $slow"
lf_wait_gates 1
# A watchdog releases C after 20 s, so a daemon that wrongly makes D wait
# for C fails this rule instead of hanging.
(sleep 20; touch "$run/release") &
watchdog=$!
lf_bg_pids="$lf_bg_pids $watchdog"
d_reply=$(lf_call D d1 ok)
c_state=$(lf_state C)
c_done=$(grep -c '"released":true' "$(lf_ledger C)")
rule_begin slow_executor_in_one_case_does_not_hold_another_case
rule_eq "C's executor started" 1 "$(lf_gate_started)"
rule_has "D served" "$d_reply" '"returned":{"ok":true}'
rule_eq "C's status answered" registered "$c_state"
rule_eq "C's executor still running when D was served" 0 "$c_done"
rule_eq "C's writer still waiting" 0 "$(kill -0 $slow 2>/dev/null; echo $?)"
rule_end
touch "$run/release"
kill $watchdog 2>/dev/null
wait $slow
rule_begin slow_executor_result_arrives_once_it_ends
rule_has reply "$(cat "$mnt/cases/C/target/replies/slow1")" '"returned":{"released":true}'
rule_end
lf_bg_pids=

check ledger_with_executor_failures_verifies lf_verify C
lf_finish
