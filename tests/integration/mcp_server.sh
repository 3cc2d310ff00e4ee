#!/bin/sh
# SPDX-License-Identifier: MIT
# mcp_server.sh - ledgerfs-mcp(1) at the JSON-RPC level, one rule a
# check: the error codes for malformed input, the bounds, the result
# shapes by decision, a refused call, stdout carrying JSON-RPC alone, and
# exit 0 when stdin closes.  The SDK test (mcp_sdk_client.sh) covers a
# real client; this one needs nothing but the build.
. "$(dirname "$0")/lib.sh"
MCP=$top_builddir/ledgerfs-mcp
[ -x "$MCP" ] || lf_skip_all "ledgerfs-mcp not built"
lf_setup
lf_start
lf_open_reg C
d=$(lf_tdir C)

# mcp LINES...: run the server on these lines; stdout in $work/out,
# stderr in $work/err, status in $rc.
mcp() {
	printf '%s\n' "$@" | timeout 20 "$MCP" --dir="$d" >"$work/out" 2>"$work/err"
	rc=$?
	cat "$work/err" >>"$work/all.err"
}
# answer ID: the response line with that id
answer() { grep -F "\"id\":$1," "$work/out"; }

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
mcp "$init" '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
assert_contains initialize_answers_with_the_requested_supported_revision "$(answer 1)" '"protocolVersion":"2025-06-18"'
assert_contains initialize_answers_an_unknown_revision_with_the_latest "$(answer 2)" '"protocolVersion":"2025-11-25"'
assert_eq the_server_exits_0_when_stdin_closes 0 "$rc"

mcp "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","method":"notifications/whatever","params":{}}' \
	'{"jsonrpc":"2.0","id":3,"method":"ping"}'
rule_begin notifications_get_no_response
rule_eq lines 2 "$(wc -l <"$work/out" | tr -d ' ')"
rule_has ping "$(answer 3)" '"result":{}'
rule_end

mcp 'not json' '[{"jsonrpc":"2.0","id":4,"method":"ping"}]' \
	'{"jsonrpc":"1.0","id":5,"method":"ping"}' '{"jsonrpc":"2.0","id":{},"method":"ping"}' \
	'{"jsonrpc":"2.0","id":6,"method":"resources/list"}' \
	'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{}}}' \
	'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"x","arguments":[1]}}' \
	'{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}'
assert_contains a_line_that_is_not_json_is_32700 "$(sed -n 1p "$work/out")" '"id":null,"error":{"code":-32700'
assert_contains a_batch_is_32600 "$(sed -n 2p "$work/out")" '"id":null,"error":{"code":-32600'
assert_contains a_wrong_jsonrpc_version_is_32600 "$(answer 5)" '"code":-32600'
assert_contains an_object_id_is_32600_with_a_null_id "$(sed -n 4p "$work/out")" '"id":null,"error":{"code":-32600'
assert_contains an_unknown_method_is_32601 "$(answer 6)" '"code":-32601'
assert_contains tools_call_without_a_name_is_32602 "$(answer 7)" '"code":-32602'
assert_contains tools_call_with_array_arguments_is_32602 "$(answer 8)" '"code":-32602'
assert_contains initialize_without_a_revision_is_32602 "$(answer 9)" '"code":-32602'

deep=$(printf '%0.s[' $(seq 1 100))
big=$(head -c 9000000 /dev/zero | tr '\0' 'a')
mcp "$deep" "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\",\"params\":{\"x\":\"$big\"}}" \
	'{"jsonrpc":"2.0","id":11,"method":"ping"}'
assert_contains input_nested_too_deep_is_32700 "$(sed -n 1p "$work/out")" 'nested deeper than 64'
assert_contains a_line_over_8_mib_is_dropped_as_32700 "$(sed -n 2p "$work/out")" 'line over the limit'
assert_contains the_server_serves_on_after_an_oversized_line "$(answer 11)" '"result":{}'

rows0=$(lf_rows C)
mcp "$init" '{"jsonrpc":"2.0","id":20,"method":"tools/list"}' \
	'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"send_a","arguments":{"n":1}}}' \
	'{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"delete_a"}}' \
	'{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"lookup_a","arguments":{}}}'
assert_eq tools_list_without_a_tools_file_lists_the_policy_exact_names \
	'{"jsonrpc":"2.0","id":20,"result":{"tools":[{"name":"resume_line","inputSchema":{"type":"object"}}]}}' "$(answer 20)"
assert_contains a_mocked_call_has_structured_content "$(answer 21)" '"isError":false,"structuredContent":{"status":"sent"}'
assert_contains a_blocked_call_is_a_tool_error_with_the_reason "$(answer 22)" '"content":[{"type":"text","text":"blocked by mediation policy rule '"'"'delete_*'"'"'"}'
# A client checks structuredContent against the tool's outputSchema: a
# block's payload is not the tool's output.
rule_begin a_blocked_call_carries_no_structured_content
rule_has answer "$(answer 22)" '"isError":true'
rule_hasnt answer "$(answer 22)" 'structuredContent'
rule_end
rule_begin a_passed_call_without_downstream_is_a_no_implementation_error_recorded_as_not_executed
rule_has answer "$(answer 23)" '"text":"no implementation'
# Calls run concurrently: find the row, not the last one.
row=$(grep -F '"phase":"completion"' "$(lf_ledger C)" | grep -F '"tool":"lookup_a"')
rule_has row "$row" '"real_executed":false'
rule_has row "$row" '"returned":{"error":"no implementation'
rule_end
assert_eq every_call_is_one_decision_row_plus_the_passed_result 4 $(($(lf_rows C) - rows0))
rule_begin stdout_carries_json_rpc_alone
rule_eq "non-JSON-RPC lines" 0 "$(grep -vc '^{"jsonrpc":"2.0",' "$work/out")"
rule_end

# More calls at once than may be in flight: slowed, every one answered.
i=100
lines=
while [ $i -lt 300 ]; do
	lines="$lines{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"send_a\"}}
"
	i=$((i + 1))
done
printf '%s' "$lines" | timeout 120 "$MCP" --dir="$d" >"$work/out" 2>>"$work/all.err"
assert_eq a_client_pipelining_200_calls_gets_200_results 200 \
	"$(grep -c '"result":{"content"' "$work/out")"

printf '%s\n' '{"jsonrpc":"2.0","id":50,"method":"tools/list"}' |
	timeout 20 "$MCP" --dir "$d" >"$work/out" 2>>"$work/all.err"
assert_contains the_dir_option_takes_its_value_in_the_next_word_too "$(answer 50)" '"name":"resume_line"'

# A tool the host runs (ledgerfs-policy(5) HOST EXECUTORS): the server
# answers with the host's result and neither runs nor reports it itself.
lf_open_host_echo H
rowsh=$(lf_rows H)
printf '%s\n' "$init" \
	'{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"echo_args","arguments":{"q":"acme"}}}' |
	timeout 20 "$MCP" --dir="$(lf_tdir H)" >"$work/out" 2>>"$work/all.err"
rule_begin a_host_executed_call_answers_with_the_host_result_without_a_downstream
rule_has answer "$(answer 40)" '"isError":false,"structuredContent":{"by":"host","got":{"q":"acme"}}'
rule_eq "rows: the call and the host's completion" 2 $(($(lf_rows H) - rowsh))
rule_has completion "$(tail -n 1 "$(lf_ledger H)")" '"result_source":"host_executed"'
rule_end

# A scalar is JSON but no request; a string holding \u0000 is JSON too,
# and the call reaches the case, which refuses it with a row of its own.
rows0=$(lf_rows C)
mcp '1' '"x"' \
	'{"jsonrpc":"2.0","id":60,"method":"tools/call","params":{"name":"send_u","arguments":{"s":"a\u0000b"}}}'
assert_contains a_json_scalar_is_32600_not_32700 "$(sed -n 1p "$work/out")" '"id":null,"error":{"code":-32600'

rule_begin arguments_holding_a_nul_are_answered_with_their_id_as_a_refused_call
rule_has answer "$(answer 60)" '"isError":true'
rule_has answer "$(answer 60)" 'ledgerfs refused the call: Invalid argument'
rule_eq "rows: the refusal" 1 $(($(lf_rows C) - rows0))
rule_end
mcp '{"jsonrpc":"2.0","id":64,"method":"tools/call","params":{"name":"lookup_\u0000delete_all","arguments":{}}}'
assert_contains a_tool_name_holding_a_nul_is_32602_with_its_id "$(answer 64)" '"code":-32602'

# A tools file may leave a tool's inputSchema out; MCP requires one.
printf '{"tools":[{"name":"lookup_x"},{"name":"send_y","inputSchema":{"type":"object","properties":{}}}]}' >"$work/tools.json"
mkdir "$mnt/cases/S"
printf '%s' "$LF_POLICY_DEFAULT" >"$mnt/cases/S/policy"
cp "$work/tools.json" "$mnt/cases/S/tools"
lf_register S
printf '%s\n' '{"jsonrpc":"2.0","id":61,"method":"tools/list"}' |
	timeout 20 "$MCP" --dir="$(lf_tdir S)" >"$work/out" 2>>"$work/all.err"
assert_eq tools_list_gives_a_tool_without_input_schema_an_empty_object_schema \
	'{"jsonrpc":"2.0","id":61,"result":{"tools":[{"name":"lookup_x","inputSchema":{"type":"object"}},{"name":"send_y","inputSchema":{"type":"object","properties":{}}}]}}' \
	"$(answer 61)"

# A downstream whose answer cannot be read: the calls waiting on it end
# as tool errors, and the server still exits 0 when its input closes.
cat >"$work/garbler.sh" <<'GARBLE'
#!/bin/sh
while IFS= read -r line; do
	id=$(printf '%s' "$line" | sed -n 's/^.*"id":\([0-9]*\).*$/\1/p')
	case $line in
	*'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"g","version":"1"}}}\n' "$id" ;;
	*'"lookup_nul"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"a\\u0000b"}]}}\n' "$id" ;;
	*'"tools/call"'*) printf 'not json at all\n' ;;
	esac
done
GARBLE
chmod +x "$work/garbler.sh"
# One call a run: a line that cannot be read ends every call waiting.
printf '%s\n' "$init" '{"jsonrpc":"2.0","id":63,"method":"tools/call","params":{"name":"lookup_nul","arguments":{}}}' |
	timeout 20 "$MCP" --dir="$d" -- "$work/garbler.sh" >"$work/out63" 2>>"$work/all.err"
printf '%s\n' "$init" '{"jsonrpc":"2.0","id":62,"method":"tools/call","params":{"name":"lookup_g","arguments":{}}}' |
	timeout 20 "$MCP" --dir="$d" -- "$work/garbler.sh" >"$work/out" 2>"$work/err"
rc=$?
cat "$work/err" >>"$work/all.err"
rule_begin an_unreadable_downstream_answer_ends_the_waiting_call_as_a_tool_error
rule_eq status 0 "$rc"
rule_has answer "$(answer 62)" '"isError":true'
rule_has answer "$(answer 62)" 'not JSON-RPC'
row=$(grep -F '"phase":"completion"' "$(lf_ledger C)" | grep -F '"tool":"lookup_g"')
rule_has row "$row" '"returned":{"error":{"message":"the downstream server sent a message that is not JSON-RPC"}}'
rule_end
rule_begin a_downstream_result_the_case_refuses_is_not_handed_to_the_client
rule_has answer "$(grep -F '"id":63,' "$work/out63")" '"isError":true'
rule_has answer "$(grep -F '"id":63,' "$work/out63")" "ledgerfs refused the tool's result: Invalid argument"
rule_end

# A downstream that never answers initialize: exit 1 once the time is up.
printf '#!/bin/sh\nexec sleep 60\n' >"$work/mute.sh"
chmod +x "$work/mute.sh"
printf '%s\n' "$init" | timeout 20 "$MCP" --dir="$d" --init-timeout=500ms -- "$work/mute.sh" >"$work/out" 2>"$work/err"
rc=$?
rule_begin a_downstream_silent_past_init_timeout_exits_1
rule_eq status 1 "$rc"
rule_has stderr "$(cat "$work/err")" "initialize failed: no answer in time"
rule_end
# Two kinds of refusal at once: DIR/error is the case's, so a reason that
# names another errno than the call's is left out (ledgerfs-mcp(1)).
python3 - "$work/conc.in" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(100, 140):
        a = {"x": "y" * (1100 * 1024)} if i % 2 else {"x": "a\u0000b"}
        f.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                            "params": {"name": "send_a", "arguments": a}}) + "\n")
PY
timeout 60 "$MCP" --dir="$d" <"$work/conc.in" >"$work/conc.out" 2>/dev/null
rule_begin a_refused_call_never_names_another_calls_errno
rule_eq "answers" 40 "$(grep -c '"isError":true' "$work/conc.out")"
rule_eq "another errno's reason" "" "$(grep -o 'ledgerfs refused the call: [^"]*' "$work/conc.out" |
	grep -v -e '^ledgerfs refused the call: File too large\(: EFBIG .*\)\?$' \
		-e '^ledgerfs refused the call: Invalid argument\(: EINVAL .*\)\?$')"
rule_end
timeout 5 "$MCP" --dir="$d" --init-timeout=soon </dev/null >/dev/null 2>"$work/err"
assert_eq an_init_timeout_outside_the_duration_grammar_is_a_usage_error 2 $?
timeout 5 "$MCP" --dir="$d" "$work/mute.sh" </dev/null >/dev/null 2>"$work/err"
assert_eq a_downstream_command_without_the_double_dash_is_a_usage_error 2 $?
timeout 5 "$MCP" --dir -- "$work/mute.sh" </dev/null >/dev/null 2>"$work/err"
assert_eq dir_followed_by_the_double_dash_is_a_usage_error "2 --dir needs a folder" \
	"$? $(grep -o -- '--dir needs a folder' "$work/err")"

# A downstream that ignores SIGTERM: SIGKILL two seconds later, and the
# server exits (ledgerfs-mcp(1) DOWNSTREAM).
printf '#!/bin/sh\ntrap "" TERM\nexec sleep 61.25\n' >"$work/stubborn.sh"
chmod +x "$work/stubborn.sh"
t0=$(date +%s)
printf '%s\n' "$init" | timeout 30 "$MCP" --dir="$d" --init-timeout=300ms -- "$work/stubborn.sh" >"$work/out" 2>>"$work/all.err"
rc=$?
t1=$(date +%s)
rule_begin a_downstream_that_ignores_sigterm_is_killed_and_the_server_exits
rule_eq status 1 "$rc"
rule_eq "within 12 s" yes "$([ $((t1 - t0)) -le 12 ] && echo yes || echo "no: $((t1 - t0)) s")"
rule_eq "downstream left" "" "$(pgrep -f 'sleep 61.25')"
rule_end
pkill -9 -f 'sleep 61.25' 2>/dev/null

# Two servers with the same PID (each PID 1 of its own namespace), one
# right after the other: their calls' ids do not collide.
if command -v unshare >/dev/null && unshare --pid --fork true 2>/dev/null; then
	call='{"jsonrpc":"2.0","id":70,"method":"tools/call","params":{"name":"send_a","arguments":{}}}'
	printf '%s\n%s\n' "$init" "$call" | timeout 20 unshare --pid --fork "$MCP" --dir="$d" >"$work/ns1" 2>>"$work/all.err"
	printf '%s\n%s\n' "$init" "$call" | timeout 20 unshare --pid --fork "$MCP" --dir="$d" >"$work/ns2" 2>>"$work/all.err"
	rule_begin servers_with_the_same_pid_make_different_call_ids
	rule_has first "$(grep -F '"id":70,' "$work/ns1")" '"isError":false'
	rule_has second "$(grep -F '"id":70,' "$work/ns2")" '"isError":false'
	rule_eq "ids of PID 1" 2 "$(grep -cF '"call_id":"mcp-1-' "$(lf_ledger C)")"
	rule_end
fi

echo close >"$(lf_cdir C)/ctl"
mcp '{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"send_a"}}'
assert_contains a_call_the_view_refuses_is_a_tool_error_naming_errno_and_reason "$(answer 30)" '"text":"ledgerfs refused the call: Broken pipe: EPIPE'

printf '%s\n' "$init" | timeout 20 "$MCP" --dir="$d" -- /nonexistent/server >"$work/out" 2>"$work/err"
rc=$?
rule_begin a_downstream_that_cannot_start_exits_1_with_the_reason
rule_eq status 1 "$rc"
rule_has stderr "$(cat "$work/err")" "ledgerfs-mcp: downstream /nonexistent/server"
rule_eq stdout "" "$(cat "$work/out")"
rule_end
# A sanitizer build of the server must have reported nothing either.
assert_eq the_server_has_no_sanitizer_report "" \
	"$(grep -hE 'runtime error|AddressSanitizer|LeakSanitizer' "$work/all.err" "$work/err")"
lf_finish
