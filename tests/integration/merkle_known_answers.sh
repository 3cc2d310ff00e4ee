#!/bin/sh
# SPDX-License-Identifier: MIT
# merkle_known_answers.sh - ledgerfs-ledger(5) TREE, SIGNED CHECKPOINTS and
# PROOFS checked against an independent implementation: the RFC 6962
# known answers of tests/unit/test_merkle.c recomputed by
# tests/tools/rfc6962.py (hashlib), then a real case's tree root, every
# inclusion proof `ledgerctl prove` prints and every consistency proof
# between its checkpoints recomputed and checked in Python, and the
# checkpoints' Ed25519 signatures and the vkey's key id checked with
# python3-cryptography.
. "$(dirname "$0")/lib.sh"
TOOLS=$(cd "$(dirname "$0")/../tools" && pwd)
python3 -c 'import cryptography' 2>/dev/null || lf_skip_all "no python3-cryptography"
lf_setup
lf_start

rule_begin rfc6962_known_answers_agree_with_python
out=$(PYTHONPATH=$TOOLS python3 - <<'PY'
import rfc6962 as r
D = [b"", b"\x00", b"\x10", b"\x20\x21", b"\x30\x31", b"\x40\x41\x42\x43",
     bytes(range(0x50, 0x58)), bytes(range(0x60, 0x70))]
L = [r.leaf_hash(d) for d in D]
roots = ["6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
 "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
 "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
 "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
 "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
 "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
 "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
 "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"]
bad = [n for n in range(1, 9) if r.mth(L[:n]).hex() != roots[n - 1]]
p = [h.hex() for h in r.path(0, L)]
c = [h.hex() for h in r.consistency(6, L)]
if p != ["96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
         "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
         "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]:
    bad.append("path")
if c != ["0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
         "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
         "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]:
    bad.append("consistency")
# Every proof of every tree up to 20 leaves checks in Python too.
for n in range(1, 21):
    T = [r.leaf_hash(b"row %d" % i) for i in range(n)]
    root = r.mth(T)
    for i in range(n):
        if not r.verify_inclusion(i, n, T[i], r.path(i, T), root):
            bad.append("inclusion %d/%d" % (i, n))
    for m in range(0, n + 1):
        if not r.verify_consistency(m, n, r.mth(T[:m]), root, r.consistency(m, T)):
            bad.append("consistency %d/%d" % (m, n))
print(" ".join(map(str, bad)) or "ok")
PY
)
rule_eq "python's answers" ok "$out"
rule_end

# A real case: 3 turns of calls of different lengths, then close.
lf_open_reg K
n=0
for t in 1 2 3; do
	for i in $(seq 1 $((t * 3))); do
		n=$((n + 1))
		lf_call K "k$n" lookup_a "{\"pad\":\"$(head -c $((n * 7)) /dev/zero | tr '\0' x)\"}" >/dev/null
	done
	echo turn >"$(lf_cdir K)/ctl"
done
echo close >"$(lf_cdir K)/ctl"
"$LEDGERCTL" pubkey --key "$key" >"$work/vkey"
B=$backing/cases/K

rule_begin vkey_key_id_and_signatures_check_with_python_cryptography
out=$(python3 - "$work/vkey" "$B" <<'PY'
import base64, hashlib, os, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
vkey = open(sys.argv[1]).read().strip()
name, hexid, key = vkey.split("+", 2)
raw = base64.b64decode(key)
assert raw[0] == 1 and len(raw) == 33, "key type"
kid = hashlib.sha256(name.encode() + b"\n\x01" + raw[1:]).digest()[:4]
assert kid.hex() == hexid, "key id"
pub = Ed25519PublicKey.from_public_bytes(raw[1:])
files = [os.path.join(sys.argv[2], "checkpoint")] + [
    os.path.join(sys.argv[2], "checkpoints", f)
    for f in sorted(os.listdir(os.path.join(sys.argv[2], "checkpoints")))]
for f in files:
    body, _, sig = open(f, "rb").read().partition(b"\n\n")
    dash, nm, blob = sig.rstrip(b"\n").split(b" ")
    assert dash == "\u2014".encode() and nm == name.encode(), f
    blob = base64.b64decode(blob)
    assert blob[:4] == kid, f
    pub.verify(blob[4:], body + b"\n")
print("ok", len(files))
PY
)
rule_eq "python (latest, 3 turns, close)" "ok 5" "$out"
rule_end

rule_begin tree_root_and_every_inclusion_proof_agree_with_python
rows=$(lf_rows K)
for r in $(seq 1 "$rows"); do
	"$LEDGERCTL" --mount "$mnt" prove K "$r" >"$work/proof.$r" ||
		rule_fail "prove K $r"
done
out=$(PYTHONPATH=$TOOLS python3 - "$B/ledger.jsonl" "$work" "$rows" <<'PY'
import base64, sys
import rfc6962 as r
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
L = [r.leaf_hash(l) for l in lines]
bad = []
for i in range(1, int(sys.argv[3]) + 1):
    head, _, ck = open("%s/proof.%d" % (sys.argv[2], i), "rb").read().partition(b"\n\n")
    hl = head.split(b"\n")
    assert hl[0] == b"c2sp.org/tlog-proof@v1" and hl[1] == b"index %d" % (i - 1)
    proof = [base64.b64decode(h) for h in hl[2:]]
    origin, size, root = ck.split(b"\n")[:3]
    size, root = int(size), base64.b64decode(root)
    if root != r.mth(L[:size]): bad.append("root")
    if proof != r.path(i - 1, L[:size]): bad.append("path %d" % i)
    if not r.verify_inclusion(i - 1, size, L[i - 1], proof, root): bad.append("check %d" % i)
print(" ".join(bad) or "ok")
PY
)
rule_eq "python" ok "$out"
rule_end

rule_begin every_consistency_proof_between_checkpoints_agrees_with_python
set -- "$B"/checkpoints/*
for old in "$@"; do
	for new in "$@"; do
		[ "$(basename "$old")" \< "$(basename "$new")" ] ||
			[ "$old" = "$new" ] || continue
		"$LEDGERCTL" --mount "$mnt" consistency "$old" "$new" \
			>>"$work/cons" || rule_fail "consistency $old $new"
		printf '%s %s\n' "$old" "$new" >>"$work/pairs"
	done
done
out=$(PYTHONPATH=$TOOLS python3 - "$B/ledger.jsonl" "$work/cons" "$work/pairs" <<'PY'
import base64, sys
import rfc6962 as r
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
L = [r.leaf_hash(l) for l in lines]
proofs = open(sys.argv[2], "rb").read().split(b"ledgerfs/consistency-proof@v1\n")[1:]
pairs = open(sys.argv[3]).read().split("\n")[:-1]
bad = [] if len(proofs) == len(pairs) > 0 else ["count"]
for p, pair in zip(proofs, pairs):
    ls = p.split(b"\n")[:-1]
    m, n = int(ls[0][4:]), int(ls[1][4:])
    hs = [base64.b64decode(h) for h in ls[2:]]
    if hs != r.consistency(m, L[:n]): bad.append("proof %s" % pair)
    if not r.verify_consistency(m, n, r.mth(L[:m]), r.mth(L[:n]), hs): bad.append("check %s" % pair)
print(" ".join(bad) or "ok %d" % len(pairs))
PY
)
rule_has "python" "$out" "ok "
rule_end

rule_begin public_verify_prints_the_python_root
root=$(PYTHONPATH=$TOOLS python3 -c '
import base64, sys, rfc6962 as r
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
print(base64.b64encode(r.mth([r.leaf_hash(l) for l in lines])).decode())' "$B/ledger.jsonl")
out=$("$LEDGERCTL" verify --pubkey="$work/vkey" "$B" 2>/dev/null)
rule_has "verify --pubkey" "$out" "ok: $rows rows, tree root $root,"
rule_end

lf_stop
lf_finish
