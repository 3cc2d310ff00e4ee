/* SPDX-License-Identifier: MIT */
/*
 * test_merkle.c - the RFC 6962 tree (ledgerfs-ledger(5) TREE): known
 * answers for roots and proofs (the eight-leaf vectors of RFC 6962's
 * reference code, checked again by an independent Python implementation
 * in tests/integration/merkle_known_answers.sh), the compact range
 * against the recursive definition, and every proof checked, with each
 * single-bit flip refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merkle.h"

static const struct {
	const char *data;
	size_t len;
} kat_leaves[8] = {
	{"", 0},
	{"\x00", 1},
	{"\x10", 1},
	{"\x20\x21", 2},
	{"\x30\x31", 2},
	{"\x40\x41\x42\x43", 4},
	{"\x50\x51\x52\x53\x54\x55\x56\x57", 8},
	{"\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f",
	 16},
};

static const char *const kat_roots[8] = {
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

static void hex(const merkle_hash h, char out[65])
{
	int i;

	for (i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", h[i]);
}

static void kat_leaf_hashes(merkle_hash l[8])
{
	int i;

	for (i = 0; i < 8; i++)
		merkle_leaf_hash(kat_leaves[i].data, kat_leaves[i].len, l[i]);
}

/* n distinct leaves "row 0", "row 1", ... */
static merkle_hash *make_leaves(uint64_t n)
{
	merkle_hash *l = malloc((n ? n : 1) * sizeof(*l));
	char buf[32];
	uint64_t i;

	cr_assert_not_null(l);
	for (i = 0; i < n; i++) {
		int k = snprintf(buf, sizeof(buf), "row %llu",
				 (unsigned long long)i);
		merkle_leaf_hash(buf, (size_t)k, l[i]);
	}
	return l;
}

Test(merkle, empty_tree_root_is_sha256_of_nothing)
{
	struct merkle_range r;
	merkle_hash root;
	char h[65];

	merkle_init(&r);
	merkle_root(&r, root);
	hex(root, h);
	cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934"
			    "ca495991b7852b855");
}

Test(merkle, roots_match_known_answers)
{
	struct merkle_range r;
	merkle_hash root, l[8];
	char h[65];
	int n;

	kat_leaf_hashes(l);
	merkle_init(&r);
	for (n = 0; n < 8; n++) {
		merkle_append(&r, kat_leaves[n].data, kat_leaves[n].len);
		merkle_root(&r, root);
		hex(root, h);
		cr_assert_str_eq(h, kat_roots[n], "size %d", n + 1);
		merkle_root_of(l, (uint64_t)n + 1, root);
		hex(root, h);
		cr_assert_str_eq(h, kat_roots[n], "recursive, size %d", n + 1);
	}
}

Test(merkle, inclusion_proof_matches_known_answer)
{
	static const char *const want[3] = {
		"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
		"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
		"6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	};
	merkle_hash l[8], p[MERKLE_MAX_PROOF];
	char h[65];
	int i, n;

	kat_leaf_hashes(l);
	n = merkle_inclusion_proof(l, 8, 0, p);
	cr_assert_eq(n, 3);
	for (i = 0; i < n; i++) {
		hex(p[i], h);
		cr_assert_str_eq(h, want[i]);
	}
}

Test(merkle, consistency_proof_matches_known_answer)
{
	static const char *const want[3] = {
		"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
		"ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
		"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	};
	merkle_hash l[8], p[MERKLE_MAX_PROOF];
	char h[65];
	int i, n;

	kat_leaf_hashes(l);
	n = merkle_consistency_proof(l, 6, 8, p);
	cr_assert_eq(n, 3);
	for (i = 0; i < n; i++) {
		hex(p[i], h);
		cr_assert_str_eq(h, want[i]);
	}
}

Test(merkle, compact_range_equals_recursive_definition)
{
	const uint64_t max = 600;
	merkle_hash *l = make_leaves(max), a, b;
	struct merkle_range r;
	uint64_t n;

	merkle_init(&r);
	for (n = 1; n <= max; n++) {
		merkle_append_leaf(&r, l[n - 1]);
		merkle_root(&r, a);
		merkle_root_of(l, n, b);
		cr_assert_eq(memcmp(a, b, 32), 0, "size %llu",
			     (unsigned long long)n);
	}
	free(l);
}

Test(merkle, every_inclusion_proof_verifies_and_every_bit_flip_is_refused)
{
	const uint64_t max = 17;
	merkle_hash *l = make_leaves(max), root, p[MERKLE_MAX_PROOF];
	uint64_t n, i;
	int len, h, bit;

	for (n = 1; n <= max; n++) {
		merkle_root_of(l, n, root);
		for (i = 0; i < n; i++) {
			len = merkle_inclusion_proof(l, n, i, p);
			cr_assert_geq(len, 0);
			cr_assert(merkle_verify_inclusion(i, n, l[i], p,
							  (size_t)len, root));
			/*
			 * Another leaf or index does not verify.  (The same
			 * path may fit other sizes: the signed size binds it.)
			 */
			cr_assert_not(merkle_verify_inclusion(
				i, n, l[(i + 1) % max], p, (size_t)len, root));
			if (n > 1)
				cr_assert_not(merkle_verify_inclusion(
					(i + 1) % n, n, l[i], p, (size_t)len,
					root));
			for (h = 0; h < len; h++)
				for (bit = 0; bit < 256; bit++) {
					p[h][bit / 8] ^=
						(unsigned char)(1 << (bit % 8));
					cr_assert_not(merkle_verify_inclusion(
						i, n, l[i], p, (size_t)len,
						root));
					p[h][bit / 8] ^=
						(unsigned char)(1 << (bit % 8));
				}
		}
	}
	free(l);
}

Test(merkle, every_consistency_proof_verifies_and_every_bit_flip_is_refused)
{
	const uint64_t max = 17;
	merkle_hash *l = make_leaves(max), a, b, p[MERKLE_MAX_PROOF];
	uint64_t m, n;
	int len, h, bit;

	for (n = 1; n <= max; n++) {
		merkle_root_of(l, n, b);
		for (m = 1; m <= n; m++) {
			merkle_root_of(l, m, a);
			len = merkle_consistency_proof(l, m, n, p);
			cr_assert_geq(len, 0);
			cr_assert(merkle_verify_consistency(m, n, a, b, p,
							    (size_t)len),
				  "%llu -> %llu", (unsigned long long)m,
				  (unsigned long long)n);
			if (m < n) {
				cr_assert_not(merkle_verify_consistency(
					m, n, b, b, p, (size_t)len));
				cr_assert_not(merkle_verify_consistency(
					m, n, a, a, p, (size_t)len));
			}
			for (h = 0; h < len; h++)
				for (bit = 0; bit < 256; bit++) {
					p[h][bit / 8] ^=
						(unsigned char)(1 << (bit % 8));
					cr_assert_not(merkle_verify_consistency(
						m, n, a, b, p, (size_t)len));
					p[h][bit / 8] ^=
						(unsigned char)(1 << (bit % 8));
				}
		}
	}
	free(l);
}

Test(merkle, scan_gives_roots_at_each_size_asked)
{
	char path[] = "/tmp/test_merkle.XXXXXX", line[32];
	uint64_t sizes[3] = {0, 3, 5}, count = 0;
	merkle_hash roots[3], want, *leaves = NULL;
	struct merkle_range r;
	struct lf_why why;
	int fd = mkstemp(path), i, k;
	long long total = 0;

	cr_assert_geq(fd, 0);
	unlink(path);
	merkle_init(&r);
	for (i = 0; i < 7; i++) {
		k = snprintf(line, sizeof(line), "{\"row\":%d}\n", i + 1);
		cr_assert_eq(write(fd, line, (size_t)k), k);
		total += k;
	}
	cr_assert_eq(merkle_scan_fd(fd, total, &r, sizes, 3, roots, &leaves,
				    &count, &why),
		     LF_OK);
	cr_assert_eq(count, 7);
	for (i = 0; i < 3; i++) {
		merkle_root_of(leaves, sizes[i], want);
		cr_assert_eq(memcmp(want, roots[i], 32), 0);
	}
	k = snprintf(line, sizeof(line), "{\"row\":1}");
	merkle_leaf_hash(line, (size_t)k, want);
	cr_assert_eq(memcmp(want, leaves[0], 32), 0,
		     "a leaf is the line without its newline");
	{
		/* The leaves alone, no range or root asked: the same. */
		merkle_hash *only = NULL;
		uint64_t n = 0;

		cr_assert_eq(merkle_scan_fd(fd, total, NULL, NULL, 0, NULL,
					    &only, &n, &why),
			     LF_OK);
		cr_assert_eq(n, 7);
		cr_assert_eq(memcmp(only, leaves, 7 * sizeof(merkle_hash)), 0);
		free(only);
	}
	free(leaves);
	/* A last line without newline is not a row. */
	cr_assert_eq(write(fd, "{", 1), 1);
	cr_assert_eq(merkle_scan_fd(fd, total + 1, NULL, NULL, 0, NULL, NULL,
				    NULL, &why),
		     LF_VERIFY);
	close(fd);
}

Test(merkle, leaves_hashed_on_threads_are_the_leaves_of_one_scan)
{
	static const unsigned threads[] = {2, 3, 7, 16};
	char path[] = "/tmp/test_merkle.XXXXXX", *line;
	merkle_hash *want = NULL, *got = NULL;
	uint64_t nwant = 0, ngot = 0;
	struct lf_why why;
	int fd = mkstemp(path), i, k;
	long long total = 0;
	size_t j;

	cr_assert_geq(fd, 0);
	unlink(path);
	/* No lines at all: no leaves, on any number of threads. */
	cr_assert_eq(merkle_leaves_fd(fd, 0, 3, &got, &ngot, &why), LF_OK);
	cr_assert_eq(ngot, 0);
	cr_assert_null(got);
	/* Lines of every length, one longer than a part and a read. */
	line = malloc(300000);
	cr_assert_not_null(line);
	for (i = 0; i < 400; i++) {
		size_t len = i == 150 ? 200000 : (size_t)(i * 37 % 900);

		memset(line, 'a' + i % 26, len);
		k = snprintf(line + len, 32, "%d\n", i);
		cr_assert_eq(write(fd, line, len + (size_t)k),
			     (ssize_t)(len + (size_t)k));
		total += (long long)(len + (size_t)k);
	}
	free(line);
	cr_assert_eq(merkle_scan_fd(fd, total, NULL, NULL, 0, NULL, &want,
				    &nwant, &why),
		     LF_OK);
	cr_assert_eq(nwant, 400);
	for (j = 0; j < sizeof(threads) / sizeof(threads[0]); j++) {
		cr_assert_eq(merkle_leaves_fd(fd, total, threads[j], &got,
					      &ngot, &why),
			     LF_OK, "%u threads: %s", threads[j], why.msg);
		cr_assert_eq(ngot, nwant, "%u threads", threads[j]);
		cr_assert_eq(memcmp(got, want, nwant * sizeof(merkle_hash)), 0,
			     "%u threads", threads[j]);
		free(got);
		got = NULL;
	}
	/* A last line without newline is not a row, on threads too. */
	cr_assert_eq(write(fd, "{", 1), 1);
	cr_assert_eq(merkle_leaves_fd(fd, total + 1, 3, &got, &ngot, &why),
		     LF_VERIFY);
	free(want);
	close(fd);
}
