#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""verify_ledger.py - a verifier of ledgerfs ledgers, checkpoints and
proofs written from ledgerfs-ledger(5) alone (ROWS, VERIFICATION, TREE,
SIGNED CHECKPOINTS, PROOFS, PUBLIC VERIFICATION), with no secret key.
Standard library plus python3-cryptography for Ed25519.

  verify_ledger.py ledger --vkey VKEY LEDGER [CHECKPOINT ...]
  verify_ledger.py proof --vkey VKEY --row FILE PROOF
  verify_ledger.py consistency --vkey VKEY OLD NEW PROOF

VKEY is the verifier key or a file holding it.  LEDGER is a ledger file
or a case folder (its checkpoint and checkpoints, a folder or one file).
Exit 0 when everything verifies, 1 with "bad: REASON" when not, 2 usage.

The chain check leaves out the canonical-form check of VERIFICATION (a
float's text is jansson's, not Python's); the chain and the tree bind
every byte of every line anyway.
"""
import base64
import binascii
import hashlib
import json
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

DASH = "\u2014 ".encode()


class Bad(Exception):
    pass


def b64(text, length=None):
    """Canonical standard base64 with padding, else Bad."""
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise Bad("not base64: %r" % text[:40])
    if base64.b64encode(raw) != text:
        raise Bad("base64 is not canonical")
    if length is not None and len(raw) != length:
        raise Bad("base64 of %d bytes, expected %d" % (len(raw), length))
    return raw


# --- keys -----------------------------------------------------------------


class VKey:
    def __init__(self, text):
        text = text.strip()
        name, sep, rest = text.partition("+")
        hexid, sep2, key = rest.partition("+")
        if not sep or not sep2 or not name or len(hexid) != 8:
            raise Bad("verifier key is not NAME+ID+BASE64")
        if any(c <= " " or c == "+" or c == "\x7f" for c in name):
            raise Bad("verifier key name has a forbidden character")
        if hexid != hexid.lower():
            raise Bad("key id is not lower-case hex")
        raw = b64(key.encode(), 33)
        if raw[0] != 0x01:
            raise Bad("verifier key is not Ed25519 (0x01)")
        self.name = name.encode()
        self.pub = raw[1:]
        self.id = hashlib.sha256(self.name + b"\n\x01" + self.pub).digest()[:4]
        if self.id.hex() != hexid:
            raise Bad("key id does not match name and key")
        self.key = Ed25519PublicKey.from_public_bytes(self.pub)


def read_vkey(arg):
    if "+" not in arg or os.path.exists(arg):
        with open(arg) as f:
            arg = f.read()
    return VKey(arg)


# --- checkpoints ----------------------------------------------------------


class Checkpoint:
    def __init__(self, origin, size, root):
        self.origin, self.size, self.root = origin, size, root


def parse_checkpoint(data, vkey):
    """One signed checkpoint (bytes), strictly as SIGNED CHECKPOINTS says."""
    if len(data) > 4096 or b"\0" in data:
        raise Bad("checkpoint too long or holds NUL")
    lines = data.split(b"\n")
    if lines[-1] != b"":
        raise Bad("checkpoint does not end with a newline")
    lines = lines[:-1]
    if len(lines) < 5:
        raise Bad("checkpoint has too few lines")
    origin, size, root, blank = lines[0], lines[1], lines[2], lines[3]
    if not origin or not size or not root:
        raise Bad("empty body line")
    if blank != b"":
        raise Bad("no empty line after the three body lines")
    if not size.isdigit() or (len(size) > 1 and size[:1] == b"0"):
        raise Bad("tree size is not decimal without leading zeros")
    n = int(size)
    if n >= 1 << 63:
        raise Bad("tree size too large")
    root = b64(root, 32)
    body = b"\n".join(lines[:3]) + b"\n"
    found = False
    for sig in lines[4:]:
        if not sig.startswith(DASH):
            raise Bad("signature line does not start with an em dash")
        name, sp, blob = sig[len(DASH):].partition(b" ")
        if not sp or not name or any(c <= 0x20 or c in b"+\x7f" for c in name):
            raise Bad("malformed signature line")
        blob = b64(blob)
        if len(blob) < 5:
            raise Bad("signature too short")
        if name != vkey.name or blob[:4] != vkey.id:
            continue
        if len(blob) != 68:
            raise Bad("signature is not 64 bytes")
        try:
            vkey.key.verify(blob[4:], body)
        except InvalidSignature:
            raise Bad("signature does not verify")
        found = True
    if not found:
        raise Bad("no signature by %s" % vkey.name.decode())
    try:
        origin = origin.decode()
    except UnicodeDecodeError:
        raise Bad("origin is not UTF-8")
    return Checkpoint(origin, n, root)


def split_checkpoints(data):
    """Several checkpoints one after another: a new one starts at a line
    after the signature lines that is not a signature line."""
    out, cur, in_sigs = [], [], False
    for line in data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"):
        if in_sigs and not line.startswith(DASH):
            out.append(b"".join(l + b"\n" for l in cur))
            cur, in_sigs = [], False
        if line == b"":
            in_sigs = True
        cur.append(line)
    if cur:
        tail = b"".join(l + b"\n" for l in cur)
        if not data.endswith(b"\n"):
            tail = tail[:-1]
        out.append(tail)
    return out


# --- tree -------------------------------------------------------------------


def leaf_hash(line):
    return hashlib.sha256(b"\x00" + line).digest()


def node_hash(a, b):
    return hashlib.sha256(b"\x01" + a + b).digest()


def tree_root(leaves):
    """MTH, bottom up: a stack of perfect subtrees merged as leaves come."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    stack = []  # (height, hash)
    for h in leaves:
        node = (0, h)
        while stack and stack[-1][0] == node[0]:
            left = stack.pop()
            node = (node[0] + 1, node_hash(left[1], node[1]))
        stack.append(node)
    acc = stack.pop()[1]
    while stack:
        acc = node_hash(stack.pop()[1], acc)
    return acc


def check_inclusion(index, size, leaf, proof, root):
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def check_consistency(m, n, old, new, proof):
    if m > n:
        return False
    if m == n:
        return not proof and old == new
    if m == 0:
        return not proof
    path = list(proof)
    if m & (m - 1) == 0:
        path.insert(0, old)
    if not path:
        return False
    fn, sn = m - 1, n - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old and sr == new


# --- ledger -----------------------------------------------------------------


def _no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Bad("duplicate key")
    return dict(pairs)


def check_chain(data):
    """The lines of a ledger (bytes) after the chain checks: (case_id,
    lines).  VERIFICATION without the key, less the canonical form."""
    if data and not data.endswith(b"\n"):
        raise Bad("last line has no newline (torn)")
    lines = data.split(b"\n")[:-1] if data else []
    prev = "0" * 64
    case_id = None
    closed = False
    for i, line in enumerate(lines, 1):
        if closed:
            raise Bad("row %d: a row after case_closed" % i)
        try:
            row = json.loads(line.decode("utf-8"), object_pairs_hook=_no_dups)
        except (ValueError, UnicodeDecodeError):
            raise Bad("row %d: not a JSON object" % i)
        if not isinstance(row, dict):
            raise Bad("row %d: not a JSON object" % i)
        for k in ("case_id", "row", "time", "phase", "prev", "mac"):
            if k not in row:
                raise Bad("row %d: no %s" % (i, k))
        if type(row["row"]) is not int or row["row"] != i:
            raise Bad("row %d: row number %r" % (i, row["row"]))
        if case_id is None:
            case_id = row["case_id"]
        if row["case_id"] != case_id:
            raise Bad("row %d: another case_id" % i)
        if row["prev"] != prev:
            raise Bad("row %d: prev does not match row %d" % (i, i - 1))
        prev = hashlib.sha256(line).hexdigest()
        closed = row["phase"] == "case_closed"
    return case_id or "", lines


def read_folder_checkpoints(folder):
    found = []
    p = os.path.join(folder, "checkpoint")
    if os.path.isfile(p):
        found.append(p)
    p = os.path.join(folder, "checkpoints")
    if os.path.isdir(p):
        found += [os.path.join(p, n) for n in sorted(os.listdir(p))
                  if not n.startswith(".") and ".tmp" not in n]
    elif os.path.isfile(p):
        found.append(p)
    return found


def verify_ledger(data, checkpoint_texts, vkey):
    """PUBLIC VERIFICATION: returns a summary, raises Bad."""
    case_id, lines = check_chain(data)
    if not checkpoint_texts:
        raise Bad("no signed checkpoint")
    cps = []
    for label, text in checkpoint_texts:
        for part in split_checkpoints(text):
            try:
                cps.append((label, parse_checkpoint(part, vkey)))
            except Bad as e:
                raise Bad("%s: %s" % (label, e))
    leaves = [leaf_hash(l) for l in lines]
    want_origin = vkey.name.decode() + "/" + case_id
    by_size = {}
    for label, cp in cps:
        if cp.origin != want_origin:
            raise Bad("%s: origin %s is not %s" % (label, cp.origin, want_origin))
        if cp.size in by_size and by_size[cp.size] != cp.root:
            raise Bad("fork: two checkpoints of %d rows with different roots"
                      % cp.size)
        by_size[cp.size] = cp.root
    for size, root in sorted(by_size.items()):
        if size > len(leaves):
            raise Bad("truncated: a checkpoint covers %d rows, the ledger has %d"
                      % (size, len(leaves)))
        if tree_root(leaves[:size]) != root:
            raise Bad("the first %d rows do not have the signed root" % size)
    return "%d rows, %d checkpoints" % (len(lines), len(cps))


def verify_proof(text, row_line, vkey):
    """A c2sp.org/tlog-proof@v1 for the row's line (bytes, no newline)."""
    head, sep, ckpt = text.partition(b"\n\n")
    if not sep:
        raise Bad("proof has no empty line before the checkpoint")
    lines = head.split(b"\n")
    if lines[0] != b"c2sp.org/tlog-proof@v1":
        raise Bad("not a tlog-proof")
    if len(lines) < 2 or not lines[1].startswith(b"index "):
        raise Bad("no index line")
    idx = lines[1][6:]
    if not idx.isdigit() or (len(idx) > 1 and idx[:1] == b"0"):
        raise Bad("index is not decimal")
    hashes = [b64(l, 32) for l in lines[2:]]
    cp = parse_checkpoint(ckpt, vkey)
    if not check_inclusion(int(idx), cp.size, leaf_hash(row_line), hashes,
                           cp.root):
        raise Bad("inclusion proof does not verify")
    return "row %d in %d rows" % (int(idx) + 1, cp.size)


def verify_consistency(proof, old_text, new_text, vkey):
    old = parse_checkpoint(old_text, vkey)
    new = parse_checkpoint(new_text, vkey)
    if old.origin != new.origin:
        raise Bad("checkpoints of different origins")
    if not proof.endswith(b"\n"):
        raise Bad("proof does not end with a newline")
    lines = proof.split(b"\n")[:-1]
    if len(lines) < 3 or lines[0] != b"ledgerfs/consistency-proof@v1":
        raise Bad("not a ledgerfs consistency proof")
    sizes = []
    for line, word in ((lines[1], b"old "), (lines[2], b"new ")):
        if not line.startswith(word):
            raise Bad("no %s line" % word.decode().strip())
        v = line[4:]
        if not v.isdigit() or (len(v) > 1 and v[:1] == b"0"):
            raise Bad("size is not decimal")
        sizes.append(int(v))
    if sizes != [old.size, new.size]:
        raise Bad("proof sizes are not the checkpoints' sizes")
    hashes = [b64(l, 32) for l in lines[3:]]
    if not check_consistency(old.size, new.size, old.root, new.root, hashes):
        raise Bad("consistency proof does not verify")
    return "%d rows extend to %d" % (old.size, new.size)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def main(argv):
    if len(argv) < 2 or argv[1] not in ("ledger", "proof", "consistency"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args, opts = argv[1], [], {}
    it = iter(argv[2:])
    for a in it:
        if a in ("--vkey", "--row"):
            opts[a] = next(it, None)
        elif a.startswith("--vkey=") or a.startswith("--row="):
            k, _, v = a.partition("=")
            opts[k] = v
        else:
            args.append(a)
    try:
        vkey = read_vkey(opts["--vkey"])
    except (KeyError, TypeError, OSError):
        print("usage: --vkey VKEY is required", file=sys.stderr)
        return 2
    except Bad as e:
        print("bad: verifier key: %s" % e)
        return 2
    try:
        if cmd == "ledger":
            if not args:
                return 2
            path = args[0]
            if os.path.isdir(path):
                data = _read(os.path.join(path, "ledger.jsonl"))
                cks = args[1:] or read_folder_checkpoints(path)
            else:
                data, cks = _read(path), args[1:]
            msg = verify_ledger(data, [(c, _read(c)) for c in cks], vkey)
        elif cmd == "proof":
            if len(args) != 1 or "--row" not in opts:
                return 2
            row = _read(opts["--row"])
            if row.endswith(b"\n"):
                row = row[:-1]
            msg = verify_proof(_read(args[0]), row, vkey)
        else:
            if len(args) != 3:
                return 2
            msg = verify_consistency(_read(args[2]), _read(args[0]),
                                     _read(args[1]), vkey)
    except Bad as e:
        print("bad: %s" % e)
        return 1
    except OSError as e:
        print("cannot read: %s" % e, file=sys.stderr)
        return 2
    print("ok: %s" % msg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
