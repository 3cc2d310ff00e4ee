/* SPDX-License-Identifier: MIT */
/*
 * merkle.h - the RFC 6962 Merkle tree over a ledger's rows
 * (ledgerfs-ledger(5) TREE): leaf hash SHA-256(0x00 || line), node hash
 * SHA-256(0x01 || left || right).  The daemon keeps a compact range (one
 * hash per set bit of the size), so an append costs O(log n) hashes;
 * proofs are made from the leaf hashes and checked as RFC 9162 2.1.3.2
 * and 2.1.4.2 say.
 */
#ifndef LF_MERKLE_H
#define LF_MERKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define MERKLE_HASH	 32
#define MERKLE_MAX_PROOF 64 /* hashes in a proof of a tree under 2^63 */

typedef unsigned char merkle_hash[MERKLE_HASH];

/* The perfect subtrees of a tree of n leaves: h[i] valid when bit i of n. */
struct merkle_range {
	uint64_t n;
	merkle_hash h[64];
};

void merkle_leaf_hash(const void *line, size_t len, merkle_hash out);
void merkle_node_hash(const merkle_hash left, const merkle_hash right,
		      merkle_hash out);

void merkle_init(struct merkle_range *r);
void merkle_append_leaf(struct merkle_range *r, const merkle_hash leaf);
/* Append the leaf of a line (its bytes without the newline). */
void merkle_append(struct merkle_range *r, const void *line, size_t len);
/* The root of the tree so far; SHA-256 of nothing for the empty tree. */
void merkle_root(const struct merkle_range *r, merkle_hash out);

/* MTH of leaves[0..n-1] (RFC 6962 2.1). */
void merkle_root_of(const merkle_hash *leaves, uint64_t n, merkle_hash out);

/*
 * Inclusion proof of leaf index (0-based) in the tree of leaves[0..n-1]
 * (RFC 6962 2.1.1 PATH), hashes in order from the leaf up.  Returns the
 * number of hashes, or -1 when index >= n.
 */
int merkle_inclusion_proof(const merkle_hash *leaves, uint64_t n,
			   uint64_t index, merkle_hash proof[MERKLE_MAX_PROOF]);

/*
 * Consistency proof from size m to size n of leaves (RFC 6962 2.1.2
 * PROOF).  Empty when m == n or m == 0.  Count, or -1 when m > n.
 */
int merkle_consistency_proof(const merkle_hash *leaves, uint64_t m, uint64_t n,
			     merkle_hash proof[MERKLE_MAX_PROOF]);

bool merkle_verify_inclusion(uint64_t index, uint64_t size,
			     const merkle_hash leaf, const merkle_hash *proof,
			     size_t len, const merkle_hash root);

bool merkle_verify_consistency(uint64_t m, uint64_t n,
			       const merkle_hash old_root,
			       const merkle_hash new_root,
			       const merkle_hash *proof, size_t len);

/*
 * Call fn with each newline-ended line of fd's first limit bytes (the
 * tree's leaves), in order, without its newline; fn returns true to stop
 * there.  LF_OK, LF_IO, LF_NOMEM, or LF_VERIFY for a last line without
 * newline.
 */
typedef bool (*merkle_line_fn)(void *ctx, const char *s, size_t n);
enum lf_err merkle_each_line(int fd, long long limit, merkle_line_fn fn,
			     void *ctx, struct lf_why *why);

/*
 * The leaves alone of fd's first limit bytes, as merkle_scan_fd gives them
 * (*leaves_out malloc'd, NULL when there are none), hashed on threads
 * threads, each a part of the file cut where a line starts.
 */
enum lf_err merkle_leaves_fd(int fd, long long limit, unsigned threads,
			     merkle_hash **leaves_out, uint64_t *count,
			     struct lf_why *why);

/*
 * Read the newline-ended lines of fd's first limit bytes as leaves.
 * r (may be NULL) receives the range of all of them; roots[i] the root at
 * sizes[i] (ascending, NULL/0 for none; a size past the end is left
 * untouched and reported by *count); *leaves_out (may be NULL) a malloc'd
 * array of every leaf hash.  *count: the number of lines.  LF_OK, LF_IO,
 * LF_NOMEM, or LF_VERIFY for a last line without newline.
 */
enum lf_err merkle_scan_fd(int fd, long long limit, struct merkle_range *r,
			   const uint64_t *sizes, size_t nsizes,
			   merkle_hash *roots, merkle_hash **leaves_out,
			   uint64_t *count, struct lf_why *why);

#endif
