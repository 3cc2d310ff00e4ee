#!/bin/sh
# SPDX-License-Identifier: MIT
# evidence_turns.sh - `ledgerctl evidence` over a real mount: calls in two
# turns, a passed call left pending and marked missing at the turn, a late
# result for it refused (EINVAL) and recorded; evidence per turn, in
# attempt order, verified against the daemon.
set -u
. "$(dirname "$0")/lib.sh"
lf_setup
lf_start
# This script's names for lib.sh's folders.
ROOT=$work B=$backing K=$key M=$mnt

fail() {
	echo "FAIL: $*"
	sed 's/^/daemon: /' "$work/daemon.err"
	exit 1
}

C=$M/cases/C
T=$C/target
mkdir "$C" || fail "mkdir case"
cat >"$C/policy" <<'EOF' || fail "policy refused: $(cat "$C/status")"
interactions:
  - match: lookup_*
    mode: pass
  - match: send_message
    mode: mock
    mock: {status: sent}
default: {mode: block}
EOF
TOKEN=$(cat "$C/token") || fail "token"
printf '{"case_id":"C","token":"%s"}\n' "$TOKEN" >"$T/register" ||
	fail "register"

call() {
	printf '{"call_id":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3" \
		>"$T/request" || fail "call $1"
}

# turn 1: p1 stays pending, p2 gets its result, a mock and a block
call p1 lookup_customer '{"id":1}'
call p2 lookup_order '{"id":2}'
printf '%s\n' '{"call_id":"p2","returned":{"order":2},"is_error":false,"real_executed":true}' \
	>"$T/result" || fail "result p2"
call m3 send_message '{"to":"ada"}'
call b4 delete_account '{"id":1}'
printf 'turn\n' >"$C/ctl" || fail "turn"
# turn 2
call p5 lookup_customer '{"id":5}'
call m6 send_message '{"to":"grace"}'

# A late result for the call marked missing: EINVAL, and a refused row.
# (cat, not the printf builtin: some shells hide the errno of a failed write)
if printf '%s\n' '{"call_id":"p1","returned":{"late":true},"is_error":false,"real_executed":true}' |
	cat >"$T/result" 2>"$ROOT/late.err"; then
	fail "a late result for a missing call was accepted"
fi
grep -qi "invalid argument" "$ROOT/late.err" ||
	fail "late result: want EINVAL, got: $(cat "$ROOT/late.err")"
grep '"phase":"refused"' "$C/ledger" | grep '"call_id":"p1"' |
	grep -q '"refusal":"LF_NOT_PASS"' ||
	fail "the late result is not recorded as a refused row"

# id=completion_status,result_authoritative per event, in output order
summary() {
	awk -F'"' '
		/^  \{/ { id = ""; st = ""; au = "" }
		/^    "call_id":/ { id = $4 }
		/^    "completion_status":/ { st = $4 }
		/^    "result_authoritative":/ { au = ($0 ~ /true/) ? "auth" : "target" }
		/^  \}/ { printf "%s=%s,%s ", id, st, au }
	' "$1"
}

expect() {
	# $1 label, $2 output file, $3 wanted summary
	got=$(summary "$2")
	[ "$got" = "$3" ] || fail "$1: want '$3', got '$got'"
}

"$LEDGERCTL" evidence "$C" --turn 1 >"$ROOT/t1.json" 2>"$ROOT/t1.err" ||
	fail "evidence --turn 1: $(cat "$ROOT/t1.err")"
expect "turn 1" "$ROOT/t1.json" \
	"p1=missing,target p2=complete,target m3=complete,auth b4=complete,auth "
grep -q '"evidence_source": "host_mediator"' "$ROOT/t1.json" ||
	fail "no evidence_source"

"$LEDGERCTL" evidence "$C" --turn 2 >"$ROOT/t2.json" 2>"$ROOT/t2.err" ||
	fail "evidence --turn 2: $(cat "$ROOT/t2.err")"
expect "turn 2" "$ROOT/t2.json" "p5=pending,target m6=complete,auth "

"$LEDGERCTL" evidence "$C" >"$ROOT/all.json" 2>"$ROOT/all.err" ||
	fail "evidence: $(cat "$ROOT/all.err")"
expect "all turns" "$ROOT/all.json" \
	"p1=missing,target p2=complete,target m3=complete,auth b4=complete,auth p5=pending,target m6=complete,auth "

# The backing folder, offline, with the key: the same evidence.
"$LEDGERCTL" evidence "$B/cases/C" --key "$K" >"$ROOT/off.json" ||
	fail "offline evidence"
cmp -s "$ROOT/all.json" "$ROOT/off.json" ||
	fail "offline evidence differs from the mounted one"
# ... and without any key it is refused (exit 3), nothing printed.
if [ ! -e /etc/ledgerfs/host.key ]; then
	"$LEDGERCTL" evidence "$B/cases/C" >"$ROOT/nokey.out" 2>/dev/null
	rc=$?
	[ $rc = 3 ] || fail "a backing folder without a key: exit $rc, want 3"
	[ ! -s "$ROOT/nokey.out" ] || fail "evidence printed without a key"
fi

# The transcript gate over the mount: turn 2 claimed as the host saw it.
cat >"$ROOT/t2-transcript.json" <<'EOF'
{"messages": [
  {"role": "user", "content": "Look up customer 5 and greet Grace."},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "p5", "type": "function",
     "function": {"name": "lookup_customer", "arguments": "{\"id\": 5.0}"}},
    {"id": "m6", "type": "function",
     "function": {"name": "send_message", "arguments": "{\"to\": \"grace\"}"}}]},
  {"role": "tool", "tool_call_id": "p5", "content": "found"},
  {"role": "tool", "tool_call_id": "m6", "content": "delivered"},
  {"role": "assistant", "content": "Done."}
]}
EOF
"$LEDGERCTL" transcript "$C" --target "$ROOT/t2-transcript.json" --turn 2 \
	>"$ROOT/gate.json" 2>"$ROOT/gate.err" ||
	fail "transcript gate: $(cat "$ROOT/gate.err")"
grep -q '"content": "{\\"status\\":\\"sent\\"}"' "$ROOT/gate.json" ||
	fail "the mock's host result is not in the rebuilt transcript"
# the same transcript against turn 1 names both calls as forged
"$LEDGERCTL" transcript "$C" --target "$ROOT/t2-transcript.json" --turn 1 \
	>"$ROOT/gate1.json" 2>"$ROOT/gate1.err"
rc=$?
[ $rc = 1 ] || fail "gate against turn 1: exit $rc, want 1"
grep -q "forged: no host row for call 'p5'" "$ROOT/gate1.err" ||
	fail "gate did not name p5: $(cat "$ROOT/gate1.err")"
expect "gate evidence" "$ROOT/gate1.json" \
	"p1=missing,target p2=complete,target m3=complete,auth b4=complete,auth "

# The case closed (its last epoch empty: the host key reaches no MAC), a
# copy of its backing folder with a decision row rewritten and every
# later prev recomputed: the signed checkpoints refuse it, as verify
# --key does, for evidence and for the transcript gate alike (exit 3,
# nothing printed).
printf 'close\n' >"$C/ctl" || fail "close"
mkdir "$ROOT/forged" && cp -a "$B/cases/C" "$ROOT/forged/C" || fail "copy"
"$LEDGERCTL" evidence "$ROOT/forged/C" --key "$K" >/dev/null 2>&1 ||
	fail "evidence of the untouched copy"
python3 - "$ROOT/forged/C/ledger.jsonl" <<'PY' || fail "forge"
import hashlib, sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")[:-1]
k = next(i for i, l in enumerate(lines) if b'"status":"sent"' in l)
lines[k] = lines[k].replace(b'"status":"sent"', b'"status":"lost"')
for i in range(k + 1, len(lines)):
    j = lines[i].index(b'"prev":"') + 8
    lines[i] = lines[i][:j] + hashlib.sha256(lines[i - 1]).hexdigest().encode() + lines[i][j + 64:]
open(p, "wb").write(b"\n".join(lines) + b"\n")
PY
for sub in evidence transcript; do
	if [ $sub = transcript ]; then
		printf '{"messages": [{"role": "user", "content": "hi"}]}\n' >"$ROOT/hi.json"
		extra="--target $ROOT/hi.json"
	else
		extra=
	fi
	# shellcheck disable=SC2086
	"$LEDGERCTL" $sub "$ROOT/forged/C" --key "$K" $extra >"$ROOT/forged.out" 2>"$ROOT/forged.err"
	rc=$?
	[ $rc = 3 ] || fail "$sub of a forged backing ledger: exit $rc, want 3: $(cat "$ROOT/forged.err")"
	[ ! -s "$ROOT/forged.out" ] || fail "$sub printed from a forged ledger"
	grep -q "does not have the tree root\|do not have the tree root" "$ROOT/forged.err" ||
		fail "$sub: $(cat "$ROOT/forged.err")"
done

# The forged ledger alone, as a file: no MAC and no checkpoint reach it,
# so evidence says on standard error that only the chain was checked.
cp "$ROOT/forged/C/ledger.jsonl" "$ROOT/forged.jsonl"
"$LEDGERCTL" evidence "$ROOT/forged.jsonl" --key "$K" >/dev/null 2>"$ROOT/file.err" ||
	fail "evidence of a ledger file: $(cat "$ROOT/file.err")"
grep -q "warning: $ROOT/forged.jsonl: no MAC checked and no signed checkpoint" "$ROOT/file.err" ||
	fail "evidence of a ledger file no MAC reaches says nothing: $(cat "$ROOT/file.err")"
# ... and says nothing of the kind while its case is open (a MAC checked).
"$LEDGERCTL" evidence "$B/cases/C" --key "$K" >/dev/null 2>"$ROOT/dir.err"
! grep -q "no MAC checked" "$ROOT/dir.err" ||
	fail "a backing folder with checkpoints warned: $(cat "$ROOT/dir.err")"

echo "PASS: evidence per turn over a real mount"
exit 0
