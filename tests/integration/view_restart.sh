#!/bin/sh
# SPDX-License-Identifier: MIT
# view_restart.sh - a clean restart of the daemon on the same backing folder
# (ledgerfs(8) RESTART): every case resumes in its state (registered,
# closed, unregistered, pending calls, scenario cursors, turn), a torn tail
# is cut with a `recovered` row, and every ledger verifies.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start --max-calls=10 --max-refused=3

lf_open_reg REG
lf_call REG c1 lookup_a >/dev/null
lf_call REG c2 resume_line >/dev/null
lf_call REG c3 resume_line >/dev/null
lf_call REG c4 lookup_b >/dev/null
printf '%s\n' '{"call_id":"c4","returned":{"v":4},"is_error":false,"real_executed":true}' \
	>"$(lf_tdir REG)/result"
lf_open_reg TURN
lf_call TURN t1 lookup_a >/dev/null
echo turn >"$(lf_cdir TURN)/ctl"
lf_call TURN t2 lookup_a >/dev/null
lf_open_reg CL
lf_call CL x1 lookup_a >/dev/null
echo close >"$(lf_cdir CL)/ctl"
lf_open_reg FL
echo 'fail harness gave up' >"$(lf_cdir FL)/ctl"
lf_open UNREG
tok_unreg=$(lf_token UNREG)
lf_open_reg TORN
lf_call TORN y1 lookup_a >/dev/null
lf_call TORN y2 send_a >/dev/null
# counters past the bounds: calls over the limit, unrecorded refusals
lf_open_reg CNT
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13; do lf_call CNT "n$i" lookup_a >/dev/null; done
lf_write CNT request 'x\n' 'x\n' 'x\n' 'x\n' 'x\n' 'x\n' >/dev/null
rule_begin status_counts_calls_and_refusals_past_the_bounds
rule_eq over_limit 3 "$(lf_count CNT over_limit)"
rule_eq refused 6 "$(lf_count CNT refused)"
rule_eq refused_unrecorded 3 "$(lf_count CNT refused_unrecorded)"
rule_end
# a refusal, recorded: target/error shows it
lf_open_reg ERR
lf_write ERR request 'not json\n' >/dev/null
err_before=$(cat "$(lf_tdir ERR)/error")
# a case whose name starts with a dot (ledgerfs(8) THE VIEW allows it)
lf_open_reg .hid
lf_call .hid h1 lookup_a >/dev/null
rows_reg=$(lf_rows REG)
head_torn=$(tail -n1 "$(lf_ledger TORN)")
rows_torn=$(lf_rows TORN)

lf_stop || not_ok daemon_stops_cleanly_on_unmount "had to be killed"
check nothing_of_the_mount_is_left_after_stop sh -c "! grep -q ' $mnt ' /proc/mounts"
# a torn tail: half a row appended while the daemon is down
printf '{"case_id":"TORN","mac":"00","phase":"decision","prev":"' >>"$(lf_ledger TORN)"
lf_start --max-calls=10 --max-refused=3

st=$(lf_status REG)
rule_begin a_case_whose_name_starts_with_a_dot_resumes_like_any_other
rule_has "listed" "$(ls -a "$mnt/cases")" ".hid"
rule_has state "$(lf_status .hid)" '"state": "registered"'
rule_has "next call" "$(lf_call .hid h2 lookup_a)" '"sequence":2,'
rule_has "ledgerctl ls" "$(timeout 30 "$LEDGERCTL" --mount "$mnt" ls)" ".hid"
rule_end
rule_begin target_error_shows_the_last_recorded_refusal_after_restart
rule_has "before" "$err_before" "EINVAL request:"
rule_eq "after" "$err_before" "$(cat "$(lf_tdir ERR)/error")"
rule_end
rule_begin registered_case_stays_registered
rule_has state "$st" '"state": "registered"'
rule_eq "no new row" "$rows_reg" "$(lf_rows REG)"
rule_has "call without registering" "$(lf_call REG c5 lookup_a)" '"sequence":5,'
rule_end
rule_begin pending_pass_call_stays_pending
rule_has pending "$st" '"pending": 1,'
rule_has "result file" "$(tr -d ' \n' <"$(lf_cdir REG)/calls/000001-c1/result")" '"completion_status":"pending"'
rule_end
lf_expect_accepted result_for_a_call_pending_before_restart_is_accepted REG \
	result 1 '{"call_id":"c1","returned":{"v":1},"is_error":false,"real_executed":true}\n'
lf_expect_accepted identical_result_repeat_after_restart_adds_no_row REG result 0 \
	'{"call_id":"c4","returned":{"v":4},"is_error":false,"real_executed":true}\n'
lf_expect_refused conflicting_result_after_restart_is_refused_with_EEXIST REG \
	result EEXIST LF_CONFLICT refused \
	'{"call_id":"c4","returned":{"v":5},"is_error":false,"real_executed":true}\n'
lf_expect_refused call_id_used_before_restart_is_refused_with_EEXIST REG \
	request EEXIST LF_DUPLICATE refused '{"call_id":"c2","tool":"resume_line","args":{}}\n'
assert_contains scenario_continues_where_it_was_after_restart \
	"$(lf_call REG c6 resume_line)" '"returned":{"step":3}'
assert_eq replies_before_restart_are_still_served \
	'"mode":"mock"' "$(grep -o '"mode":"mock"' "$(lf_tdir REG)/replies/c2")"
assert_eq calls_folder_lists_calls_from_before_and_after_restart \
	"000001-c1 000002-c2 000003-c3 000004-c4 000005-c5 000006-c6" \
	"$(ls "$(lf_cdir REG)/calls" | tr '\n' ' ' | sed 's/ $//')"

rule_begin turn_number_survives_restart
rule_eq status 2 "$(lf_status TURN | sed -n 's/^  "turn": \([0-9]*\).*/\1/p')"
lf_call TURN t3 lookup_a >/dev/null
rule_has row "$(tail -n1 "$(lf_ledger TURN)")" '"turn":2'
rule_end

rule_begin status_counters_past_the_bounds_survive_restart
rule_eq over_limit 3 "$(lf_count CNT over_limit)"
rule_eq refused 6 "$(lf_count CNT refused)"
rule_eq refused_unrecorded 3 "$(lf_count CNT refused_unrecorded)"
rule_end
rule_begin calls_over_the_limit_stay_blocked_after_restart
reply=$(lf_call CNT n14 lookup_a)
rule_has reply "$reply" '"mode":"block"'
rule_has reply "$reply" '"call_id":"n14"'
rule_eq over_limit 4 "$(lf_count CNT over_limit)"
rule_end

rule_begin closed_case_stays_closed
rule_eq state closed "$(lf_state CL)"
rule_end
lf_expect_refused_after_close closed_case_refuses_requests_with_EPIPE_and_no_row_after_restart CL \
	request EPIPE '{"call_id":"x2","tool":"lookup_a","args":{}}\n'
rule_begin failed_case_stays_failed_with_its_reason
rule_eq state failed "$(lf_state FL)"
rule_has reason "$(lf_status FL)" '"reason": "harness gave up"'
rule_end

rule_begin unregistered_case_keeps_its_token_and_can_register
rule_eq state ready "$(lf_state UNREG)"
rule_eq token "$tok_unreg" "$(lf_token UNREG)"
lf_register UNREG || rule_fail "register failed"
rule_eq "state after" registered "$(lf_state UNREG)"
rule_end

rule_begin torn_tail_is_cut_and_a_recovered_row_appended
last=$(tail -n1 "$(lf_ledger TORN)")
rule_has "recovered row" "$last" '"phase":"recovered"'
rule_eq "rows" $((rows_torn + 1)) "$(lf_rows TORN)"
rule_eq "the row before" "$head_torn" "$(tail -n2 "$(lf_ledger TORN)" | head -n1)"
rule_eq "no partial line" 0 "$(grep -cvF '"mac":"' "$(lf_ledger TORN)")"
[ -z "$(tail -c1 "$(lf_ledger TORN)" | tr -d '\n')" ] || rule_fail "no final newline"
rule_end
assert_contains recovered_case_resumes_calls "$(lf_call TORN y3 lookup_a)" '"sequence":3,'
check ledger_file_in_view_equals_backing_after_restart \
	cmp "$(lf_cdir TORN)/ledger" "$(lf_ledger TORN)"
rule_begin status_head_matches_the_backing_file_after_restart
rule_has head "$(lf_status TORN)" "\"head\": \"$(tail -n1 "$(lf_ledger TORN)" | tr -d '\n' | sha256sum | cut -d' ' -f1)\""
rule_end

# a second restart changes nothing: no new recovered rows
lf_stop || not_ok daemon_stops_cleanly_on_unmount "had to be killed"
rows_before=$(lf_rows TORN)
lf_start --max-calls=10 --max-refused=3
assert_eq clean_restart_adds_no_row "$rows_before" "$(lf_rows TORN)"

# one daemon per backing folder: a second one is refused, mounts nothing
mkdir "$work/mnt2"
timeout 20 "$LEDGERFS" -f --backing="$backing" --key="$key" "$work/mnt2" \
	>"$work/second.out" 2>&1 &
second=$!
lf_bg_pids="$lf_bg_pids $second"
wait "$second"
rc=$?
rule_begin second_daemon_on_the_same_backing_folder_is_refused
[ "$rc" -ne 0 ] || rule_fail "second daemon exited 0"
[ "$rc" -ne 124 ] || rule_fail "second daemon kept running"
grep -q " $work/mnt2 " /proc/mounts && rule_fail "second daemon mounted"
[ -d "$(lf_cdir REG)" ] || rule_fail "first daemon's view gone"
rule_end
grep -q " $work/mnt2 " /proc/mounts && umount -l "$work/mnt2"

rule_begin every_ledger_verifies_after_restart
for c in REG TURN CL FL UNREG TORN CNT; do
	v=$(lf_verify "$c" 2>&1) || rule_fail "$c: $v"
done
rule_end
lf_finish
