#!/bin/sh
# SPDX-License-Identifier: MIT
# view_errno_table.sh - every row of the errno table of the target folder
# (ledgerfs(8) PROTOCOL) through a real mount: the errno of the write(2)
# exactly, and the ledger row it leaves (or that it leaves none).  Also the
# pieces of a large write, unterminated final lines and the bound on refused
# rows.
. "$(dirname "$0")/lib.sh"
lf_setup

# --- default daemon ------------------------------------------------------
lf_start

# request before registration
lf_open U
lf_expect_refused request_before_registration_is_refused_with_EACCES \
	U request EACCES LF_UNREGISTERED refused \
	'{"call_id":"u1","tool":"lookup_a","args":{}}\n'

# EINVAL table: each line refused with one `refused` row, no decision
lf_open_reg V
while IFS='|' read -r rule line; do
	lf_expect_refused "$rule" V request EINVAL LF_EINVAL_JSON refused "$line"
done <<'EOF'
malformed_json_is_refused_with_EINVAL|{"call_id":"m1","tool":"lookup_a",\n
not_an_object_is_refused_with_EINVAL|["call_id","m2"]\n
a_string_is_refused_with_EINVAL|"m3"\n
unknown_field_is_refused_with_EINVAL|{"call_id":"m4","tool":"lookup_a","args":{},"extra":1}\n
host_owned_field_is_refused_with_EINVAL|{"call_id":"m5","tool":"lookup_a","args":{},"mode":"pass"}\n
host_owned_sequence_is_refused_with_EINVAL|{"call_id":"m6","tool":"lookup_a","args":{},"sequence":1}\n
bad_call_id_with_a_control_character_is_refused_with_EINVAL|{"call_id":"a\\u0001b","tool":"lookup_a","args":{}}\n
bad_call_id_of_blanks_is_refused_with_EINVAL|{"call_id":"  ","tool":"lookup_a","args":{}}\n
empty_call_id_is_refused_with_EINVAL|{"call_id":"","tool":"lookup_a","args":{}}\n
missing_call_id_is_refused_with_EINVAL|{"tool":"lookup_a","args":{}}\n
args_not_an_object_is_refused_with_EINVAL|{"call_id":"m9","tool":"lookup_a","args":[1,2]}\n
args_a_string_is_refused_with_EINVAL|{"call_id":"m10","tool":"lookup_a","args":"{}"}\n
EOF
assert_eq no_decision_row_for_refused_lines 0 "$(lf_rows V '"phase":"decision"')"

# over-long line at the default limit (1 MiB): a 2 MiB line
lf_open_reg W
before=$(lf_rows W)
out=$(lf_write W request --loop --repeat-byte a 2097152 -a '\n')
after=$(lf_rows W)
rule_begin line_over_default_1MiB_limit_is_refused_with_EFBIG
rule_has writes "$out" "write=EFBIG"
rule_has close "$out" "close=EFBIG"
rule_eq "new rows" 1 $((after - before))
rule_has row "$(tail -n1 "$(lf_ledger W)")" '"refusal":"LF_TOO_BIG"'
rule_has error "$(cat "$(lf_tdir W)/error")" "EFBIG "
rule_end
# the rest of an over-long line, up to its newline, is discarded; the
# next line on the same descriptor is taken
before=$(lf_rows W)
out=$(lf_write W request --loop --repeat-byte a 2097152 'more of it\n' \
	'{"call_id":"w1","tool":"lookup_a","args":{}}\n')
rule_begin rest_of_an_overlong_line_up_to_its_newline_is_discarded
rule_has "long line" "$out" "write=EFBIG"
rule_eq "its tail" "write=EFBIG" "$(echo "$out" | grep '^write=' | tail -n2 | head -n1)"
rule_eq "next line" "write=45" "$(echo "$out" | grep '^write=' | tail -n1)"
rule_eq "new rows" 2 $(($(lf_rows W) - before))
rule_eq "decision for w1" 1 "$(lf_rows W '"call_id":"w1"')"
rule_end
lf_expect_accepted new_descriptor_after_an_overlong_line_starts_clean W \
	request 1 '{"call_id":"w2","tool":"lookup_a","args":{}}\n'

# one 2 MiB write(2) holding a valid line and then an over-long line: the
# kernel hands it over in pieces; the valid line is decided, the caller
# gets a short count, the rest answers EFBIG and so does the close
lf_open_reg P
valid='{"call_id":"p1","tool":"lookup_a","args":{}}\n'
before=$(lf_rows P)
out=$(lf_write P request --loop "$valid" -a --repeat-byte b 3145728 -a '\n')
after=$(lf_rows P)
first=$(echo "$out" | sed -n '1s/^write=//p')
rule_begin large_write_refused_in_a_later_piece_gives_short_count_then_EFBIG
case $first in
'' | *[!0-9]*) rule_fail "first write: expected a short count, got [$first]" ;;
*) [ "$first" -gt 45 ] && [ "$first" -lt 3145774 ] ||
	rule_fail "first write: count $first is not short" ;;
esac
rule_eq "second write" "write=EFBIG" "$(echo "$out" | sed -n 2p)"
rule_eq close "close=EFBIG" "$(echo "$out" | tail -n1)"
rule_eq "new rows (decision + refused)" 2 $((after - before))
rule_eq "decision for p1" 1 "$(lf_rows P '"call_id":"p1"')"
rule_eq "too-big row" 1 "$(lf_rows P '"refusal":"LF_TOO_BIG"')"
rule_has "reply to p1" "$(cat "$(lf_tdir P)/replies/p1")" '"mode":"pass"'
rule_end

# One write(2) whose second line is refused: a short count up to that
# line, then its errno for the resend and for the close.
lf_open_reg S
before=$(lf_rows S)
out=$(lf_write S request --loop '{"call_id":"s1","tool":"lookup_a","args":{}}\n{"call_id":"s2","tool":1}\n{"call_id":"s3","tool":"lookup_a","args":{}}\n')
rule_begin line_refused_inside_one_piece_gives_short_count_then_its_errno
rule_eq "first write" "write=45" "$(echo "$out" | sed -n 1p)"
rule_eq "the resend" "write=EINVAL" "$(echo "$out" | sed -n 2p)"
rule_eq close "close=EINVAL" "$(echo "$out" | tail -n1)"
rule_eq "new rows (decision + refused)" 2 $(($(lf_rows S) - before))
rule_eq "no decision for s3" 0 "$(lf_rows S '"call_id":"s3"')"
rule_end

# request is nonseekable and, like every file that takes lines, shows
# size 0; reply, a file that is read, shows the bytes a read would give
rule_begin request_is_nonseekable_with_size_0
rule_eq lseek "op=ESPIPE" "$(timeout 10 "$LFWRITE" --op lseek "$(lf_tdir S)/request")"
rule_eq "size of request" 0 "$(stat -c %s "$(lf_tdir S)/request")"
rule_eq "size of reply" "$(cat "$(lf_tdir S)/reply" | wc -c)" "$(stat -c %s "$(lf_tdir S)/reply")"
rule_end

# A refused line that began in an earlier, accepted piece of the same
# write(2): the caller gets a short count, and its resend of the rest of
# that line is answered with the line's errno, not read as a new line.
# The piece size is the first count above.
lf_open_reg Q
lf_call Q q1 lookup_a >/dev/null
head='{"call_id":"big","tool":"lookup_a","args":{"p":"'
pad=$((first - 30 - ${#head} - 4))
before=$(lf_rows Q)
out=$(lf_write Q request --loop "$head" -a --repeat-byte a "$pad" \
	-a '"}}\n{"call_id":"q1","tool":"lookup_a","args":{}}\n')
rule_begin line_refused_in_a_later_piece_answers_its_resend_with_its_errno
rule_eq "first write" "write=$first" "$(echo "$out" | sed -n 1p)"
rule_eq "the resend" "write=EEXIST" "$(echo "$out" | sed -n 2p)"
rule_eq close "close=EEXIST" "$(echo "$out" | tail -n1)"
rule_eq "new rows (decision + refused)" 2 $(($(lf_rows Q) - before))
rule_eq "duplicate row" 1 "$(lf_rows Q '"refusal":"LF_DUPLICATE"')"
rule_eq "no row for the resent tail" 0 "$(lf_rows Q '"refusal":"LF_EINVAL_JSON"')"
rule_end

# duplicate call id: EEXIST, a refused row, scenario untouched
lf_open_reg D
r1=$(lf_call D d1 resume_line)
lf_expect_refused duplicate_call_id_is_refused_with_EEXIST D request EEXIST \
	LF_DUPLICATE refused '{"call_id":"d1","tool":"resume_line","args":{}}\n'
assert_eq error_file_names_the_duplicate \
	"EEXIST request: duplicate call id 'd1'" "$(cat "$(lf_tdir D)/error")"
r2=$(lf_call D d2 resume_line)
rule_begin duplicate_call_id_leaves_scenario_state_untouched
rule_has "first step" "$r1" '"returned":{"step":1}'
rule_has "next step" "$r2" '"returned":{"step":2}'
rule_end

# result rules
lf_open_reg R
lf_call R r-pass lookup_a >/dev/null
lf_call R r-mock send_a >/dev/null
lf_call R r-block delete_a >/dev/null
lf_call R r-miss lookup_b >/dev/null
lf_expect_refused result_for_unknown_call_is_refused_with_ENOENT R result \
	ENOENT LF_UNKNOWN_CALL refused \
	'{"call_id":"nope","returned":{},"is_error":false,"real_executed":true}\n'
lf_expect_refused result_for_mock_call_is_refused_with_EINVAL R result \
	EINVAL LF_NOT_PASS refused \
	'{"call_id":"r-mock","returned":{},"is_error":false,"real_executed":true}\n'
lf_expect_refused result_for_block_call_is_refused_with_EINVAL R result \
	EINVAL LF_NOT_PASS refused \
	'{"call_id":"r-block","returned":{},"is_error":false,"real_executed":true}\n'
lf_expect_refused malformed_result_is_refused_with_EINVAL R result \
	EINVAL LF_EINVAL_JSON refused '{"call_id":"r-pass","returned":\n'
res='{"call_id":"r-pass","returned":{"n":1},"is_error":false,"real_executed":true}\n'
lf_expect_accepted result_of_passed_call_is_one_completion_row R result 1 "$res"
assert_eq completion_row_is_target_reported 1 \
	"$(grep -F '"phase":"completion"' "$(lf_ledger R)" | grep -cF '"result_source":"target_reported"')"
lf_expect_accepted identical_repeat_of_result_succeeds_without_a_row R result 0 "$res"
lf_expect_refused conflicting_repeat_of_result_is_refused_with_EEXIST R result \
	EEXIST LF_CONFLICT refused \
	'{"call_id":"r-pass","returned":{"n":2},"is_error":false,"real_executed":true}\n'
echo turn >"$(lf_cdir R)/ctl"
assert_eq turn_marks_pending_call_missing 1 \
	"$(grep -F '"phase":"completion_missing"' "$(lf_ledger R)" | grep -cF '"call_id":"r-miss"')"
lf_expect_refused result_after_call_marked_missing_is_refused_with_EINVAL R \
	result EINVAL LF_NOT_PASS refused \
	'{"call_id":"r-miss","returned":{},"is_error":false,"real_executed":true}\n'

# registration rules
lf_open G
tok=$(lf_token G)
lf_expect_refused registration_with_wrong_case_id_is_refused_with_EACCES G \
	register EACCES LF_BAD_TOKEN registration_refused \
	"{\"case_id\":\"U\",\"token\":\"$tok\"}\\n"
lf_expect_refused registration_with_wrong_token_is_refused_with_EACCES G \
	register EACCES LF_BAD_TOKEN registration_refused \
	'{"case_id":"G","token":"0000000000000000000000000000000000000000000000000000000000000000"}\n'
assert_eq wrong_registration_leaves_case_unregistered ready "$(lf_state G)"
lf_expect_accepted correct_registration_is_one_registered_row G register 1 \
	"{\"case_id\":\"G\",\"token\":\"$tok\"}\\n"
lf_expect_accepted repeat_of_correct_registration_succeeds_without_a_row G \
	register 0 "{\"case_id\":\"G\",\"token\":\"$tok\"}\\n"

# closed and failed cases: EPIPE, the reason in error, and no row
# (closed_case.sh holds the hostile variants)
lf_expect_closed() { # NAME CASE FILE LFWRITE ARGS...
	_name=$1 _c=$2 _f=$3
	shift 3
	_before=$(lf_rows "$_c")
	_out=$(lf_write "$_c" "$_f" "$@")
	rule_begin "$_name"
	rule_eq "first write" "write=EPIPE" "$(echo "$_out" | grep -m1 '^write=')"
	rule_eq "new rows" 0 $(($(lf_rows "$_c") - _before))
	rule_has "error file" "$(cat "$(lf_tdir "$_c")/error")" "EPIPE $_f: case $_c is"
	rule_end
}
lf_open_reg X
lf_call X x1 lookup_a >/dev/null
echo close >"$(lf_cdir X)/ctl"
lf_expect_closed request_to_closed_case_is_refused_with_EPIPE X request \
	'{"call_id":"x2","tool":"lookup_a","args":{}}\n'
lf_expect_closed result_to_closed_case_is_refused_with_EPIPE X result \
	'{"call_id":"x1","returned":{},"is_error":false,"real_executed":true}\n'
assert_eq case_closed_is_the_last_row 1 \
	"$(tail -n1 "$(lf_ledger X)" | grep -cF '"phase":"case_closed"')"
lf_open_reg Y
echo 'fail target crashed' >"$(lf_cdir Y)/ctl"
lf_expect_closed request_to_failed_case_is_refused_with_EPIPE Y request \
	'{"call_id":"y1","tool":"lookup_a","args":{}}\n'

# unterminated final lines are lines, taken at close
lf_open_reg T
t1='{"call_id":"t1","tool":"lookup_a","args":{}}'
out=$(lf_write T request "$t1")
rule_begin unterminated_final_line_is_processed_at_close
rule_eq write "write=$(blen "$t1")" "$(echo "$out" | head -n1)"
rule_has close "$out" "close=OK"
rule_eq "decision row" 1 "$(lf_rows T '"call_id":"t1"')"
rule_end
before=$(lf_rows T)
t2='{"call_id":"t2","tool":"lookup_a"'
out=$(lf_write T request "$t2")
rule_begin bad_unterminated_final_line_fails_close_with_its_errno
rule_eq write "write=$(blen "$t2")" "$(echo "$out" | head -n1)"
rule_has close "$out" "close=EINVAL"
rule_eq "new rows" 1 $(($(lf_rows T) - before))
rule_has row "$(tail -n1 "$(lf_ledger T)")" '"phase":"refused"'
rule_end

rule_begin every_ledger_verifies_after_refusals
for c in U V W P D R G X Y T; do
	v=$(lf_verify "$c" 2>&1) || rule_fail "$c: $v"
done
rule_end
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

# --- a small line limit ----------------------------------------------------
lf_start --max-line=4096
lf_open_reg S
line="{\"call_id\":\"s1\",\"tool\":\"lookup_a\",\"args\":{\"s\":\"$(head -c 4100 /dev/zero | tr '\0' x)\"}}\\n"
lf_expect_refused line_over_max_line_is_refused_with_EFBIG S request EFBIG \
	LF_TOO_BIG refused "$line"
hd='{"call_id":"s2","tool":"lookup_a","args":{"s":"'
pad=$(head -c $((4096 - $(blen "$hd") - 3)) /dev/zero | tr '\0' x)
exact="$hd$pad\"}}"
assert_eq exact_line_is_4096_bytes 4096 "$(blen "$exact")"
lf_expect_accepted line_of_exactly_max_line_is_accepted S request 1 "$exact\\n"
lf_stop || not_ok daemon_stops_cleanly "had to be killed"

# --- call limit and refused-row bound ------------------------------------
lf_start --max-calls=3 --max-refused=5
lf_open_reg L
for i in 1 2 3; do lf_call L "l$i" lookup_a >/dev/null; done
before=$(lf_rows L)
l4='{"call_id":"l4","tool":"lookup_a","args":{}}\n'
out=$(lf_write L request --rdwr "$l4")
rule_begin call_over_the_limit_succeeds_with_a_block_reply_and_one_row
rule_has write "$out" "write=$(blen "$l4")"
rule_has reply "$out" '"mode":"block"'
rule_has close "$out" "close=OK"
rule_eq "new rows" 1 $(($(lf_rows L) - before))
rule_has row "$(tail -n1 "$(lf_ledger L)")" '"over_limit":true'
rule_end
before=$(lf_rows L)
l4='{"call_id":"l5","tool":"lookup_a","args":{}}\n'
out=$(lf_write L request --rdwr "$l4")
rule_begin further_calls_over_the_limit_are_blocked_without_rows
rule_has write "$out" "write=$(blen "$l4")"
rule_has reply "$out" '"mode":"block"'
rule_eq "new rows" 0 $(($(lf_rows L) - before))
rule_end
assert_eq status_counts_every_call_over_the_limit 2 "$(lf_count L over_limit)"

lf_open_reg F
set --
i=0
while [ $i -lt 50 ]; do
	set -- "$@" "{\"call_id\":\"f$i\",\"tool\":\\n"
	i=$((i + 1))
done
out=$(lf_write F request "$@")
rule_begin refused_rows_are_bounded_per_case
rule_eq "EINVAL writes" 50 "$(echo "$out" | grep -c '^write=EINVAL$')"
rule_eq "refused rows" 5 "$(lf_rows F '"phase":"refused"')"
rule_eq "status refused" 50 "$(lf_count F refused)"
rule_eq "status refused_unrecorded" 45 "$(lf_count F refused_unrecorded)"
rule_end
check ledger_with_bounded_refusals_verifies lf_verify F
lf_finish
