#!/bin/sh
# SPDX-License-Identifier: MIT
# public_verify_detects_tampering.sh - ledgerfs-ledger(5) PUBLIC
# VERIFICATION with the verifier key alone, by `ledgerctl verify --pubkey`
# and by tests/tools/verify_ledger.py, an independent verifier written from
# the man page: honest ledgers, checkpoints and proofs pass (also from an
# export); single-bit flips of rows, checkpoints and proofs, a ledger whose
# chain was rebuilt after an edit, a truncated ledger and a fork (two
# checkpoints of one size) are refused.  Bit flips: every bit of the
# checkpoint and of both proofs, every bit of three rows (first, middle,
# last) for the Python verifier; for ledgerctl (one process per flip)
# every bit of 16 bytes spread over the checkpoint and over the ledger.
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
VERIFY="python3 $TOOLS/verify_ledger.py"
python3 -c 'import cryptography' 2>/dev/null || lf_skip_all "no python3-cryptography"
lf_setup
lf_start

lf_open_reg P
for i in 1 2 3 4; do lf_call P "p$i" lookup_a "{\"i\":$i}" >/dev/null; done
echo turn >"$(lf_cdir P)/ctl"
for i in 5 6 7; do lf_call P "p$i" send_a "{\"i\":$i}" >/dev/null; done
echo close >"$(lf_cdir P)/ctl"
"$LEDGERCTL" pubkey --key "$key" >"$work/vkey"
"$LEDGERCTL" --mount "$mnt" prove P 3 >"$work/incl.proof"
sed -n 3p "$backing/cases/P/ledger.jsonl" >"$work/row3"
set -- "$backing"/cases/P/checkpoints/*
"$LEDGERCTL" --mount "$mnt" consistency "$1" "$2" >"$work/cons.proof"
cp "$1" "$work/old.ckpt"
cp "$2" "$work/new.ckpt"
"$LEDGERCTL" --mount "$mnt" export P "$work/p.tar" --backing "$backing" \
	--key "$key" >/dev/null
mkdir "$work/x" && tar -C "$work/x" -xf "$work/p.tar"
P=$backing/cases/P
# The public side holds no key file at all.
mv "$key" "$key.away"
mv "$key.sign" "$key.sign.away"

rule_begin honest_ledger_checkpoints_and_proofs_verify_with_the_public_key_alone
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$P" 2>"$work/err") ||
	rule_fail "ledgerctl: $out"
rule_has "ledgerctl says" "$(cat "$work/err")" "MACs not checked"
out=$($VERIFY ledger --vkey "$work/vkey" "$P") || rule_fail "python: $out"
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/x/P" 2>&1) ||
	rule_fail "ledgerctl, export: $out"
out=$($VERIFY ledger --vkey "$work/vkey" "$work/x/P") ||
	rule_fail "python, export: $out"
rule_has "export holds the kept checkpoints" "$out" "ok: "
out=$($VERIFY proof --vkey "$work/vkey" --row "$work/row3" "$work/incl.proof") ||
	rule_fail "python, inclusion: $out"
out=$($VERIFY consistency --vkey "$work/vkey" "$work/old.ckpt" "$work/new.ckpt" \
	"$work/cons.proof") || rule_fail "python, consistency: $out"
rule_end

rule_begin an_export_archive_verifies_with_the_public_key_alone
rows=$(wc -l <"$P/ledger.jsonl" | tr -d ' ')
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/p.tar" 2>/dev/null)
rule_eq "exit" 0 "$?"
rule_has "ledgerctl, archive" "$out" "ok: $rows rows, tree root "
rule_has "the same as unpacked" "$out" \
	"$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/x/P" 2>/dev/null | cut -d, -f2)"
# One byte of the ledger inside the archive: its checksum no longer fits.
python3 - "$work/p.tar" "$work/p-bad.tar" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    m = [m for m in t.getmembers() if m.name.endswith("/ledger.jsonl")][0]
    at = m.offset_data + 10
b = bytearray(open(sys.argv[1], "rb").read())
b[at] ^= 1
open(sys.argv[2], "wb").write(b)
PY
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/p-bad.tar" 2>/dev/null)
rule_eq "exit, changed" 1 "$?"
rule_has "names the member" "$out" "bad: ledger.jsonl: mismatch"
rule_end

rule_begin every_single_bit_flip_of_a_checkpoint_or_proof_is_refused_by_python
out=$(PYTHONPATH=$TOOLS python3 - "$work" "$P" <<'PY'
import sys, verify_ledger as v
w, P = sys.argv[1], sys.argv[2]
vk = v.read_vkey(w + "/vkey")
ledger = open(P + "/ledger.jsonl", "rb").read()
ck = open(P + "/checkpoint", "rb").read()
row = open(w + "/row3", "rb").read().rstrip(b"\n")
incl = open(w + "/incl.proof", "rb").read()
old = open(w + "/old.ckpt", "rb").read()
new = open(w + "/new.ckpt", "rb").read()
cons = open(w + "/cons.proof", "rb").read()
def refused(f):
    try:
        f()
    except v.Bad:
        return True
    return False
def flips(data, check):
    n = 0
    for i in range(len(data) * 8):
        b = bytearray(data); b[i // 8] ^= 1 << (i % 8)
        if not refused(lambda: check(bytes(b))):
            print("accepted flip of bit", i); sys.exit(1)
        n += 1
    return n
assert not refused(lambda: v.verify_ledger(ledger, [("c", ck)], vk))
n = flips(ck, lambda b: v.verify_ledger(ledger, [("c", b)], vk))
n += flips(incl, lambda b: v.verify_proof(b, row, vk))
n += flips(cons, lambda b: v.verify_consistency(b, old, new, vk))
n += flips(old, lambda b: v.verify_consistency(cons, b, new, vk))
print("ok", n > 0)
PY
)
rule_eq "python" "ok True" "$out"
rule_end

rule_begin every_single_bit_flip_of_three_rows_is_refused_by_python
out=$(PYTHONPATH=$TOOLS python3 - "$P" <<'PY'
import sys, verify_ledger as v
P = sys.argv[1]
vk = v.read_vkey(P + "/../../../vkey")
ledger = open(P + "/ledger.jsonl", "rb").read()
ck = open(P + "/checkpoint", "rb").read()
lines = ledger.split(b"\n")[:-1]
starts, o = [], 0
for l in lines:
    starts.append(o); o += len(l) + 1
picked = [0, len(lines) // 2, len(lines) - 1]
for r in picked:
    lo, hi = starts[r], starts[r] + len(lines[r]) + 1   # with its newline
    for i in range(lo * 8, hi * 8):
        b = bytearray(ledger); b[i // 8] ^= 1 << (i % 8)
        try:
            v.verify_ledger(bytes(b), [("c", ck)], vk)
        except v.Bad:
            continue
        print("accepted flip of bit", i); sys.exit(1)
print("ok")
PY
)
rule_eq "python" ok "$out"
rule_end

# One Python run writes every flipped copy (a Python start is slow here).
mkdir "$work/flips"
python3 - "$P/checkpoint" "$P/ledger.jsonl" "$work/flips" <<'PY'
import sys
for src, tag in ((sys.argv[1], "c"), (sys.argv[2], "l")):
    data = open(src, "rb").read()
    for k in range(16):
        pos = k * (len(data) - 1) // 15
        for bit in range(8):
            b = bytearray(data); b[pos] ^= 1 << bit
            open("%s/%s.%d.%d" % (sys.argv[3], tag, pos, bit), "wb").write(b)
PY

rule_begin single_bit_flips_spread_over_a_checkpoint_are_refused_by_ledgerctl
bad=
for f in "$work"/flips/c.*; do
	"$LEDGERCTL" verify --pubkey="$work/vkey" "$P/ledger.jsonl" "$f" \
		>/dev/null 2>&1 && bad="$bad ${f##*/}"
done
rule_eq "accepted flips (all 8 bits of 16 bytes)" "" "$bad"
rule_end

rule_begin single_bit_flips_spread_over_the_ledger_are_refused_by_ledgerctl
bad=
for f in "$work"/flips/l.*; do
	"$LEDGERCTL" verify --pubkey="$work/vkey" "$f" "$P/checkpoint" \
		>/dev/null 2>&1 && bad="$bad ${f##*/}"
done
rule_eq "accepted flips (all 8 bits of 16 bytes)" "" "$bad"
rule_end

rule_begin a_ledger_with_its_chain_rebuilt_after_an_edit_is_refused
python3 - "$P/ledger.jsonl" "$work/rechained" <<'PY'
import hashlib, json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
out, prev = [], "0" * 64
for i, l in enumerate(lines):
    row = json.loads(l)
    if i == 2:
        row["args"] = {"i": 999}          # the edit
    row["prev"] = prev
    l = json.dumps(row, separators=(",", ":"), sort_keys=True,
                   ensure_ascii=False).encode()
    out.append(l)
    prev = hashlib.sha256(l).hexdigest()
open(sys.argv[2], "wb").write(b"".join(l + b"\n" for l in out))
PY
out=$(PYTHONPATH=$TOOLS python3 -c '
import sys, verify_ledger as v
v.check_chain(open(sys.argv[1], "rb").read()); print("chain ok")' "$work/rechained" 2>&1)
rule_eq "the chain alone passes" "chain ok" "$out"
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/rechained" "$P/checkpoint" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "do not have the tree root"
out=$($VERIFY ledger --vkey "$work/vkey" "$work/rechained" "$P/checkpoint") &&
	rule_fail "python accepted it"
rule_has "python" "$out" "signed root"
rule_end

rule_begin a_row_appended_after_case_closed_is_refused
# ledgerfs-ledger(5) PHASES: no row ever follows case_closed.  A decision
# row chained after it (its MAC is what public verification cannot check)
# and the folder's checkpoints kept.
cp -a "$P" "$work/after-close"
python3 - "$work/after-close/ledger.jsonl" <<'PY'
import hashlib, json, sys
data = open(sys.argv[1], "rb").read()
last = data.split(b"\n")[-2]
row = json.loads(last)
assert row["phase"] == "case_closed", row["phase"]
new = {"case_id": row["case_id"], "row": row["row"] + 1, "time": row["time"],
       "phase": "decision", "prev": hashlib.sha256(last).hexdigest(),
       "mac": "0" * 64}
if "epoch" in row:
    new["epoch"] = row["epoch"] + 1
line = json.dumps(new, separators=(",", ":"), sort_keys=True).encode()
open(sys.argv[1], "ab").write(line + b"\n")
PY
n=$(wc -l <"$work/after-close/ledger.jsonl" | tr -d ' ')
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/after-close" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "row $n: a row after case_closed"
out=$($VERIFY ledger --vkey "$work/vkey" "$work/after-close") &&
	rule_fail "python accepted it"
rule_has "python" "$out" "row $n: a row after case_closed"
rule_end

rule_begin a_sealed_case_missing_the_checkpoint_of_a_turn_is_refused
# ledgerfs-ledger(5) SIGNED CHECKPOINTS: the daemon keeps one of every
# turn and of the close; a folder or export without one had it removed.
cp -a "$P" "$work/no-turn-ckpt"
turn=$(grep -n '"phase":"turn"' "$P/ledger.jsonl" | head -1 | cut -d: -f1)
kept=$work/no-turn-ckpt/checkpoints/$(printf %012d "$turn")
[ -n "$turn" ] && [ -f "$kept" ] ||
	rule_fail "no kept checkpoint of the turn at row $turn"
rm -f "$kept"
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/no-turn-ckpt" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" \
	"bad: no signed checkpoint of the turn at row $turn: the checkpoints were removed"
# Checkpoints named on the command line may be any of them.
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/no-turn-ckpt" \
	"$work/no-turn-ckpt/checkpoint" 2>/dev/null) || rule_fail "named: $out"
rule_end

# Row K of the ledger written again with its members in reverse order (the
# same JSON, not in canonical form) and the chain rebuilt after it.
recanon() {
	python3 - "$P/ledger.jsonl" "$1" "$2" <<'PY'
import hashlib, json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
k = int(sys.argv[3])
prev = "0" * 64
for i, l in enumerate(lines):
    row = json.loads(l)
    if i >= k - 1:
        row["prev"] = prev
        if i == k - 1:  # its members in reverse order
            row = dict(reversed(sorted(row.items())))
        l = json.dumps(row, separators=(",", ":"), sort_keys=i != k - 1,
                       ensure_ascii=False).encode()
        lines[i] = l
    prev = hashlib.sha256(l).hexdigest()
open(sys.argv[2], "wb").write(b"".join(l + b"\n" for l in lines))
PY
}
old_size=$(sed -n 2p "$work/old.ckpt")

rule_begin a_row_past_the_latest_checkpoint_out_of_canonical_form_is_refused
recanon "$work/loose-late" $((old_size + 1))
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/loose-late" "$work/old.ckpt" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "row $((old_size + 1)): not in canonical form"
rule_end

rule_begin a_row_a_checkpoint_covers_out_of_canonical_form_is_refused_by_its_root
recanon "$work/loose-early" 2
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/loose-early" "$work/old.ckpt" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "do not have the tree root"
rule_end

rule_begin a_truncated_ledger_is_refused_against_a_later_checkpoint
head -n $(($(wc -l <"$P/ledger.jsonl") - 2)) "$P/ledger.jsonl" >"$work/short"
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$work/short" "$P/checkpoint" 2>/dev/null) &&
	rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "(truncated)"
out=$($VERIFY ledger --vkey "$work/vkey" "$work/short" "$P/checkpoint") &&
	rule_fail "python accepted it"
rule_has "python" "$out" "truncated"
rule_end

mv "$key.away" "$key"
mv "$key.sign.away" "$key.sign"

rule_begin a_forked_ledger_two_checkpoints_of_one_size_is_refused
# The host rolls the case back to its turn and lets it run again
# differently: the same number of rows, a different history, both signed.
lf_open_reg F
lf_call F f1 lookup_a >/dev/null
echo turn >"$(lf_cdir F)/ctl"
lf_stop
cp -a "$backing/cases/F" "$work/F.saved"
lf_start
lf_call F f2 lookup_a '{"branch":1}' >/dev/null
echo close >"$(lf_cdir F)/ctl"
cp "$backing/cases/F/checkpoint" "$work/branch1"
lf_stop
rm -rf "$backing/cases/F"
cp -a "$work/F.saved" "$backing/cases/F"
lf_start
lf_call F f2 lookup_a '{"branch":2}' >/dev/null
echo close >"$(lf_cdir F)/ctl"
cp "$backing/cases/F/checkpoint" "$work/branch2"
rule_eq "same size" "$(sed -n 2p "$work/branch1")" "$(sed -n 2p "$work/branch2")"
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$backing/cases/F" \
	"$work/branch1" "$work/branch2" 2>/dev/null) && rule_fail "ledgerctl accepted it"
rule_has "ledgerctl" "$out" "(a fork)"
out=$($VERIFY ledger --vkey "$work/vkey" "$backing/cases/F/ledger.jsonl" \
	"$work/branch1" "$work/branch2") && rule_fail "python accepted it"
rule_has "python" "$out" "fork"
# Each branch alone is honest with its own ledger.
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$backing/cases/F" 2>/dev/null) ||
	rule_fail "branch 2 alone: $out"
rule_end

lf_finish
