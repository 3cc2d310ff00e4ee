#!/bin/sh
# SPDX-License-Identifier: MIT
# host_executors.sh - passed calls the host runs itself (ledgerfs(8) HOST
# EXECUTORS, ledgerfs-policy(5) HOST EXECUTORS): the reply carries the
# executor's real result, authoritative; the ledger's completion row says
# host_executed with exit status and duration; the target writes no
# result; clients (ledgercall) treat the reply as the host's result; the
# executor runs as its user, in its own session, with the call's args on
# stdin; a restart keeps all of it.
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start

tools=$work/tools
mkdir "$tools"
chmod 0755 "$tools"
# The executor: echoes who and how it runs, and the args it read.
cat >"$tools/inspect" <<'SH'
#!/bin/sh
args=$(cat)
tty=no
[ -t 0 ] && tty=yes
pgid=$(ps -o pgid= -p $$ | tr -d ' ')
sid=$(ps -o sid= -p $$ | tr -d ' ')
printf '{"uid":%s,"args":%s,"pid":%s,"pgid":%s,"sid":%s,"tty":"%s","cwd":"%s","nnp":%s}\n' \
	"$(id -u)" "$args" $$ "$pgid" "$sid" "$tty" "$(pwd)" \
	"$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status)"
SH
chmod 0755 "$tools/inspect"

POLICY="interactions:
  - match: inspect
    mode: pass
    exec: {argv: [$tools/inspect], timeout: 10s, cwd: /tmp}
  - match: lookup_*
    mode: pass
default: {mode: block}
"
lf_open_reg C "$POLICY" ""

reply=$(lf_call C c1 inspect '{"q":"acme","n":3}')
rule_begin host_executed_result_is_authoritative
rule_has mode "$reply" '"mode":"pass"'
rule_has real "$reply" '"real_executed":true'
rule_has source "$reply" '"result_source":"host_executed"'
rule_has authoritative "$reply" '"result_authoritative":true'
rule_has is_error "$reply" '"is_error":false'
rule_has returned "$reply" '"args":{"n":3,"q":"acme"}'
rule_end

rule_begin executor_gets_the_args_on_stdin_as_its_user_without_a_terminal
rule_has uid "$reply" '"uid":65534'
rule_has tty "$reply" '"tty":"no"'
rule_has cwd "$reply" '"cwd":"/tmp"'
rule_has nnp "$reply" '"nnp":1'
pid=$(echo "$reply" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
rule_eq "own process group" "$pid" "$(echo "$reply" | sed -n 's/.*"pgid":\([0-9]*\).*/\1/p')"
rule_eq "own session" "$pid" "$(echo "$reply" | sed -n 's/.*"sid":\([0-9]*\).*/\1/p')"
rule_end

ledger=$(lf_ledger C)
row=$(grep '"phase":"completion"' "$ledger" | grep '"call_id":"c1"')
rule_begin host_executed_row_records_source_exit_status_and_duration
rule_has source "$row" '"result_source":"host_executed"'
rule_has authoritative "$row" '"result_authoritative":true'
rule_has real "$row" '"real_executed":true'
rule_has status "$row" '"exit_status":0'
rule_has duration "$row" '"duration_ms":'
rule_has decision "$(grep '"phase":"decision"' "$ledger" | grep '"call_id":"c1"')" '"executor":"host"'
rule_end

rule_begin reply_file_replies_file_and_request_agree
rule_eq reply "$reply" "$(cat "$mnt/cases/C/target/replies/c1")"
rule_end

# The target writes no result: refused like a result for a mocked call.
lf_expect_refused host_executed_call_refuses_a_target_result C result EINVAL \
	LF_NOT_PASS refused '{"call_id":"c1","returned":{"x":1},"real_executed":true}\n'
rule_begin host_executed_refusal_says_the_host_runs_it
rule_has error "$(cat "$mnt/cases/C/target/error")" "run by the host"
rule_end

# A plain pass is still the target's to run and report.
reply=$(lf_call C c2 lookup_a)
assert_contains plain_pass_stays_target_reported "$reply" '"result_source":"target_reported"'

# ledgercall: exit 3, the reply holds the host's result (as for mock).
out=$(LEDGERFS_CASE=C LEDGERFS_TOKEN=$(lf_token C) timeout 30 \
	"$LEDGERCALL" --dir "$mnt/cases/C/target" --tool inspect --args '{"k":1}' --call-id c3)
st=$?
rule_begin ledgercall_exits_3_for_a_host_executed_call
rule_eq status 3 "$st"
rule_has out "$out" '"result_source":"host_executed"'
rule_end

# The Python client reads the same reply as the host's result.
py=$(LEDGERFS_DIR="$mnt/cases/C/target" PYTHONPATH="$top_srcdir/examples/python" \
	timeout 30 python3 -c '
import ledgerfs_client as l
d = l.Client().call("inspect", {"via": "python"}, call_id="p1")
print(d.host_executed, d.passed, d.returned["args"])
' 2>&1)
assert_eq python_client_sees_a_host_executed_result "True False {'via': 'python'}" "$py"

# The Claude Code hook denies the tool with the host's result as reason.
hk=$(printf '%s' '{"hook_event_name":"PreToolUse","tool_name":"inspect","tool_input":{"via":"hook"},"tool_use_id":"toolu_hx1","session_id":"s","cwd":"/"}' |
	LEDGERFS_DIR="$mnt/cases/C/target" LEDGERCALL="$LEDGERCALL" \
	timeout 30 python3 "$top_srcdir/examples/claude-code/pretooluse.py" 2>&1)
rule_begin claude_code_hook_denies_a_host_executed_call_with_its_result
rule_has decision "$hk" '"permissionDecision": "deny"'
rule_has reason "$hk" 'the host ran this tool; its result:'
rule_has result "$hk" 'via'
rule_end

# Restart: the completion is a fact; the reply reads the same.
before=$(cat "$mnt/cases/C/target/replies/c1")
lf_stop
lf_start
rule_begin host_executed_call_survives_a_restart
rule_eq reply "$before" "$(cat "$mnt/cases/C/target/replies/c1")"
rule_end
lf_expect_refused host_executed_call_refuses_a_target_result_after_restart \
	C result EINVAL LF_NOT_PASS refused '{"call_id":"c1","returned":1}\n'
check ledger_with_host_results_verifies lf_verify C

lf_finish
