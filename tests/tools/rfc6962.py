# SPDX-License-Identifier: MIT
"""rfc6962.py - an independent RFC 6962 Merkle tree in Python (hashlib
only), written from RFC 6962 section 2.1 and RFC 9162 sections 2.1.3.2
and 2.1.4.2, to check ledgerfs's tree, proofs and known answers against.
"""
import hashlib


def leaf_hash(data):
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n):
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(leaves):
    """MTH over leaf hashes (RFC 6962 2.1)."""
    n = len(leaves)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return leaves[0]
    k = _split(n)
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def path(m, leaves):
    """PATH(m, D[n]) (RFC 6962 2.1.1), leaf first."""
    n = len(leaves)
    if n <= 1:
        return []
    k = _split(n)
    if m < k:
        return path(m, leaves[:k]) + [mth(leaves[k:])]
    return path(m - k, leaves[k:]) + [mth(leaves[:k])]


def _subproof(m, leaves, b):
    n = len(leaves)
    if m == n:
        return [] if b else [mth(leaves)]
    k = _split(n)
    if m <= k:
        return _subproof(m, leaves[:k], b) + [mth(leaves[k:])]
    return _subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def consistency(m, leaves):
    """PROOF(m, D[n]) (RFC 6962 2.1.2); empty for m == 0 or m == n."""
    if m == 0 or m == len(leaves):
        return []
    return _subproof(m, leaves, True)


def verify_inclusion(index, size, leaf, proof, root):
    """RFC 9162 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(m, n, old_root, new_root, proof):
    """RFC 9162 2.1.4.2 (m == 0 or m == n: the proof is empty)."""
    if m > n:
        return False
    if m == n:
        return not proof and old_root == new_root
    if m == 0:
        return not proof
    proof = list(proof)
    if m & (m - 1) == 0:
        proof = [old_root] + proof
    if not proof:
        return False
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
