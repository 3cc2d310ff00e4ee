#!/bin/sh
# SPDX-License-Identifier: MIT
# relay_protocol.sh - ledgerfs-relay answers ASSERT's host-mediator HTTP
# as host_mediator.py answers it (ledgerfs-relay(1) PROTOCOL), over a
# real mounted case: one rule per check, driven with curl.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/relay_lib.sh"
relay_require
lf_setup
lf_start
lf_open_reg C "$LF_POLICY_DEFAULT" 'version: 1
mocks:
  - tool: send_credit
    when:
      amount: {gt: 100}
    response: {status: rejected}
'
relay_start C

rows() { lf_rows C; }
call() { # ID TOOL [ARGS] [CASE]
	printf '{"pre_context":{"interception_point":"pre_tool_call","session":{"case_id":"%s"},"tool_call":{"id":"%s","name":"%s","args":%s}}}' \
		"${4:-C}" "$1" "$2" "${3:-{\}}"
}

assert_eq health_answers_ok_without_a_token '200 {"status":"ok"}' \
	"$(curl -s -w ' %{http_code}' "$relay_url/health" | awk '{print $2, $1}')"

rule_begin a_wrong_or_missing_token_is_401
for h in 'Authorization: Bearer nope' 'Authorization: bearer relay-test-token-0123456789' 'X-None: 1'; do
	r=$(curl -s -w ' %{http_code}' -X POST -H "$h" --data-binary '{}' "$relay_url/register")
	rule_eq "$h" '{"error":"invalid_mediator_token"} 401' "$r"
done
rule_end

rule_begin an_unknown_path_is_404
rule_eq GET '404' "$(curl -s -o /dev/null -w '%{http_code}' "$relay_url/nope")"
rule_eq POST '404 {"error":"not_found"}' "$(relay_post /nope '{}')"
rule_end

before=$(rows)
rule_begin a_body_over_1_MiB_is_refused_before_it_is_read
big=$(head -c 1048577 /dev/zero | tr '\0' ' ')
printf '%s' "$big" >"$work/big"
r=$(curl -s -w ' %{http_code}' -X POST -H "Authorization: Bearer $RELAY_TOKEN" \
	--data-binary @"$work/big" "$relay_url/mediate")
rule_eq answer '{"error":"invalid_request","detail":"invalid mediation request size"} 400' "$r"
rule_eq "no row" "$before" "$(rows)"
rule_end

assert_eq an_empty_body_is_400 \
	'400 {"error":"invalid_request","detail":"invalid mediation request size"}' \
	"$(relay_post /mediate '')"
rule_begin malformed_json_is_400_with_a_detail
r=$(relay_post /mediate '{"pre_context":')
rule_has answer "$r" '400 {"error":"invalid_request","detail":"'
rule_end
assert_eq a_request_that_is_no_object_is_400 \
	'400 {"error":"invalid_request","detail":"mediation request must be a JSON object"}' \
	"$(relay_post /mediate '[1]')"
assert_eq mediate_without_pre_context_is_400 \
	'400 {"error":"invalid_request","detail":"mediate requires object pre_context"}' \
	"$(relay_post /mediate '{}')"

assert_eq register_answers_registered '200 {"status":"registered"}' \
	"$(relay_post /register '{"case_id":"C"}')"
assert_eq register_for_another_case_is_400 \
	'400 {"error":"invalid_request","detail":"mediator registration case_id does not match the ASSERT-owned sandbox case"}' \
	"$(relay_post /register '{"case_id":"D"}')"

rule_begin mediate_answers_asserts_decision_payload_only
r=$(relay_post /mediate "$(call m1 send_a '{"to":"ada"}')")
rule_eq status 200 "${r%% *}"
d=${r#* }
rule_eq keys '["decision_reason","flagged","is_error","matched","mock_source","mode","real_executed","reason","returned"]' \
	"$(printf '%s' "$d" | jq -c '.decision | keys')"
rule_eq values '{"mode":"mock","real_executed":false,"flagged":true,"reason":"mocked by mediation policy rule '"'"'send_*'"'"'","decision_reason":"mocked by mediation policy rule '"'"'send_*'"'"'","matched":"send_*","returned":{"status":"sent"},"mock_source":"inline","is_error":false}' \
	"$(printf '%s' "$d" | jq -c '.decision')"
rule_end

rule_begin a_forged_session_case_id_is_400_and_not_recorded
before=$(rows)
rule_eq other '400 {"error":"invalid_request","detail":"mediated call case_id does not match the ASSERT-owned sandbox case"}' \
	"$(relay_post /mediate "$(call f1 lookup_a '{}' D)")"
rule_eq missing '400 {"error":"invalid_request","detail":"mediated call case_id does not match the ASSERT-owned sandbox case"}' \
	"$(relay_post /mediate '{"pre_context":{"interception_point":"pre_tool_call","tool_call":{"id":"f2","name":"lookup_a"}}}')"
rule_eq "no row" "$before" "$(rows)"
rule_end

rule_begin a_tool_call_without_id_name_or_object_args_is_400
for tc in '{"name":"lookup_a"}' '{"id":"x","name":"  "}' '{"id":"x","name":"lookup_a","args":[1]}'; do
	rule_eq "$tc" '400 {"error":"invalid_request","detail":"host mediator requires tool_call.id, tool_call.name, and object args"}' \
		"$(relay_post /mediate "{\"pre_context\":{\"interception_point\":\"pre_tool_call\",\"session\":{\"case_id\":\"C\"},\"tool_call\":$tc}}")"
done
rule_end

rule_begin a_context_that_is_not_pre_tool_call_is_400_and_not_recorded
before=$(rows)
rule_eq post "400 {\"error\":\"invalid_request\",\"detail\":\"ActionMediator expects a pre_tool_call context\"}" \
	"$(relay_post /mediate '{"pre_context":{"interception_point":"post_tool_call","session":{"case_id":"C"},"tool_call":{"id":"i1","name":"lookup_a"}}}')"
rule_eq missing "400 {\"error\":\"invalid_request\",\"detail\":\"ActionMediator expects a pre_tool_call context\"}" \
	"$(relay_post /mediate '{"pre_context":{"session":{"case_id":"C"},"tool_call":{"id":"i2","name":"lookup_a"}}}')"
rule_eq "no row" "$before" "$(rows)"
rule_end

rule_begin a_tool_name_with_spaces_around_is_decided_as_sent
r=$(relay_post /mediate "$(call s1 ' lookup_a ')")
rule_eq status 200 "${r%% *}"
rule_eq mode '"block"' "$(printf '%s' "${r#* }" | jq -c '.decision.mode')"
rule_end

rule_begin a_call_the_policy_cannot_match_is_400_with_asserts_detail_alone
rule_eq answer "400 {\"error\":\"invalid_request\",\"detail\":\"operator 'gt' needs numeric operands, got 'x' and 100\"}" \
	"$(relay_post /mediate "$(call g1 send_credit '{"amount":"x"}')")"
rule_end

rule_begin a_duplicate_call_id_is_400
relay_post /mediate "$(call p1 lookup_a '{"id":1}')" >/dev/null
rule_eq answer "400 {\"error\":\"invalid_request\",\"detail\":\"duplicate mediation call id 'p1'\"}" \
	"$(relay_post /mediate "$(call p1 lookup_a '{"id":1}')")"
rule_end

rule_begin complete_records_the_targets_result
rule_eq answer '200 {"status":"recorded"}' \
	"$(relay_post /complete '{"call_id":"p1","returned":{"n":1},"is_error":false,"real_executed":true}')"
rule_has row "$(grep -F '"call_id":"p1"' "$(lf_ledger C)" | grep -F '"phase":"completion"')" '"returned":{"n":1}'
rule_end

rule_begin a_second_complete_is_400
rule_eq answer "400 {\"error\":\"invalid_request\",\"detail\":\"unknown or already-completed mediation call 'p1'\"}" \
	"$(relay_post /complete '{"call_id":"p1","returned":{"n":1},"is_error":false,"real_executed":true}')"
rule_end

rule_begin complete_of_a_mock_or_an_unknown_call_is_400
rule_eq mock "400 {\"error\":\"invalid_request\",\"detail\":\"unknown or already-completed mediation call 'm1'\"}" \
	"$(relay_post /complete '{"call_id":"m1","returned":1}')"
rule_eq unknown "400 {\"error\":\"invalid_request\",\"detail\":\"unknown or already-completed mediation call 'zz'\"}" \
	"$(relay_post /complete '{"call_id":"zz","returned":1}')"
rule_end

rule_begin the_host_guard_refuses_another_host
rule_eq evil 403 "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "$relay_url/health")"
rule_eq "other port" 403 "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: 127.0.0.1:1' "$relay_url/health")"
rule_eq localhost 200 "$(curl -s -o /dev/null -w '%{http_code}' -H "Host: localhost:$relay_port" "$relay_url/health")"
rule_end

rule_begin concurrent_calls_are_each_answered_and_recorded
before=$(rows)
cpids=
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	timeout 30 curl -s -o "$work/cc.$i" -w '%{http_code}' -X POST \
		-H "Authorization: Bearer $RELAY_TOKEN" \
		--data-binary "$(call "cc$i" lookup_c "{\"i\":$i}")" \
		"$relay_url/mediate" >"$work/cc.$i.code" &
	cpids="$cpids $!"
done
for p in $cpids; do wait "$p"; done
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
	rule_eq "cc$i" '200 "pass"' "$(cat "$work/cc.$i.code") $(jq -c .decision.mode "$work/cc.$i")"
done
rule_eq "rows" $((before + 16)) "$(rows)"
rule_end

# Ids and names are stripped as Python's str.strip() strips: Unicode
# white space too (U+2003, U+00A0).
rule_begin ids_and_names_are_stripped_of_unicode_white_space_as_python_strips_them
rule_eq "mediate" 200 "$(relay_post /mediate "$(call '\u2003w1\u2003' lookup_a '{}')" | cut -d' ' -f1)"
rule_eq "complete by the stripped id" '200 {"status":"recorded"}' \
	"$(relay_post /complete '{"call_id":"w1","returned":1,"real_executed":true}')"
rule_eq "a name of white space alone" 400 \
	"$(relay_post /mediate "$(call w2 '\u00a0' '{}')" | cut -d' ' -f1)"
rule_end
assert_eq it_prints_nothing_on_success "" "$(cat "$work/relay.out" "$work/relay.err")"
# The daemon gone: /complete of a known call is the relay's trouble (502,
# as /mediate), not an unknown call; after a restart the same request
# records.
relay_post /mediate "$(call d2 lookup_a '{}')" >/dev/null
lf_stop
rule_begin complete_with_the_daemon_gone_is_502_mediator_unavailable
r=$(relay_post /complete '{"call_id":"d2","returned":{"ok":1},"real_executed":true}')
rule_eq status 502 "${r%% *}"
rule_has body "$r" '"error":"mediator_unavailable"'
lf_start
rule_eq "after a restart" '200 {"status":"recorded"}' \
	"$(relay_post /complete '{"call_id":"d2","returned":{"ok":1},"real_executed":true}')"
rule_end
relay_stop
assert_eq it_exits_0_on_term 0 $?

# A token the daemon cannot read (not hex) is refused as a wrong one is,
# with ASSERT's detail (ledgerfs-relay(1) POST /register).
lf_open T
relay_port=$(relay_free_port)
relay_url=http://127.0.0.1:$relay_port
LEDGERFS_RELAY_TOKEN=$RELAY_TOKEN LEDGERFS_CASE=T LEDGERFS_TOKEN=wrongtoken \
	"$RELAY" --listen="127.0.0.1:$relay_port" --dir "$(lf_tdir T)" \
	>>"$work/relay.out" 2>>"$work/relay.err" &
relay_pid=$!
lf_bg_pids="$lf_bg_pids $relay_pid"
i=0
until curl -s -o /dev/null "$relay_url/health" || [ $i -gt 100 ]; do i=$((i + 1)); sleep 0.05; done
assert_eq a_malformed_registration_token_is_400_with_asserts_detail \
	'400 {"error":"invalid_request","detail":"mediator registration case_id does not match the ASSERT-owned sandbox case"}' \
	"$(relay_post /register '{"case_id":"T"}')"
relay_stop

# A tool the host runs (ledgerfs-policy(5) HOST EXECUTORS): the relay hands
# ASSERT the host's result as a mock from host_executed, so its client
# does not run the tool, and /complete has nothing left to record.
lf_open_host_echo H
relay_start H
rule_begin a_host_executed_call_is_a_mock_from_host_executed_with_the_host_result
r=$(relay_post /mediate "$(call h1 echo_args '{"q":"acme"}' H)")
rule_eq status 200 "${r%% *}"
d=${r#* }
rule_eq decision '{"mode":"mock","mock_source":"host_executed","real_executed":true,"returned":{"by":"host","got":{"q":"acme"}},"is_error":false}' \
	"$(printf '%s' "$d" | jq -c '.decision | {mode, mock_source, real_executed, returned, is_error}')"
rule_has completion "$(grep -F '"phase":"completion"' "$(lf_ledger H)")" '"result_source":"host_executed"'
rule_eq "complete after it" "400 {\"error\":\"invalid_request\",\"detail\":\"unknown or already-completed mediation call 'h1'\"}" \
	"$(relay_post /complete '{"call_id":"h1","returned":1}')"
rule_end

relay_stop

# --- options and listeners ---
sock=$work/relay.sock
printf '%s\n' "$RELAY_TOKEN" >"$work/token"
LEDGERFS_CASE=C "$RELAY" --listen "unix:$sock" --token-file "$work/token" \
	--dir="$(lf_tdir C)" 2>>"$work/relay.err" &
upid=$!
lf_bg_pids="$lf_bg_pids $upid"
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
rule_begin a_unix_socket_listener_with_a_token_file_serves_the_case
rule_eq health '{"status":"ok"}' "$(curl -s --unix-socket "$sock" http://relay/health)"
r=$(curl -s --unix-socket "$sock" -X POST -H "Authorization: Bearer $RELAY_TOKEN" \
	--data-binary "$(call u1 lookup_a)" http://relay/mediate)
rule_eq mode '"pass"' "$(printf '%s' "$r" | jq -c .decision.mode)"
rule_end
relay_pid=$upid
relay_stop
assert_eq the_unix_socket_is_removed_at_exit no "$([ -e "$sock" ] && echo yes || echo no)"

# Port 0: the relay prints the port the kernel picked, and it serves there.
LEDGERFS_RELAY_TOKEN=$RELAY_TOKEN LEDGERFS_CASE=C LEDGERFS_TOKEN=$(lf_token C) \
	"$RELAY" --listen 127.0.0.1:0 --listen "unix:$work/p0.sock" \
	--dir="$(lf_tdir C)" >"$work/p0.out" 2>>"$work/relay.err" &
ppid=$!
lf_bg_pids="$lf_bg_pids $ppid"
i=0
until [ "$(wc -l <"$work/p0.out")" -ge 1 ] || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
rule_begin port_zero_listener_prints_the_port_it_got
p0=$(sed -n 1p "$work/p0.out")
case $p0 in "listening on 127.0.0.1:"[1-9]*) ;; *) rule_fail "first line '$p0'" ;; esac
rule_eq "lines" 1 "$(wc -l <"$work/p0.out" | tr -d ' ')"
rule_eq health '{"status":"ok"}' "$(curl -s "http://${p0#listening on }/health")"
rule_end
relay_pid=$ppid
relay_stop

# ledgerfs-relay(1) ENVIRONMENT: as ASSERT asks no registration, the relay
# registers its case before its first call, once: a registration before
# every call would be an identical repeat (no row) costing an open, a
# write and a close of the view's register file each time.
rule_begin the_relay_registers_its_case_once_before_its_first_call
if command -v strace >/dev/null; then
	lf_open R1
	relay_wrap="strace -f -qq -e trace=open,openat -o $work/relay.strace" \
		relay_start R1
	for i in 1 2 3; do
		rule_eq "call $i" 200 "$(relay_post /mediate "$(call r$i lookup_a '{}' R1)" | cut -d' ' -f1)"
	done
	# The relay is strace's child: a signal to strace would only detach
	# it and leave it running.  Stopped, it takes strace with it.
	kill -TERM $(pgrep -P "$relay_pid") 2>/dev/null
	relay_stop
	rule_eq "registered" 1 "$(lf_rows R1 '"phase":"registered"')"
	rule_eq "opens of register" 1 \
		"$(grep -c '"[^"]*register", O_' "$work/relay.strace")"
else
	rule_fail "strace missing"
fi
rule_end

refuse() { # NAME WANT-STATUS NEEDLE ARGS...: the relay refuses to start
	_n=$1 _w=$2 _needle=$3
	shift 3
	_e=$(LEDGERFS_RELAY_TOKEN=${tok-$RELAY_TOKEN} timeout 10 "$RELAY" "$@" 2>&1 >/dev/null)
	_s=$?
	rule_begin "$_n"
	rule_eq status "$_w" "$_s"
	rule_has reason "$_e" "$_needle"
	rule_end
}
refuse no_listen_is_a_usage_error 2 usage --dir=/x
tok='' refuse no_token_is_refused 2 'no token' --listen=127.0.0.1:0
refuse a_listen_outside_the_grammar_is_refused 2 '--listen 127.0.0.1:x' --listen=127.0.0.1:x
refuse a_non_loopback_address_is_refused 2 'not a loopback address' --listen 0.0.0.0:0
python3 -c 'import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(1); print(s.getsockname()[1]); sys.stdout.flush(); time.sleep(20)' >"$work/busy" &
bpid=$!
lf_bg_pids="$lf_bg_pids $bpid"
i=0
while [ ! -s "$work/busy" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
refuse a_port_in_use_exits_1_with_the_reason 1 'cannot listen on 127.0.0.1:' --listen "127.0.0.1:$(cat "$work/busy")"
kill $bpid 2>/dev/null

relay_check_sanitizer
lf_finish
