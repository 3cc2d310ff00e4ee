/* SPDX-License-Identifier: MIT */
/*
 * merkle.c - the RFC 6962 tree of a ledger's rows (ledgerfs-ledger(5)
 * TREE): compact range for the daemon, proofs and their checks for
 * ledgerctl and the load-time check.  Proofs follow the RFC's recursive
 * definitions literally, so a reader can hold one against the other.
 */
#include "merkle.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sign.h"

void merkle_leaf_hash(const void *line, size_t len, merkle_hash out)
{
	static const unsigned char zero = 0x00;
	struct sign_buf v[2] = {{&zero, 1}, {line, len}};

	sign_sha256v(v, 2, out);
}

void merkle_node_hash(const merkle_hash left, const merkle_hash right,
		      merkle_hash out)
{
	static const unsigned char one = 0x01;
	struct sign_buf v[3] = {
		{&one, 1}, {left, MERKLE_HASH}, {right, MERKLE_HASH}};

	sign_sha256v(v, 3, out);
}

static void merkle_empty(merkle_hash out)
{
	struct sign_buf v = {"", 0};

	sign_sha256v(&v, 1, out);
}

void merkle_init(struct merkle_range *r)
{
	memset(r, 0, sizeof(*r));
}

void merkle_append_leaf(struct merkle_range *r, const merkle_hash leaf)
{
	merkle_hash x;
	int level = 0;

	memcpy(x, leaf, MERKLE_HASH);
	/* Like a binary counter's carry: equal perfect subtrees merge. */
	while (level < 64 && (r->n >> level) & 1) {
		merkle_node_hash(r->h[level], x, x);
		level++;
	}
	if (level < 64)
		memcpy(r->h[level], x, MERKLE_HASH);
	r->n++;
}

void merkle_append(struct merkle_range *r, const void *line, size_t len)
{
	merkle_hash leaf;

	merkle_leaf_hash(line, len, leaf);
	merkle_append_leaf(r, leaf);
}

void merkle_root(const struct merkle_range *r, merkle_hash out)
{
	merkle_hash acc;
	bool have = false;
	int level;

	if (r->n == 0) {
		merkle_empty(out);
		return;
	}
	/* The smallest subtree is the rightmost: fold right to left. */
	for (level = 0; level < 64; level++) {
		if (!((r->n >> level) & 1))
			continue;
		if (have) {
			merkle_node_hash(r->h[level], acc, acc);
		} else {
			memcpy(acc, r->h[level], MERKLE_HASH);
			have = true;
		}
	}
	memcpy(out, acc, MERKLE_HASH);
}

/* The largest power of two smaller than n (n > 1). */
static uint64_t merkle_split(uint64_t n)
{
	uint64_t k = 1;

	while (k << 1 < n)
		k <<= 1;
	return k;
}

void merkle_root_of(const merkle_hash *leaves, uint64_t n, merkle_hash out)
{
	merkle_hash l, r;
	uint64_t k;

	if (n == 0) {
		merkle_empty(out);
		return;
	}
	if (n == 1) {
		memcpy(out, leaves[0], MERKLE_HASH);
		return;
	}
	k = merkle_split(n);
	merkle_root_of(leaves, k, l);
	merkle_root_of(leaves + k, n - k, r);
	merkle_node_hash(l, r, out);
}

/* PATH(m, D[n]) appended at proof[*len] (RFC 6962 2.1.1). */
static void merkle_path(const merkle_hash *d, uint64_t n, uint64_t m,
			merkle_hash *proof, int *len)
{
	uint64_t k;

	if (n <= 1)
		return;
	k = merkle_split(n);
	if (m < k) {
		merkle_path(d, k, m, proof, len);
		merkle_root_of(d + k, n - k, proof[(*len)++]);
	} else {
		merkle_path(d + k, n - k, m - k, proof, len);
		merkle_root_of(d, k, proof[(*len)++]);
	}
}

int merkle_inclusion_proof(const merkle_hash *leaves, uint64_t n,
			   uint64_t index, merkle_hash proof[MERKLE_MAX_PROOF])
{
	int len = 0;

	if (index >= n)
		return -1;
	merkle_path(leaves, n, index, proof, &len);
	return len;
}

/* SUBPROOF(m, D[n], b) appended at proof[*len] (RFC 6962 2.1.2). */
static void merkle_subproof(const merkle_hash *d, uint64_t n, uint64_t m,
			    bool b, merkle_hash *proof, int *len)
{
	uint64_t k;

	if (m == n) {
		if (!b)
			merkle_root_of(d, n, proof[(*len)++]);
		return;
	}
	k = merkle_split(n);
	if (m <= k) {
		merkle_subproof(d, k, m, b, proof, len);
		merkle_root_of(d + k, n - k, proof[(*len)++]);
	} else {
		merkle_subproof(d + k, n - k, m - k, false, proof, len);
		merkle_root_of(d, k, proof[(*len)++]);
	}
}

int merkle_consistency_proof(const merkle_hash *leaves, uint64_t m, uint64_t n,
			     merkle_hash proof[MERKLE_MAX_PROOF])
{
	int len = 0;

	if (m > n)
		return -1;
	if (m == 0 || m == n)
		return 0;
	merkle_subproof(leaves, n, m, true, proof, &len);
	return len;
}

bool merkle_verify_inclusion(uint64_t index, uint64_t size,
			     const merkle_hash leaf, const merkle_hash *proof,
			     size_t len, const merkle_hash root)
{
	uint64_t fn = index, sn;
	merkle_hash r;
	size_t i;

	if (index >= size)
		return false;
	sn = size - 1;
	memcpy(r, leaf, MERKLE_HASH);
	for (i = 0; i < len; i++) {
		if (sn == 0)
			return false;
		if ((fn & 1) || fn == sn) {
			merkle_node_hash(proof[i], r, r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			merkle_node_hash(r, proof[i], r);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && memcmp(r, root, MERKLE_HASH) == 0;
}

bool merkle_verify_consistency(uint64_t m, uint64_t n,
			       const merkle_hash old_root,
			       const merkle_hash new_root,
			       const merkle_hash *proof, size_t len)
{
	merkle_hash fr, sr;
	uint64_t fn, sn;
	size_t i = 0;

	if (m > n)
		return false;
	if (m == n)
		return len == 0 && memcmp(old_root, new_root, MERKLE_HASH) == 0;
	if (m == 0)
		return len == 0;
	/* RFC 9162 2.1.4.2: a power-of-two old size is its own first node. */
	if ((m & (m - 1)) == 0) {
		memcpy(fr, old_root, MERKLE_HASH);
	} else {
		if (len == 0)
			return false;
		memcpy(fr, proof[0], MERKLE_HASH);
		i = 1;
	}
	memcpy(sr, fr, MERKLE_HASH);
	fn = m - 1;
	sn = n - 1;
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	for (; i < len; i++) {
		if (sn == 0)
			return false;
		if ((fn & 1) || fn == sn) {
			merkle_node_hash(proof[i], fr, fr);
			merkle_node_hash(proof[i], sr, sr);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			merkle_node_hash(sr, proof[i], sr);
		}
		fn >>= 1;
		sn >>= 1;
	}
	return sn == 0 && memcmp(fr, old_root, MERKLE_HASH) == 0 &&
	       memcmp(sr, new_root, MERKLE_HASH) == 0;
}

/* Keep the leaf in *leaves (grown by doubling).  0 or -1. */
static int merkle_keep(merkle_hash **leaves, uint64_t *cap, uint64_t n,
		       const merkle_hash leaf)
{
	if (n == *cap) {
		uint64_t nc = *cap ? *cap * 2 : 1024;
		merkle_hash *p = realloc(*leaves, nc * sizeof(merkle_hash));

		if (!p)
			return -1;
		*leaves = p;
		*cap = nc;
	}
	memcpy((*leaves)[n], leaf, MERKLE_HASH);
	return 0;
}

/* The lines of fd's bytes [from, to): from is where a line starts. */
static enum lf_err merkle_lines_range(int fd, long long from, long long to,
				      merkle_line_fn fn, void *ctx,
				      struct lf_why *why)
{
	size_t cap = (size_t)1 << 20, have = 0, start;
	long long off = from, limit = to;
	enum lf_err rc = LF_IO;
	char *buf, *nl;
	ssize_t got;

	buf = malloc(cap);
	if (!buf)
		return lf_fail(why, LF_NOMEM, "out of memory");
	while (off < limit) {
		size_t want = cap - have;

		if ((long long)want > limit - off)
			want = (size_t)(limit - off);
		got = pread(fd, buf + have, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			lf_fail(why, LF_IO, "read ledger: %s",
				got < 0 ? strerror(errno) : "ends early");
			goto out;
		}
		off += got;
		have += (size_t)got;
		start = 0;
		while ((nl = memchr(buf + start, '\n', have - start))) {
			if (fn(ctx, buf + start,
			       (size_t)(nl - (buf + start)))) {
				rc = LF_OK;
				goto out;
			}
			start = (size_t)(nl - buf) + 1;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
		if (have == cap) {
			/* A line longer than the buffer: grow it. */
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				rc = lf_fail(why, LF_NOMEM, "out of memory");
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
	}
	rc = have ? lf_fail(why, LF_VERIFY, "ledger ends without a newline")
		  : LF_OK;
out:
	free(buf);
	return rc;
}

enum lf_err merkle_each_line(int fd, long long limit, merkle_line_fn fn,
			     void *ctx, struct lf_why *why)
{
	return merkle_lines_range(fd, 0, limit, fn, ctx, why);
}

/* What merkle_scan_fd's walk carries. */
struct merkle_scan {
	struct merkle_range *r;
	const uint64_t *sizes;
	size_t nsizes, next;
	merkle_hash *roots;
	merkle_hash *leaves; /* kept when keep */
	uint64_t leaves_cap, n;
	bool keep, nomem;
	/* No range and no roots asked: the leaves alone (half the hashes). */
	bool leaves_only;
};

static bool merkle_scan_line(void *ctx, const char *s, size_t n)
{
	struct merkle_scan *c = ctx;
	merkle_hash leaf;

	merkle_leaf_hash(s, n, leaf);
	if (c->keep &&
	    merkle_keep(&c->leaves, &c->leaves_cap, c->n, leaf) < 0) {
		c->nomem = true;
		return true;
	}
	c->n++;
	if (c->leaves_only)
		return false;
	merkle_append_leaf(c->r, leaf);
	while (c->next < c->nsizes && c->sizes[c->next] == c->r->n)
		merkle_root(c->r, c->roots[c->next++]);
	return false;
}

enum lf_err merkle_scan_fd(int fd, long long limit, struct merkle_range *r,
			   const uint64_t *sizes, size_t nsizes,
			   merkle_hash *roots, merkle_hash **leaves_out,
			   uint64_t *count, struct lf_why *why)
{
	struct merkle_range local;
	struct merkle_scan c = {.sizes = sizes,
				.nsizes = nsizes,
				.roots = roots,
				.keep = leaves_out != NULL,
				.leaves_only = !r && !nsizes && leaves_out};
	enum lf_err rc;

	c.r = r ? r : &local;
	merkle_init(c.r);
	while (c.next < nsizes && sizes[c.next] == 0)
		merkle_root(c.r, roots[c.next++]);
	rc = merkle_each_line(fd, limit, merkle_scan_line, &c, why);
	if (rc == LF_OK && c.nomem)
		rc = lf_fail(why, LF_NOMEM, "out of memory");
	if (rc == LF_OK) {
		if (count)
			*count = c.n;
		if (leaves_out) {
			*leaves_out = c.leaves;
			c.leaves = NULL;
		}
	}
	free(c.leaves);
	return rc;
}

/* One thread's part of merkle_leaves_fd. */
struct merkle_part {
	pthread_t tid;
	int fd;
	long long from, to;
	struct merkle_scan c;
	enum lf_err rc;
	struct lf_why why;
};

static void *merkle_part_run(void *arg)
{
	struct merkle_part *p = arg;

	p->rc = merkle_lines_range(p->fd, p->from, p->to, merkle_scan_line,
				   &p->c, &p->why);
	if (p->rc == LF_OK && p->c.nomem)
		p->rc = lf_fail(&p->why, LF_NOMEM, "out of memory");
	return NULL;
}

/* Where the first line at or after at starts (to when none does). */
static long long merkle_line_start(int fd, long long at, long long to)
{
	char buf[65536], *nl;
	long long off = at > 0 ? at - 1 : 0;
	ssize_t got;

	if (at <= 0)
		return 0;
	while (off < to) {
		size_t want = sizeof(buf);

		if ((long long)want > to - off)
			want = (size_t)(to - off);
		got = pread(fd, buf, want, (off_t)off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		nl = memchr(buf, '\n', (size_t)got);
		if (nl)
			return off + (nl - buf) + 1;
		off += got;
	}
	return to;
}

enum lf_err merkle_leaves_fd(int fd, long long limit, unsigned threads,
			     merkle_hash **leaves_out, uint64_t *count,
			     struct lf_why *why)
{
	struct merkle_part *p;
	merkle_hash *all = NULL;
	enum lf_err rc = LF_OK;
	uint64_t n = 0;
	unsigned i, started = 0;
	long long cut = 0;

	if (threads <= 1)
		return merkle_scan_fd(fd, limit, NULL, NULL, 0, NULL,
				      leaves_out, count, why);
	p = calloc(threads, sizeof(*p));
	if (!p)
		return lf_fail(why, LF_NOMEM, "out of memory");
	/* Parts cut where lines start, so each line is one part's. */
	for (i = 0; i < threads; i++) {
		long long at = (long long)((unsigned long long)limit * (i + 1) /
					   threads);

		p[i].fd = fd;
		p[i].from = cut;
		cut = i + 1 == threads
			      ? limit
			      : merkle_line_start(fd, at > cut ? at : cut,
						  limit);
		p[i].to = cut;
		p[i].c.keep = p[i].c.leaves_only = true;
	}
	/* The first part on this thread, the others on their own. */
	for (i = 1; i < threads; i++) {
		if (pthread_create(&p[i].tid, NULL, merkle_part_run, &p[i]))
			break;
		started = i;
	}
	merkle_part_run(&p[0]);
	for (i = started + 1; i < threads; i++)
		merkle_part_run(&p[i]); /* a thread that did not start */
	for (i = 1; i <= started; i++)
		pthread_join(p[i].tid, NULL);
	for (i = 0; i < threads && rc == LF_OK; i++) {
		if (p[i].rc != LF_OK) {
			rc = p[i].rc;
			*why = p[i].why;
		}
		n += p[i].c.n;
	}
	if (rc == LF_OK && n) {
		all = malloc(n * sizeof(*all));
		if (!all)
			rc = lf_fail(why, LF_NOMEM, "out of memory");
	}
	for (i = 0, n = 0; rc == LF_OK && i < threads; i++) {
		if (p[i].c.n)
			memcpy(all[n], p[i].c.leaves,
			       p[i].c.n * sizeof(merkle_hash));
		n += p[i].c.n;
	}
	for (i = 0; i < threads; i++)
		free(p[i].c.leaves);
	free(p);
	if (rc != LF_OK) {
		free(all);
		return rc;
	}
	*leaves_out = all;
	*count = n;
	return LF_OK;
}
