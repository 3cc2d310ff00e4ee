#!/bin/sh
# SPDX-License-Identifier: MIT
# claude_code_hooks.sh - the Claude Code hooks of examples/claude-code
# against a real mount, fed recorded hook inputs (tests/data/claude-code)
# through the very commands settings.json names: pass is allowed, mock and
# block are denied with the host's result or reason, the passed result is
# written, and every way the case files can be out of reach denies.
. "$(dirname "$0")/lib.sh"
# Debian's python3 first: a version manager's shim adds seconds a call.
[ -x /usr/bin/python3 ] && PATH=/usr/bin:$PATH
command -v python3 >/dev/null || lf_skip_all "python3 is not installed"
lf_setup
lf_start
rec=$top_srcdir/tests/data/claude-code
# A project as a user sets it up: the example folder copied to .claude/.
proj=$work/project
mkdir -p "$proj/.claude"
cp "$top_srcdir"/examples/claude-code/* "$proj/.claude/"

policy='interactions:
  - match: Read
    mode: pass
  - match: Glob
    mode: pass
  - match: Write
    mode: pass
  - match: WebFetch
    mode: mock
    mock: {status: 200, body: "service up"}
  - match: Bash
    mode: block
default: {mode: block}
'
lf_open_reg H "$policy" ''
LEDGERFS_DIR=$(lf_tdir H)
LEDGERCALL=$top_builddir/ledgercall
CLAUDE_PROJECT_DIR=$proj
export LEDGERFS_DIR LEDGERCALL CLAUDE_PROJECT_DIR

# hook EVENT INPUT: run settings.json's command for EVENT as Claude Code
# does (through a shell, the input on stdin); output in $out, status $rc.
hook() {
	_cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"][sys.argv[2]][0]["hooks"][0]["command"])' \
		"$proj/.claude/settings.json" "$1")
	out=$(timeout 30 env PATH="${HOOK_PATH:-$PATH}" sh -c "$_cmd" <"$2" 2>"$work/hook.err")
	rc=$?
	# The decision line, then the reason, of a PreToolUse output.
	_parsed=$(printf '%s' "$out" | python3 -c 'import json,sys
try:
    o=json.load(sys.stdin)["hookSpecificOutput"]
    print(o["hookEventName"], o["permissionDecision"]); print(o["permissionDecisionReason"])
except Exception:
    pass' 2>/dev/null)
}
decision() { printf '%s\n' "$_parsed" | sed -n 1p; }
reason() { printf '%s\n' "$_parsed" | sed -n '2,$p'; }
row() { grep -F "\"call_id\":\"$1\"" "$(lf_ledger H)" | grep -F "\"phase\":\"$2\""; }

rule_begin settings_json_names_the_scripts_beside_it
for s in $(python3 -c 'import json,re,sys
for ev in json.load(open(sys.argv[1]))["hooks"].values():
    for m in ev:
        for h in m["hooks"]:
            print(re.search(r"\.claude/([^\"]+)", h["command"]).group(1))' "$proj/.claude/settings.json"); do
	[ -f "$top_srcdir/examples/claude-code/$s" ] || rule_fail "missing $s"
done
rule_end

hook PreToolUse "$rec/pre_read.json"
rule_begin a_passed_tool_is_allowed_with_tool_use_id_as_the_call_id
rule_eq status 0 "$rc"
rule_eq decision "PreToolUse allow" "$(decision)"
rule_has row "$(row toolu_01A9cQm3XyZ7bV2nR4tK8pLw decision)" '"args":{"file_path":"/work/README.md"}'
rule_has row "$(row toolu_01A9cQm3XyZ7bV2nR4tK8pLw decision)" '"mode":"pass"'
rule_end

hook PostToolUse "$rec/post_read.json"
rule_begin the_posttooluse_hook_writes_the_passed_result
rule_eq status 0 "$rc"
rule_has row "$(row toolu_01A9cQm3XyZ7bV2nR4tK8pLw completion)" '"numLines":1'
rule_has row "$(row toolu_01A9cQm3XyZ7bV2nR4tK8pLw completion)" '"is_error":false'
rule_end

hook PreToolUse "$rec/pre_glob.json"
hook PostToolUseFailure "$rec/post_glob_failure.json"
rule_begin a_failed_passed_tool_is_written_as_an_error
rule_eq status 0 "$rc"
rule_has row "$(row toolu_01Pm3Fh8Ck5Za1Gv7Nd2Sj9B completion)" '"returned":{"error":"Directory does not exist: /work"}'
rule_has row "$(row toolu_01Pm3Fh8Ck5Za1Gv7Nd2Sj9B completion)" '"is_error":true'
rule_end

hook PreToolUse "$rec/pre_webfetch.json"
rule_begin a_mocked_tool_is_denied_with_the_host_result
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" '"body": "service up"'
rule_has row "$(row toolu_01Hq7Zr2Lm5Kp8Ns3Vb6Xc4D decision)" '"mode":"mock"'
rule_end

hook PreToolUse "$rec/pre_bash.json"
rule_begin a_blocked_tool_is_denied_with_the_host_reason
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" "blocked by mediation policy rule 'Bash'"
rule_end

hook PreToolUse "$rec/pre_read.json"
rule_begin a_repeated_tool_use_id_is_denied_not_allowed
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" "duplicate call id"
rule_end

# A tool input past the 128 KiB one command-line word may hold.
python3 -c 'import json,sys
c = "x" * 200000
json.dump({"hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_big",
           "tool_input": {"file_path": "/work/big.txt", "content": c}}, open(sys.argv[1], "w"))
json.dump({"hook_event_name": "PostToolUse", "tool_name": "Write", "tool_use_id": "toolu_big",
           "tool_input": {"file_path": "/work/big.txt", "content": c},
           "tool_response": {"type": "create", "content": c}}, open(sys.argv[2], "w"))' \
	"$work/pre_big.json" "$work/post_big.json"
hook PreToolUse "$work/pre_big.json"
rule_begin a_tool_input_over_128_kib_is_mediated_whole
rule_eq decision "PreToolUse allow" "$(decision)"
rule_eq "content bytes in the row" 200000 "$(row toolu_big decision | python3 -c 'import json,sys; print(len(json.loads(sys.stdin.read())["args"]["content"]))')"
rule_end
hook PostToolUse "$work/post_big.json"
rule_begin a_tool_result_over_128_kib_is_written_whole
rule_eq status 0 "$rc"
rule_eq "content bytes in the row" 200000 "$(row toolu_big completion | python3 -c 'import json,sys; print(len(json.loads(sys.stdin.read())["returned"]["content"]))')"
rule_end

printf '{"tool_name":"Read","tool_input":{}}' >"$work/noid.json"
hook PreToolUse "$work/noid.json"
assert_eq hook_input_without_tool_use_id_is_denied "PreToolUse deny" "$(decision)"
printf 'not json' >"$work/junk.json"
hook PreToolUse "$work/junk.json"
assert_eq malformed_hook_input_is_denied "PreToolUse deny" "$(decision)"

LEDGERCALL=/nonexistent/ledgercall hook PreToolUse "$rec/pre_glob.json"
assert_eq a_missing_ledgercall_is_denied "PreToolUse deny" "$(decision)"

LEDGERFS_DIR=$work/no-such-folder hook PreToolUse "$rec/pre_glob.json"
rule_begin an_unreachable_case_folder_is_denied
rule_eq status 0 "$rc"
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" "could not be mediated"
rule_end

# A call the host ran itself (ledgerfs(8) PROTOCOL): ledgercall exits 3
# with a pass reply holding the host's result.  The daemon's reply is
# stood in for by a ledgercall that prints one.
cat >"$work/host-ledgercall" <<'EOS'
#!/bin/sh
printf '%s\n' '{"call_id":"toolu_01hostexec","sequence":9,"mode":"pass","reason":"run by the host","returned":{"exit":0,"stdout":"ran on host"},"is_error":false,"real_executed":true,"result_source":"host_executed","result_authoritative":true}'
exit 3
EOS
chmod +x "$work/host-ledgercall"
LEDGERCALL=$work/host-ledgercall hook PreToolUse "$rec/pre_glob.json"
rule_begin a_host_executed_call_is_denied_with_the_host_result
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" '"stdout": "ran on host"'
rule_end

# LEDGERFS_HOOK_TIMEOUT bounds the whole hook, registration and call
# together: two steps of 1.5 s each past a limit of 2 s are denied, in
# time, not allowed after Claude Code has given up on the hook.
cat >"$work/slow-ledgercall" <<EOS
#!/bin/sh
sleep 1.5
exec $LEDGERCALL "\$@"
EOS
chmod +x "$work/slow-ledgercall"
sed 's/toolu_01Pm3Fh8Ck5Za1Gv7Nd2Sj9B/toolu_01slowmediator/' "$rec/pre_glob.json" >"$work/pre_slow.json"
t0=$(date +%s%N)
LEDGERCALL=$work/slow-ledgercall LEDGERFS_HOOK_TIMEOUT=2 LEDGERFS_CASE=H \
	LEDGERFS_TOKEN=$(lf_token H) hook PreToolUse "$work/pre_slow.json"
t1=$(date +%s%N)
rule_begin the_hook_timeout_bounds_registration_and_call_together
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" "no decision in time"
rule_eq "within 3.5 s" yes "$([ $(((t1 - t0) / 1000000)) -lt 3500 ] && echo yes || echo "no: $(((t1 - t0) / 1000000)) ms")"
rule_end

# No python3 at all: the command itself exits 2, which blocks the call.
mkdir "$work/bin"
ln -s "$(command -v sh)" "$work/bin/sh"
HOOK_PATH=$work/bin hook PreToolUse "$rec/pre_glob.json"
assert_eq without_python3_the_hook_command_blocks_with_exit_2 2 "$rc"

echo close >"$(lf_cdir H)/ctl"
sed 's/toolu_01Pm3Fh8Ck5Za1Gv7Nd2Sj9B/toolu_01closedcase/' "$rec/pre_glob.json" >"$work/pre_closed.json"
hook PreToolUse "$work/pre_closed.json"
rule_begin a_closed_case_is_denied
rule_eq decision "PreToolUse deny" "$(decision)"
rule_has reason "$(reason)" "EPIPE"
rule_end

# The mediator dies: its mount is dead (ENOTCONN) until its helper
# detaches it (then ENOENT); either way the call is denied.
kill -9 "$lf_daemon"
wait "$lf_daemon" 2>/dev/null
lf_daemon=
sed 's/toolu_01Pm3Fh8Ck5Za1Gv7Nd2Sj9B/toolu_01deadmediator/' "$rec/pre_glob.json" >"$work/pre_dead.json"
hook PreToolUse "$work/pre_dead.json"
rule_begin a_dead_mediator_is_denied
rule_eq status 0 "$rc"
rule_eq decision "PreToolUse deny" "$(decision)"
rule_end
umount -l "$mnt" 2>/dev/null
lf_finish
