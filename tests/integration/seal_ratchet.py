# SPDX-License-Identifier: MIT
# seal_ratchet.py - forward-secure seals computed from ledgerfs-ledger(5)
# SEALS alone (hashlib/hmac, nothing of ledgerfs): the key schedule, the
# seal key file's slots, and an attacker who holds the host key and the
# seal key file at epoch k rewriting a row of epoch k-1.
#
#   seal_ratchet.py fp KEYFILE              fingerprint of a key file
#   seal_ratchet.py stored HOSTKEY SEALFILE epoch and hex K(e) of the file
#   seal_ratchet.py derive K0FILE E         hex K(E) from K0
#   seal_ratchet.py slot SEALFILE           hex of the current slot's
#                                           wrapped key
#   seal_ratchet.py forge LEDGER HOSTKEY SEALFILE
#       rewrite the first decision row of the epoch before the stored
#       key's, re-chain every later row and re-MAC those of the stored
#       epoch with K(k); prints the forged row number
import hashlib
import hmac
import json
import sys


def fingerprint(key):
    return hashlib.sha256(b"ledgerfs-key-fingerprint\n" + key).hexdigest()[:16]


def step(k):
    return hmac.new(k, b"ledgerfs-ratchet", hashlib.sha256).digest()


def slots(data):
    assert len(data) == 192, len(data)
    out = []
    for off in (0, 96):
        s = data[off:off + 96]
        if s[:8] == b"lfseal01" and hashlib.sha256(s[:64]).digest() == s[64:]:
            out.append(s)
    return out


def current_slot(data):
    return max(slots(data), key=lambda s: (int.from_bytes(s[8:16], "big"), s[24]))


def stored(host, data):
    s = current_slot(data)
    epoch = int.from_bytes(s[8:16], "big")
    wrap = hmac.new(host, b"ledgerfs/seal-wrap/v1\0" + s[16:24],
                    hashlib.sha256).digest()
    pad = hmac.new(wrap, epoch.to_bytes(8, "big"), hashlib.sha256).digest()
    return epoch, bytes(a ^ b for a, b in zip(s[32:64], pad))


def canonical(row):
    return json.dumps(row, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)


def forge(path, host, data):
    epoch, kk = stored(host, data)
    rows = [json.loads(l) for l in open(path, encoding="utf-8").read().split("\n") if l]
    target = next(i for i, r in enumerate(rows)
                  if r["epoch"] == epoch - 1 and r["phase"] == "decision")
    rows[target]["mode"] = "forged"
    prev = None
    out = []
    for i, r in enumerate(rows):
        if i >= target:
            r["prev"] = prev
            if r["epoch"] == epoch or i == target:
                del r["mac"]
                r["mac"] = hmac.new(kk, canonical(r).encode(),
                                    hashlib.sha256).hexdigest()
        line = canonical(r)
        prev = hashlib.sha256(line.encode()).hexdigest()
        out.append(line)
    open(path, "w", encoding="utf-8").write("\n".join(out) + "\n")
    print(target + 1)


def main():
    cmd = sys.argv[1]
    if cmd == "fp":
        print(fingerprint(open(sys.argv[2], "rb").read()))
    elif cmd == "stored":
        e, k = stored(open(sys.argv[2], "rb").read(),
                      open(sys.argv[3], "rb").read())
        print(e, k.hex())
    elif cmd == "derive":
        k = open(sys.argv[2], "rb").read()
        for _ in range(int(sys.argv[3])):
            k = step(k)
        print(k.hex())
    elif cmd == "slot":
        print(current_slot(open(sys.argv[2], "rb").read())[32:64].hex())
    elif cmd == "forge":
        forge(sys.argv[2], open(sys.argv[3], "rb").read(),
              open(sys.argv[4], "rb").read())


main()
