#!/bin/sh
# SPDX-License-Identifier: MIT
# ledgercall_exit_status.sh - ledgercall's exit status follows the decision
# (ledgercall(1) EXIT STATUS): 0 pass, 3 mock, 4 block, 1 error with the
# reason on stderr.  One row per rule: tool or line -> expected status and
# output.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
lf_open_reg C
d=$(lf_tdir C)

# row NAME EXPECTED-STATUS STDOUT-NEEDLE STDERR-NEEDLE ARGS...
row() {
	_name=$1 _want=$2 _out_needle=$3 _err_needle=$4
	shift 4
	rule_begin "$_name"
	_out=$(timeout 20 "$LEDGERCALL" --dir "$d" "$@" 2>"$work/lc.err")
	_rc=$?
	rule_eq status "$_want" "$_rc"
	[ -z "$_out_needle" ] || rule_has stdout "$_out" "$_out_needle"
	[ -z "$_err_needle" ] || rule_has stderr "$(cat "$work/lc.err")" "$_err_needle"
	rule_end
}

row passed_call_exits_0 0 '"mode":"pass"' '' --tool lookup_a --call-id p1
row mocked_call_exits_3 3 '"returned":{"status":"sent"}' '' --tool send_a --call-id m1
row blocked_call_exits_4 4 '"mode":"block"' '' --tool delete_a --call-id b1
row duplicate_call_exits_1_with_the_reason 1 '' "duplicate call id 'p1'" --tool lookup_a --call-id p1
row malformed_args_exit_1_with_the_reason 1 '' 'EINVAL' --tool lookup_a --args '[1]' --call-id p2
row result_of_a_passed_call_exits_0 0 '' '' result --call-id p1 --returned '{"n":1}'
row result_of_a_mocked_call_exits_1 1 '' 'EINVAL' result --call-id m1 --returned '{}'
row result_of_an_unknown_call_exits_1 1 '' "no call with id 'zz'" result --call-id zz --returned '{}'
row ledgercall_without_a_tool_exits_1 1 '' 'usage' --call-id x1

row pretty_printed_args_are_one_call 0 '"mode":"pass"' '' --tool lookup_c --call-id p3 \
	--args '{
  "a": 1,
  "b": [2]
}'
assert_contains pretty_printed_args_are_recorded_whole \
	"$(grep -F '"call_id":"p3"' "$(lf_ledger C)")" '"args":{"a":1,"b":[2]}'

rule_begin args_and_result_on_standard_input_may_end_with_a_newline
out=$(echo '{"q": "x"}' | timeout 20 "$LEDGERCALL" --dir "$d" --tool lookup_d --call-id p4 --args - 2>&1)
rule_eq "call status" 0 $?
rule_has call "$out" '"mode":"pass"'
rule_has "call row" "$(grep -F '"call_id":"p4"' "$(lf_ledger C)" | grep -F '"phase":"decision"')" '"args":{"q":"x"}'
out=$(echo '{"name": "Ada"}' | timeout 20 "$LEDGERCALL" --dir "$d" result --call-id p4 --returned - 2>&1)
rule_eq "result status" 0 $?
rule_has row "$(grep -F '"call_id":"p4"' "$(lf_ledger C)" | grep -F '"phase":"completion"')" '"returned":{"name":"Ada"}'
rule_end

rule_begin a_raw_newline_inside_a_string_is_not_rewritten_but_refused
printf '{"s":"a\nb"}\n' | timeout 20 "$LEDGERCALL" --dir "$d" --tool lookup_e --call-id p5 --args - >/dev/null 2>"$work/lc.err"
rule_eq status 1 $?
rule_has stderr "$(cat "$work/lc.err")" "EINVAL"
rule_eq "no decision" "" "$(grep -F '"call_id":"p5"' "$(lf_ledger C)" | grep -F '"phase":"decision"')"
rule_end

check generated_call_ids_are_accepted "$LEDGERCALL" --dir "$d" --tool lookup_b
lf_finish
