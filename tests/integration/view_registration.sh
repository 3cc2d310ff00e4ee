#!/bin/sh
# SPDX-License-Identifier: MIT
# view_registration.sh - registration through a real mount (ledgerfs(8) THE
# VIEW, PROTOCOL and LIFECYCLE): wrong case id or token refused and
# recorded, nothing before registration, nothing before a valid policy,
# policy frozen after it, and `ledgerctl wait` failing a case whose target
# never registers.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
ctl() { timeout 30 "$LEDGERCTL" --mount "$mnt" "$@"; }

# wrong case id and wrong token: EACCES, recorded, still unregistered
lf_open A
lf_open B
tokA=$(lf_token A)
lf_expect_refused registration_with_another_cases_id_is_refused_and_recorded \
	A register EACCES LF_BAD_TOKEN registration_refused \
	"{\"case_id\":\"B\",\"token\":\"$tokA\"}\\n"
lf_expect_refused registration_with_another_cases_token_is_refused_and_recorded \
	A register EACCES LF_BAD_TOKEN registration_refused \
	"{\"case_id\":\"A\",\"token\":\"$(lf_token B)\"}\\n"
lf_expect_refused registration_with_a_malformed_line_is_refused_with_EINVAL \
	A register EINVAL LF_EINVAL_JSON refused "{\"case_id\":\"A\"}\\n"
rule_begin refused_registration_records_only_digest_of_input
rule_hasnt "token in ledger" "$(cat "$(lf_ledger A)")" "$(lf_token B)"
rule_has "digest" "$(grep -F registration_refused "$(lf_ledger A)" | tail -n1)" '"input_sha256":"'
rule_end
assert_eq refused_registration_leaves_case_ready ready "$(lf_state A)"

# before registration: requests and results refused with EACCES
lf_expect_refused request_before_registration_is_refused_with_EACCES A \
	request EACCES LF_UNREGISTERED refused \
	'{"call_id":"a1","tool":"lookup_a","args":{}}\n'
lf_expect_refused result_before_registration_is_refused_with_EACCES A \
	result EACCES LF_UNREGISTERED refused \
	'{"call_id":"a1","returned":{},"is_error":false,"real_executed":true}\n'
assert_eq no_reply_before_registration "" "$(cat "$(lf_tdir A)/reply" 2>/dev/null)"

# the right registration works, then policy and mocks are frozen
lf_expect_accepted correct_registration_is_accepted_with_one_row A register 1 \
	"{\"case_id\":\"A\",\"token\":\"$tokA\"}\\n"
assert_eq registered_case_shows_registered registered "$(lf_state A)"
out=$(timeout 10 "$LFWRITE" "$(lf_cdir A)/policy" --trunc 'default: {mode: pass}\n')
rule_begin policy_is_frozen_after_registration
rule_has close "$out" "close=EBUSY"
rule_has "policy kept" "$(cat "$(lf_cdir A)/policy")" "lookup_*"
rule_end
out=$(timeout 10 "$LFWRITE" "$(lf_cdir A)/mocks" --trunc 'version: 1\nmocks: []\n')
assert_contains mocks_are_frozen_after_registration "$out" "close=EBUSY"
check wait_on_registered_case_exits_0 ctl wait A --timeout 2

# registration before a policy is in
mkdir "$(lf_cdir N)"
assert_eq case_without_policy_is_opened opened "$(lf_state N)"
lf_expect_refused registration_before_policy_is_refused_with_EACCES N register \
	EACCES LF_NOT_READY registration_refused \
	"{\"case_id\":\"N\",\"token\":\"$(lf_token N)\"}\\n"

# a malformed policy fails its close with EINVAL and keeps nothing
out=$(timeout 10 "$LFWRITE" "$(lf_cdir N)/policy" --trunc 'interactions:\n  - match: x\n    mode: teleport\n')
rule_begin malformed_policy_fails_close_with_EINVAL_and_keeps_nothing
rule_has close "$out" "close=EINVAL"
rule_eq state opened "$(lf_state N)"
rule_has "status reason" "$(lf_status N)" '"policy_error": "'
rule_eq "policy text" "" "$(cat "$(lf_cdir N)/policy")"
rule_end
lf_expect_refused registration_after_a_malformed_policy_is_refused N register \
	EACCES LF_NOT_READY registration_refused \
	"{\"case_id\":\"N\",\"token\":\"$(lf_token N)\"}\\n"
printf '%s' "$LF_POLICY_DEFAULT" >"$(lf_cdir N)/policy"
assert_eq valid_policy_makes_case_ready ready "$(lf_state N)"
lf_expect_accepted registration_after_a_valid_policy_is_accepted N register 1 \
	"{\"case_id\":\"N\",\"token\":\"$(lf_token N)\"}\\n"

# ledgerctl open + ledgercall register, as a harness does
printf '%s' "$LF_POLICY_DEFAULT" >"$work/policy.yaml"
ctl open O --policy "$work/policy.yaml" --env-file "$work/O.env" >/dev/null
rule_begin ledgerctl_open_env_file_lets_ledgercall_register
rule_has env "$(cat "$work/O.env")" "LEDGERFS_CASE=O"
(
	. "$work/O.env"
	export LEDGERFS_CASE LEDGERFS_TOKEN
	LEDGERFS_DIR=$(lf_tdir O) timeout 10 "$LEDGERCALL" register
) || rule_fail "ledgercall register failed"
rule_eq state registered "$(lf_state O)"
rule_end

# a target that never registers: wait fails the case, closed
ctl open Z --policy "$work/policy.yaml" >/dev/null
t0=$(date +%s)
ctl wait Z --timeout 1 2>"$work/wait.err"
rc=$?
t1=$(date +%s)
rule_begin wait_without_registration_fails_the_case
[ "$rc" -ne 0 ] || rule_fail "wait exited 0"
[ $((t1 - t0)) -le 5 ] || rule_fail "wait took $((t1 - t0)) s"
rule_eq state failed "$(lf_state Z)"
rule_has reason "$(lf_status Z)" '"reason": "no registration"'
rule_end
rule_begin failed_wait_leaves_a_case_closed_row_with_state_failed
last=$(tail -n1 "$(lf_ledger Z)")
rule_has phase "$last" '"phase":"case_closed"'
rule_has state "$last" '"state":"failed"'
rule_has reason "$last" '"reason":"no registration"'
rule_end
lf_expect_refused_after_close registration_after_failed_wait_is_refused_with_EPIPE_and_no_row Z \
	register EPIPE \
	"{\"case_id\":\"Z\",\"token\":\"$(lf_token Z)\"}\\n"

rule_begin every_ledger_verifies
for c in A B N O Z; do
	v=$(lf_verify "$c" 2>&1) || rule_fail "$c: $v"
done
rule_end
lf_finish
