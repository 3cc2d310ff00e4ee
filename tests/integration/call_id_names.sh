#!/bin/sh
# SPDX-License-Identifier: MIT
# call_id_names.sh - call ids are what ASSERT takes (ledgerfs(8)
# PROTOCOL), and where one names a file in the view it is percent-encoded
# (ledgerfs(8) THE VIEW): one spelling per call, at most 255 bytes.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

lf_open_reg C
call_json() { # ID_JSON TOOL: write one call, print the reply
	printf '{"call_id":%s,"tool":"%s","args":{}}\n' "$1" "$2" \
		>"$(lf_tdir C)/request" && cat "$(lf_tdir C)/reply"
}

rule_begin call_id_with_slash_blank_and_utf8_is_accepted
r=$(call_json '"a/b c\u00e9"' lookup_a) || rule_fail "refused: $(cat "$(lf_tdir C)/error")"
rule_has reply "$r" '"call_id":"a/b cé"'
rule_end

rule_begin reply_file_name_is_the_percent_encoded_call_id
rule_eq "ls replies" "a%2Fb%20c%C3%A9" "$(ls -U "$(lf_tdir C)/replies")"
rule_has "replies file" "$(cat "$(lf_tdir C)/replies/a%2Fb%20c%C3%A9")" '"sequence":1'
rule_end

rule_begin calls_folder_name_is_seq_and_percent_encoded_call_id
rule_eq "ls calls" "000001-a%2Fb%20c%C3%A9" "$(ls -U "$(lf_cdir C)/calls")"
rule_has request "$(cat "$(lf_cdir C)/calls/000001-a%2Fb%20c%C3%A9/request")" '"call_id": "a/b cé"'
rule_end

rule_begin another_spelling_of_the_name_finds_nothing
for n in 'a%2fb%20c%C3%A9' 'a%2Fb c%C3%A9' '%61%2Fb%20c%C3%A9'; do
	[ ! -e "$(lf_tdir C)/replies/$n" ] || rule_fail "replies/$n exists"
done
rule_end

rule_begin dot_call_ids_are_encoded_dots
call_json '".."' lookup_a >/dev/null || rule_fail "'..' refused"
rule_has "replies/%2E%2E" "$(cat "$(lf_tdir C)/replies/%2E%2E")" '"call_id":".."'
[ -d "$(lf_cdir C)/calls/000002-%2E%2E" ] || rule_fail "no calls/000002-%2E%2E"
rule_end

rule_begin call_id_of_control_characters_is_refused_with_a_row
before=$(lf_rows C)
if call_json '"a\tb"' lookup_a >/dev/null 2>&1; then rule_fail "accepted"; fi
rule_has error "$(cat "$(lf_tdir C)/error")" "call_id must be 1-256 bytes without control characters"
rule_eq "refused row" "$((before + 1))" "$(lf_rows C)"
rule_end

# 256 bytes of '/' encode to 768 bytes: no replies/ file, a cut calls/ name.
long=$(printf '%256s' '' | tr ' ' '/')
rule_begin long_call_id_reply_is_in_reply_without_a_replies_file
r=$(call_json "\"$long\"" lookup_a) || rule_fail "refused: $(cat "$(lf_tdir C)/error")"
rule_has reply "$r" '"sequence":3'
rule_eq "replies" "a%2Fb%20c%C3%A9 %2E%2E" "$(ls -U "$(lf_tdir C)/replies" | tr '\n' ' ' | sed 's/ $//')"
rule_end

rule_begin long_call_id_calls_folder_is_cut_between_units
d=$(ls -U "$(lf_cdir C)/calls" | sed -n 3p)
rule_eq "name length" 253 "$(printf '%s' "$d" | wc -c | tr -d ' ')"
case $d in 000003-%2F*%2F) ;; *) rule_fail "name $d" ;; esac
rule_has request "$(cat "$(lf_cdir C)/calls/$d/request")" "\"call_id\": \"$long\""
rule_end

check ledger_verifies_with_the_new_ids lf_verify C
lf_finish
