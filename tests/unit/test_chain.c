/* SPDX-License-Identifier: MIT */
/*
 * test_chain.c - the chain's hashing, HMAC, key derivation and host key
 * file rules (ledgerfs-ledger(5) ROWS, VERIFICATION and KEYS), one test per
 * rule.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chain.h"
#include "chain_x2.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
	strcpy(tmpdir, "/tmp/test_chain.XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	cr_assert_eq(system(cmd), 0);
}

static void test_key(unsigned char k[CHAIN_KEY_BYTES])
{
	int i;

	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		k[i] = (unsigned char)i;
}

static void write_file(const char *path, const void *buf, size_t n, int mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, buf, n), (ssize_t)n);
	cr_assert_eq(fchmod(fd, (mode_t)mode), 0);
	close(fd);
}

Test(chain, sha256_matches_known_answers)
{
	static const struct {
		const char *in, *hex;
	} vec[] = {
		{"",
		 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc",
		 "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	};
	char out[CHAIN_HEX_LEN + 1];
	size_t i;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		chain_sha256_hex(vec[i].in, strlen(vec[i].in), out);
		cr_assert_str_eq(out, vec[i].hex, "vector %zu", i);
	}
}

/* RFC 4231: keys shorter than 32 bytes are the same key zero-padded. */
Test(chain, hmac_sha256_matches_rfc4231)
{
	unsigned char key[CHAIN_KEY_BYTES];
	unsigned char data[50];
	char out[CHAIN_HEX_LEN + 1];

	memset(key, 0, sizeof(key));
	memset(key, 0x0b, 20);
	chain_hmac_hex(key, "Hi There", 8, out);
	cr_assert_str_eq(
		out,
		"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
		"RFC 4231 test case 1");

	memset(key, 0, sizeof(key));
	memcpy(key, "Jefe", 4);
	chain_hmac_hex(key, "what do ya want for nothing?", 28, out);
	cr_assert_str_eq(
		out,
		"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"RFC 4231 test case 2");

	memset(key, 0, sizeof(key));
	for (int i = 0; i < 25; i++)
		key[i] = (unsigned char)(i + 1);
	memset(data, 0xcd, sizeof(data));
	chain_hmac_hex(key, data, sizeof(data), out);
	cr_assert_str_eq(
		out,
		"82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
		"RFC 4231 test case 4");
}

Test(chain, reused_mac_context_equals_one_shot_hmac_and_follows_the_key)
{
	unsigned char k1[CHAIN_KEY_BYTES], k2[CHAIN_KEY_BYTES];
	char want[CHAIN_HEX_LEN + 1], got[CHAIN_HEX_LEN + 1];
	struct chain_mac *m = chain_mac_new();
	const char *msg = "{\"a\":1,\"phase\":\"decision\",\"row\":7}";
	size_t n = strlen(msg), cut;
	int round;

	cr_assert_not_null(m);
	memset(k1, 0x11, sizeof(k1));
	memset(k2, 0x22, sizeof(k2));
	/* Same key twice (the pads reused), another key, then back. */
	for (round = 0; round < 4; round++) {
		const unsigned char *k = round == 2 ? k2 : k1;

		for (cut = 0; cut <= n; cut += 5) {
			chain_hmac_hex(k, msg, n, want);
			cr_assert_eq(chain_mac2_hex(m, k, msg, cut, msg + cut,
						    n - cut, got),
				     0);
			cr_assert_str_eq(got, want, "round %d, split at %zu",
					 round, cut);
		}
	}
	chain_mac_free(m);
}

/*
 * Lengths on both sides of every place SHA-256's padding changes shape
 * (55/56 bytes into a block, a block's end), and a row's usual size.
 */
static const size_t pad_edges[] = {0,	1,   55,  56,  57,  63,	 64,
				   65,	119, 120, 127, 128, 129, 191,
				   192, 247, 248, 255, 256, 700, 1000};

/* pattern bytes, so a block read from the wrong place shows. */
static void fill_pattern(unsigned char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + 7);
}

/*
 * chain_sha256_mac2_hex gives what chain_sha256_hex and chain_hmac_hex
 * of the joined pieces give, for every length and join, on the path
 * this processor takes and on libgcrypt's alone, under two keys in
 * turn (the pads made again for each).
 */
static void check_hash_and_mac(bool x2)
{
	static unsigned char line[1500], both[1000];
	unsigned char k1[CHAIN_KEY_BYTES], k2[CHAIN_KEY_BYTES];
	char hex[CHAIN_HEX_LEN + 1], mac[CHAIN_HEX_LEN + 1];
	char want_hex[CHAIN_HEX_LEN + 1], want_mac[CHAIN_HEX_LEN + 1];
	struct chain_mac *m = chain_mac_new();
	size_t i, j, cut;

	cr_assert_not_null(m);
	fill_pattern(line, sizeof(line));
	test_key(k1);
	memset(k2, 0x5a, sizeof(k2));
	chain_use_x2(x2);
	for (i = 0; i < sizeof(pad_edges) / sizeof(pad_edges[0]); i++)
		for (j = 0; j < sizeof(pad_edges) / sizeof(pad_edges[0]); j++) {
			size_t n = pad_edges[i], mn = pad_edges[j];
			const unsigned char *k = (i + j) % 2 ? k2 : k1;

			for (cut = 0; cut <= mn; cut += mn / 3 + 1) {
				/* The MAC's pieces: line[0..cut), then more. */
				memcpy(both, line, cut);
				memcpy(both + cut, line + 500, mn - cut);
				chain_sha256_hex(line, n, want_hex);
				chain_hmac_hex(k, both, mn, want_mac);
				cr_assert_eq(chain_sha256_mac2_hex(
						     m, k, line, n, line, cut,
						     line + 500, mn - cut, hex,
						     mac),
					     0);
				cr_assert_str_eq(hex, want_hex,
						 "line of %zu bytes", n);
				cr_assert_str_eq(mac, want_mac,
						 "MAC of %zu bytes cut at %zu",
						 mn, cut);
			}
		}
	chain_use_x2(true);
	chain_mac_free(m);
}

Test(chain, hash_and_mac_at_once_equal_each_made_alone)
{
	check_hash_and_mac(true);
}

Test(chain, hash_and_mac_at_once_equal_each_made_alone_without_x2)
{
	check_hash_and_mac(false);
}

/* Does the kernel list every one of these flags for the processor? */
static bool cpuinfo_lists(const char *const *flags, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192], *nl;
	size_t i, seen = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		/* Every flag ends in a space. */
		nl = strchr(line, '\n');
		if (nl)
			*nl = ' ';
		for (i = 0; i < n; i++) {
			char word[32];

			snprintf(word, sizeof(word), " %s ", flags[i]);
			if (strstr(line, word))
				seen++;
		}
		break;
	}
	fclose(f);
	return seen == n;
}

/*
 * The SHA extensions are found, and taken, exactly where the kernel
 * lists them (with SSSE3 and SSE4.1): checked against /proc/cpuinfo, not
 * against the cpuid reading under test.
 */
Test(chain, sha_extensions_are_taken_where_the_kernel_lists_them)
{
	static const char *const need[] = {"sha_ni", "ssse3", "sse4_1"};
	bool listed = cpuinfo_lists(need, sizeof(need) / sizeof(need[0]));

	cr_assert_eq(chain_x2_usable(), listed);
	cr_assert_eq(chain_use_x2(true), listed);
	cr_assert_eq(chain_use_x2(false), false);
	chain_use_x2(true);
}

/*
 * The SHA extensions' own path (chain_x2.c) against libgcrypt, called
 * directly: the test above cannot tell which path it took.
 */
Test(chain, sha_extensions_path_equals_libgcrypt)
{
	static unsigned char line[1000];
	unsigned char key[CHAIN_KEY_BYTES], hash[32], mac[32], want[32];
	struct chain_x2_pads pads;
	size_t i;

	if (!chain_x2_usable())
		cr_skip_test("this processor lacks the SHA extensions");
	fill_pattern(line, sizeof(line));
	test_key(key);
	chain_x2_pads(key, &pads);
	for (i = 0; i < sizeof(pad_edges) / sizeof(pad_edges[0]); i++) {
		size_t n = pad_edges[i], cut = n / 2;

		chain_x2_sha256_hmac(line, n, line, cut, line + cut, n - cut,
				     &pads, hash, mac);
		chain_sha256(line, n, want);
		cr_assert_eq(memcmp(hash, want, 32), 0, "hash of %zu bytes", n);
		chain_hmac(key, line, n, want);
		cr_assert_eq(memcmp(mac, want, 32), 0, "MAC of %zu bytes", n);
	}
}

Test(chain, case_key_is_hmac_of_label_and_case_id)
{
	unsigned char host[CHAIN_KEY_BYTES], ck[CHAIN_KEY_BYTES];
	char hex[CHAIN_HEX_LEN + 1];
	int i;

	test_key(host);
	chain_case_key(host, "C1", ck);
	for (i = 0; i < CHAIN_KEY_BYTES; i++)
		sprintf(hex + 2 * i, "%02x", ck[i]);
	cr_assert_str_eq(
		hex,
		"157777c8d6d5c8a0a2c9ba0a55834b360beb5859634f832bd56b627a579986a6");
}

Test(chain, case_key_differs_per_case)
{
	unsigned char host[CHAIN_KEY_BYTES], a[CHAIN_KEY_BYTES],
		b[CHAIN_KEY_BYTES], a2[CHAIN_KEY_BYTES];

	test_key(host);
	chain_case_key(host, "case-a", a);
	chain_case_key(host, "case-b", b);
	chain_case_key(host, "case-a", a2);
	cr_assert_neq(memcmp(a, b, sizeof(a)), 0);
	cr_assert_eq(memcmp(a, a2, sizeof(a)), 0);
	host[0] ^= 1;
	chain_case_key(host, "case-a", a2);
	cr_assert_neq(memcmp(a, a2, sizeof(a)), 0, "the host key matters");
}

Test(chain, token_is_deterministic_per_key_case_and_nonce)
{
	unsigned char host[CHAIN_KEY_BYTES];
	char t1[CHAIN_HEX_LEN + 1], t2[CHAIN_HEX_LEN + 1];

	test_key(host);
	chain_case_token(host, "C1", "n0nce", t1);
	cr_assert_str_eq(
		t1,
		"40fb87d013a6c5b98d6ad370dcabe20017eb3c499e2413d148ab7778a1268395");
	chain_case_token(host, "C1", "n0nce", t2);
	cr_assert_str_eq(t1, t2);
	chain_case_token(host, "C2", "n0nce", t2);
	cr_assert_str_neq(t1, t2, "another case");
	chain_case_token(host, "C1", "n0ncf", t2);
	cr_assert_str_neq(t1, t2, "another nonce");
	/* The separator keeps ("C1","x") apart from ("C1\0x"-like) splits. */
	chain_case_token(host, "C", "1n0nce", t2);
	cr_assert_str_neq(t1, t2, "case/nonce boundary");
	host[5] ^= 0x80;
	chain_case_token(host, "C1", "n0nce", t2);
	cr_assert_str_neq(t1, t2, "another host key");
}

Test(chain, equal_compares_whole_strings)
{
	cr_assert(chain_equal("abc", "abc"));
	cr_assert(chain_equal("", ""));
	cr_assert_not(chain_equal("abc", "abd"));
	cr_assert_not(chain_equal("abc", "ab"));
	cr_assert_not(chain_equal("ab", "abc"));
	cr_assert_not(chain_equal("xbc", "abc"));
	cr_assert_not(chain_equal(NULL, "abc"));
}

Test(chain, random_hex_is_fresh_hex_of_requested_length)
{
	char a[2 * 100 + 1], b[2 * 100 + 1];
	size_t i;

	cr_assert_eq(chain_random_hex(100, a), 0);
	cr_assert_eq(chain_random_hex(100, b), 0);
	cr_assert_eq(strlen(a), 200);
	for (i = 0; i < 200; i++)
		cr_assert(strchr("0123456789abcdef", a[i]) != NULL);
	cr_assert_str_neq(a, b);
}

Test(chain, key_file_created_0600_with_32_bytes_and_reloaded,
     .init = make_tmpdir, .fini = remove_tmpdir)
{
	unsigned char k1[CHAIN_KEY_BYTES], k2[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	char dir[128], path[160];
	struct stat st;

	/* The folder does not exist yet: it is created 0700. */
	snprintf(dir, sizeof(dir), "%s/etc", tmpdir);
	snprintf(path, sizeof(path), "%s/host.key", dir);
	cr_assert_eq(chain_load_host_key(path, k1, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISREG(st.st_mode));
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_size, CHAIN_KEY_BYTES);
	cr_assert_eq(stat(dir, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700);
	cr_assert_eq(chain_load_host_key(path, k2, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(memcmp(k1, k2, sizeof(k1)), 0);
}

Test(chain, key_file_readable_by_others_is_refused, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	unsigned char k[CHAIN_KEY_BYTES] = {0};
	struct lf_why why = {{0}};
	char path[128];

	snprintf(path, sizeof(path), "%s/host.key", tmpdir);
	write_file(path, k, sizeof(k), 0644);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO);
	cr_log_info("refused: %s", why.msg);
	cr_assert(strstr(why.msg, "0644") && strstr(why.msg, "others"),
		  "why names the mode: %s", why.msg);
	write_file(path, k, sizeof(k), 0620);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO,
		     "group-writable refused");
}

Test(chain, key_file_of_wrong_size_is_refused, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	unsigned char k[64] = {0};
	struct lf_why why = {{0}};
	char path[128];

	snprintf(path, sizeof(path), "%s/host.key", tmpdir);
	write_file(path, k, 31, 0600);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO);
	cr_assert(strstr(why.msg, "31 bytes"), "%s", why.msg);
	write_file(path, k, 33, 0600);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO);
	write_file(path, k, 0, 0600);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO,
		     "an empty key file is never silently refilled");
}

Test(chain, key_file_not_regular_is_refused, .init = make_tmpdir,
     .fini = remove_tmpdir)
{
	unsigned char k[CHAIN_KEY_BYTES];
	struct lf_why why = {{0}};
	char path[128], target[128];

	snprintf(path, sizeof(path), "%s/host.key", tmpdir);
	cr_assert_eq(mkdir(path, 0700), 0);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO);
	cr_assert(strstr(why.msg, "regular"), "%s", why.msg);
	rmdir(path);
	snprintf(target, sizeof(target), "%s/real.key", tmpdir);
	write_file(target, k, sizeof(k), 0600);
	cr_assert_eq(symlink(target, path), 0);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO);
	cr_assert(strstr(why.msg, "symbolic link"), "%s", why.msg);
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(chain_load_host_key(path, k, &why), LF_IO,
		     "a FIFO is refused without hanging");
}
