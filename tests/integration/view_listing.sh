#!/bin/sh
# SPDX-License-Identifier: MIT
# view_listing.sh - what the view shows (ledgerfs(8) THE VIEW): folder
# listings in attempt order, the ledger's bytes, status and its head, the
# per-call files, replies, the read-back of `request` opened read-write, the
# policy and mocks as written, and the modes of every node.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_open_reg C
lf_open_reg D
# ids chosen so that name order differs from attempt order
r_zz=$(lf_call C zz lookup_a '{"id":1}')
r_aa=$(lf_call C aa send_a '{"to":"x"}')
r_mm=$(lf_call C mm delete_a)
lf_call D d1 lookup_a >/dev/null

assert_eq ls_cases_lists_the_cases "C D" "$(ls "$mnt/cases" | tr '\n' ' ' | sed 's/ $//')"
assert_eq ls_calls_shows_seq_callid_in_attempt_order \
	"000001-zz 000002-aa 000003-mm" \
	"$(ls -U "$(lf_cdir C)/calls" | tr '\n' ' ' | sed 's/ $//')"
assert_eq ls_call_folder_shows_decision_request_result \
	"decision request result" \
	"$(ls "$(lf_cdir C)/calls/000002-aa" | tr '\n' ' ' | sed 's/ $//')"
assert_eq ls_replies_shows_call_ids_in_attempt_order "zz aa mm" \
	"$(ls -U "$(lf_tdir C)/replies" | tr '\n' ' ' | sed 's/ $//')"
assert_eq ls_target_shows_only_the_target_files \
	"error register replies reply request result tools" \
	"$(ls "$(lf_tdir C)" | tr '\n' ' ' | sed 's/ $//')"
assert_eq ls_case_shows_the_host_files_but_not_seal_key \
	"calls checkpoint ctl ledger mocks policy status target token tools" \
	"$(ls "$(lf_cdir C)" | tr '\n' ' ' | sed 's/ $//')"
rule_begin call_folder_with_a_wrong_sequence_is_not_found
[ ! -e "$(lf_cdir C)/calls/000001-aa" ] || rule_fail "000001-aa exists"
[ ! -e "$(lf_cdir C)/calls/000009-zz/decision" ] || rule_fail "000009-zz/decision exists"
[ ! -e "$(lf_tdir C)/replies/nope" ] || rule_fail "replies/nope exists"
[ ! -e "$(lf_tdir C)/replies/d1" ] || rule_fail "another case's reply is visible"
rule_end

check ledger_file_equals_the_backing_bytes \
	cmp "$(lf_cdir C)/ledger" "$(lf_ledger C)"

st=$(lf_status C)
rule_begin status_is_json_with_state_rows_and_head
rule_has case_id "$st" '"case_id": "C"'
rule_has state "$st" '"state": "registered"'
rule_has rows "$st" "\"rows\": $(lf_rows C),"
rule_has head "$st" "\"head\": \"$(tail -n1 "$(lf_ledger C)" | tr -d '\n' | sha256sum | cut -d' ' -f1)\""
rule_has "counts" "$st" '"calls": 3,'
rule_has "pending" "$st" '"pending": 1,'
rule_end

# per-call files: decision = the decision row, result = the completion
dec_row=$(grep -F '"phase":"decision"' "$(lf_ledger C)" | grep -F '"call_id":"zz"')
rule_begin calls_decision_file_holds_the_decision_row
rule_eq row "$(printf '%s' "$dec_row" | tr -d ' \n')" \
	"$(tr -d ' \n' <"$(lf_cdir C)/calls/000001-zz/decision")"
rule_end
rule_begin calls_request_file_holds_the_request
req=$(tr -d ' \n' <"$(lf_cdir C)/calls/000001-zz/request")
rule_has call_id "$req" '"call_id":"zz"'
rule_has tool "$req" '"tool":"lookup_a"'
rule_has args "$req" '"args":{"id":1}'
rule_end
assert_contains calls_result_of_pending_pass_call_says_pending \
	"$(tr -d ' \n' <"$(lf_cdir C)/calls/000001-zz/result")" '"completion_status":"pending"'
printf '%s\n' '{"call_id":"zz","returned":{"name":"Ada"},"is_error":false,"real_executed":true}' \
	>"$(lf_tdir C)/result"
res_row=$(grep -F '"phase":"completion"' "$(lf_ledger C)" | grep -F '"call_id":"zz"')
rule_begin calls_result_file_holds_the_completion_row
rule_eq row "$(printf '%s' "$res_row" | tr -d ' \n')" \
	"$(tr -d ' \n' <"$(lf_cdir C)/calls/000001-zz/result")"
rule_end
rule_begin calls_result_of_mock_call_is_the_host_result
res=$(tr -d ' \n' <"$(lf_cdir C)/calls/000002-aa/result")
rule_has source "$res" '"result_source":"host_mediator"'
rule_has returned "$res" '"returned":{"status":"sent"}'
rule_end

# replies
assert_eq replies_file_holds_the_reply_to_that_call "$r_aa" "$(cat "$(lf_tdir C)/replies/aa")"
assert_eq reply_file_holds_the_latest_reply "$r_mm" "$(cat "$(lf_tdir C)/reply")"
rule_begin reply_has_the_documented_fields
rule_has pass "$r_zz" '{"call_id":"zz","sequence":1,"mode":"pass","real_executed":false,"flagged":false,"reason":"allowed by mediation policy rule '"'lookup_*'"'","decision_reason":"allowed by mediation policy rule '"'lookup_*'"'","matched":"lookup_*","returned":null,"is_error":false,"result_source":"target_reported","result_authoritative":false}'
rule_has block "$r_mm" '"matched":"delete_*","returned":{"message":"Tool delete_a was blocked by sandbox mediation policy.","status":"blocked"},"is_error":true,"result_source":"host_mediator","result_authoritative":true}'
rule_end

# request opened O_RDWR reads back exactly its own replies, in order
lf_call C other lookup_a >/dev/null
out=$(lf_write C request --rdwr \
	'{"call_id":"q1","tool":"lookup_a","args":{}}\n{"call_id":"q2","tool":"send_a","args":{}}\n' \
	'{"call_id":"q3","tool":"delete_a","args":{}}\n' \
	'{"call_id":"q4","tool":"lookup_b","args":{}}\n')
readback=$(echo "$out" | sed -n 's/^read=//; /^{/p')
rule_begin request_rdwr_reads_back_exactly_its_own_replies
rule_eq "ids" "q1 q2 q3 q4" "$(echo "$readback" | sed -n 's/^{"call_id":"\([^"]*\)".*/\1/p' | tr '\n' ' ' | sed 's/ $//')"
rule_eq "q2 reply" "$(cat "$(lf_tdir C)/replies/q2")" "$(echo "$readback" | sed -n 2p)"
rule_eq "q4 reply" "$(cat "$(lf_tdir C)/replies/q4")" "$(echo "$readback" | sed -n 4p)"
rule_has close "$out" "close=OK"
rule_end
out=$(lf_write C request --rdwr '{"call_id":"q1","tool":"lookup_a","args":{}}\n')
rule_begin request_rdwr_reads_back_nothing_for_a_refused_line
rule_has write "$out" "write=EEXIST"
rule_has read "$out" "read=
close="
rule_end

# policy and mocks read back as written
printf '%s' "$LF_POLICY_DEFAULT" >"$work/p.expected"
printf '%s' "$LF_MOCKS_DEFAULT" >"$work/m.expected"
check policy_reads_back_as_written cmp "$work/p.expected" "$(lf_cdir C)/policy"
check mocks_read_back_as_written cmp "$work/m.expected" "$(lf_cdir C)/mocks"
assert_eq token_is_64_hex_digits_and_a_newline 1 \
	"$(grep -cxE '[0-9a-f]{64}' "$(lf_cdir C)/token")"

# modes
modes=
for p in cases cases/C cases/C/policy cases/C/mocks cases/C/token \
	cases/C/ctl cases/C/status cases/C/ledger cases/C/calls \
	cases/C/calls/000001-zz cases/C/calls/000001-zz/decision \
	cases/C/target cases/C/target/register cases/C/target/request \
	cases/C/target/reply cases/C/target/replies \
	cases/C/target/replies/zz cases/C/target/result cases/C/target/error; do
	modes="$modes $(stat -c %a "$mnt/$p")"
done
assert_eq node_modes_host_0600_0400_target_0755_request_0666 \
	" 700 700 600 600 400 200 400 400 500 500 400 755 222 666 444 555 444 222 444" \
	"$modes"
# Bytes appended to the backing file by anything but the daemon are no
# row of its: the view serves its own durable rows, and a mounted verify
# checks those against its status.
rule_begin ledger_file_serves_only_the_daemons_own_rows
cp "$(lf_ledger D)" "$work/d.before"
printf '{"case_id":"D","phase":"decision","tool":"refund_all"}\n' >>"$(lf_ledger D)"
cat "$(lf_cdir D)/ledger" >"$work/d.view"
# (cat first: the view reports size 0, and cmp -s compares sizes.)
cmp "$work/d.before" "$work/d.view" >"$work/d.cmp" 2>&1 ||
	rule_fail "the view shows bytes the daemon did not write: $(cat "$work/d.cmp")"
out=$(timeout 30 "$LEDGERCTL" verify "$(lf_cdir D)" 2>&1) ||
	rule_fail "mounted verify: $out"
rule_has "mounted verify" "$out" "ok: $(wc -l <"$work/d.before" | tr -d ' ') rows"
rule_end
lf_finish
