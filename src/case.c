/* SPDX-License-Identifier: MIT */
/*
 * case.c - one case's lifecycle (ledgerfs(8) LIFECYCLE): creation,
 * documents, host commands (turn, close, fail), and the read-only views
 * (status, calls/).  The target's call path is in case_call.c, restart
 * replay in case_load.c.
 */
#include "case_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "case_ckpt.h"
#include "case_fail.h"
#include "doc.h"
#include "request.h"

const char *case_state_name(enum case_state s)
{
	static const char *const names[] = {
		[CASE_OPENED] = "opened",	  [CASE_READY] = "ready",
		[CASE_REGISTERED] = "registered", [CASE_CLOSED] = "closed",
		[CASE_FAILED] = "failed",
	};
	return names[s];
}

struct lf_case *case_alloc(const char *name, const struct case_limits *lim)
{
	struct lf_case *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->dirfd = -1;
	c->backing_fd = -1;
	c->lim = *lim;
	if (!c->lim.max_line)
		c->lim.max_line = REQUEST_MAX_LINE_DEFAULT;
	if (!c->lim.max_calls)
		c->lim.max_calls = CASE_MAX_CALLS_DEFAULT;
	if (!c->lim.max_refused)
		c->lim.max_refused = CASE_MAX_REFUSED_DEFAULT;
	if (!c->lim.max_ledger)
		c->lim.max_ledger = CASE_MAX_LEDGER_DEFAULT;
	c->turn = 1;
	strmap_init(&c->index);
	c->mstate = mocks_state_new();
	if (!c->mstate) {
		free(c);
		return NULL;
	}
	return c;
}

void case_set_commit(struct lf_case *c, struct commit_group *g)
{
	case_lock(c);
	ledger_set_commit(c->ledger, g);
	pthread_mutex_unlock(&c->lock);
}

void case_free(struct lf_case *c)
{
	size_t i;

	if (!c)
		return;
	if (c->ledger)
		ledger_close(c->ledger);
	if (c->dirfd >= 0)
		close(c->dirfd);
	for (i = 0; i < c->ncalls; i++)
		free(c->calls[i].id);
	free(c->calls);
	strmap_free(&c->index);
	docshare_put(c->pdoc);
	docshare_put(c->mdoc);
	mocks_state_free(c->mstate);
	free(c->policy_error);
	free(c->mocks_error);
	free(c->tools);
	free(c->error);
	free(c->close_reason);
	free(c->latest_reply);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *case_name(const struct lf_case *c)
{
	return c->name;
}

enum case_state case_get_state(struct lf_case *c)
{
	enum case_state s;

	case_lock(c);
	s = c->state;
	pthread_mutex_unlock(&c->lock);
	return s;
}

/*
 * case.json holds what the ledger does not: the nonce the token derives
 * from and the documents as written.  Written whole and renamed into
 * place so a crash leaves the old or the new file, never half of one.
 */
int case_write_meta(struct lf_case *c)
{
	json_t *meta;
	char *text = NULL, path[160], tools_digest[CHAIN_HEX_LEN + 1];
	int fd = -1, rc = -1, dirfd = c->dirfd;
	size_t len, done = 0;

	if (c->load_failed)
		return 0;
	/* A case keeps only its ledger open; its folder is opened when needed. */
	if (dirfd < 0) {
		snprintf(path, sizeof(path), "cases/%s", c->name);
		dirfd = openat(c->backing_fd, path,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd < 0)
			return -1;
	}

	/*
	 * Counters past the row bounds live nowhere else; they are saved
	 * here at clean shutdown (see case_save_counters).
	 */
	if (c->tools)
		chain_sha256_hex(c->tools, strlen(c->tools), tools_digest);
	meta = json_pack("{s:s, s:s, s:s?, s:s?, s:s*, s:s*, s:{s:I, s:I}, "
			 "s:s*}",
			 "case_id", c->name, "nonce", c->nonce, "policy",
			 c->pdoc ? c->pdoc->text : NULL, "mocks",
			 c->mdoc ? c->mdoc->text : NULL, "tools", c->tools,
			 "tools_sha256", c->tools ? tools_digest : NULL,
			 "counters", "refused", (json_int_t)c->refused,
			 "over_limit", (json_int_t)c->over_limit, "failed",
			 c->ledger && ledger_broken(c->ledger) ? c->close_reason
							       : NULL);
	if (!meta)
		return -1;
	text = json_dumps(meta, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(meta);
	if (!text)
		return -1;
	len = strlen(text);
	fd = openat(dirfd, "case.json.tmp",
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		goto out;
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n <= 0)
			goto out;
		done += (size_t)n;
	}
	if (fdatasync(fd) < 0)
		goto out;
	if (renameat(dirfd, "case.json.tmp", dirfd, "case.json") < 0)
		goto out;
	if (fsync(dirfd) < 0)
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	/* A full disk must not leave a half file behind (ledgerfs(8), FAILURE). */
	if (rc < 0 && fd >= 0) {
		int err = errno;

		unlinkat(dirfd, "case.json.tmp", 0);
		errno = err;
	}
	if (dirfd != c->dirfd)
		close(dirfd);
	free(text);
	return rc;
}

const char *case_call_key(void *ctx, uint32_t i)
{
	return ((struct lf_case *)ctx)->calls[i].id;
}

struct call_entry *case_find_call(struct lf_case *c, const char *id)
{
	long i = strmap_find(&c->index, id, case_call_key, c);

	return i < 0 ? NULL : &c->calls[i];
}

struct call_entry *case_add_call(struct lf_case *c, const char *id,
				 uint32_t seq, int mode, long long off,
				 size_t len)
{
	struct call_entry *e;

	if (c->ncalls == c->calls_cap) {
		size_t ncap = c->calls_cap ? c->calls_cap * 2 : 16;
		struct call_entry *n = realloc(c->calls, ncap * sizeof(*n));

		if (!n)
			return NULL;
		c->calls = n;
		c->calls_cap = ncap;
	}
	e = &c->calls[c->ncalls];
	memset(e, 0, sizeof(*e));
	e->id = strdup(id);
	if (!e->id)
		return NULL;
	e->seq = seq;
	e->mode = (uint8_t)mode;
	e->completion = mode == LF_MODE_PASS ? CALL_PENDING : CALL_COMPLETE;
	e->dec_off = off;
	e->dec_len = (uint32_t)len;
	e->res_off = -1;
	if (strmap_add(&c->index, id, (uint32_t)c->ncalls, case_call_key, c)) {
		free(e->id);
		return NULL;
	}
	c->ncalls++;
	c->n_mode[mode]++;
	if (mode == LF_MODE_PASS)
		c->n_pending++;
	return e;
}

void case_settle_call(struct lf_case *c, struct call_entry *e, bool missing,
		      long long off, size_t len)
{
	e->completion = missing ? CALL_MISSING : CALL_COMPLETE;
	e->res_off = off;
	e->res_len = (uint32_t)len;
	c->n_pending--;
	if (missing)
		c->n_missing++;
	else
		c->n_complete++;
}

/*
 * Append under the case lock.  A failed append means the ledger can no
 * longer be trusted to hold what follows, so the case fails closed.
 */
static void case_fail_ledger(struct lf_case *c, const char *msg)
{
	c->state = CASE_FAILED;
	case_set_str(&c->close_reason, "ledger append failed: %s", msg);
	/*
	 * No row can say so: the ledger is broken.  The failed marker keeps
	 * the state across a restart without needing free space; case.json
	 * keeps the counters (best effort).
	 */
	case_mark_failed(c);
	case_write_meta(c);
	/* Nothing more is recorded: its host executors end now. */
	case_exec_cancel(c);
}

enum lf_err case_append(struct lf_case *c, json_t *row, long long *off,
			size_t *len, struct lf_why *why)
{
	enum lf_err e = ledger_append(c->ledger, row, off, len, why);

	if (e != LF_OK)
		case_fail_ledger(c, why ? why->msg : "");
	else
		case_ckpt_after_append(c, row);
	return e;
}

/*
 * The lock, once no deferred row of the case is pending: what it guards
 * shows only durable rows (ledger.h).  A deferred row whose flush failed
 * fails the case here, as a failed append does.
 */
void case_lock(struct lf_case *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->ledger && ledger_unsettled(c->ledger)) {
		pthread_mutex_unlock(&c->lock);
		ledger_settle(c->ledger);
		pthread_mutex_lock(&c->lock);
	}
	if (c->ledger && c->state != CASE_FAILED &&
	    ledger_flush_error(c->ledger)) {
		char msg[96];

		snprintf(msg, sizeof(msg), "ledger flush failed: %s",
			 strerror(ledger_flush_error(c->ledger)));
		case_fail_ledger(c, msg);
	}
}

/*
 * Under the case lock, after the ledger broke.  Best effort: when even
 * the rename fails the disk has refused everything, and the case stays
 * failed only while the daemon runs (ledgerfs(8), FAILURE).
 */
void case_mark_failed(struct lf_case *c)
{
	char path[160];
	int dirfd = c->dirfd;

	if (c->load_failed)
		return;
	if (dirfd < 0) {
		snprintf(path, sizeof(path), "cases/%s", c->name);
		dirfd = openat(c->backing_fd, path,
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dirfd < 0)
			return;
	}
	case_fail_mark(dirfd, CASE_STR(c->close_reason));
	if (dirfd != c->dirfd)
		close(dirfd);
}

enum lf_err case_create(int backing_fd, const unsigned char *host_key,
			const char *name, const struct case_limits *lim,
			struct lf_case **out, struct lf_why *why)
{
	struct lf_case *c = NULL;
	json_t *row = NULL;
	enum lf_err e;
	int cases_fd = -1;
	bool made = false;
	char fp[CHAIN_FP_LEN + 1], path[160];

	if (!request_valid_id(name, strlen(name)))
		return lf_fail(
			why, LF_BAD_NAME,
			"case name must be 1-128 characters of [A-Za-z0-9._:-], not . or ..");
	c = case_alloc(name, lim);
	if (!c)
		return lf_fail(why, LF_NOMEM, "out of memory");
	c->backing_fd = backing_fd;
	cases_fd = openat(backing_fd, "cases",
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cases_fd < 0) {
		e = lf_fail(why, LF_IO, "open cases/: %s", strerror(errno));
		goto fail;
	}
	if (mkdirat(cases_fd, name, 0700) < 0) {
		e = errno == EEXIST
			    ? lf_fail(why, LF_EXISTS, "case %s exists", name)
			    : lf_fail(why, LF_IO, "mkdir cases/%s: %s", name,
				      strerror(errno));
		goto fail;
	}
	made = true;
	/* The new name is durable once its parent, cases/, is flushed. */
	c->dirfd = openat(cases_fd, name,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0 || fsync(cases_fd) < 0) {
		e = lf_fail(why, LF_IO, "open cases/%s: %s", name,
			    strerror(errno));
		goto fail;
	}
	if (case_fail_prepare(c->dirfd) < 0) {
		e = lf_fail(why, LF_IO, "make the failed marker: %s",
			    strerror(errno));
		goto fail;
	}
	if (chain_random_hex(16, c->nonce) < 0) {
		e = lf_fail(why, LF_IO, "no randomness for the case nonce");
		goto fail;
	}
	chain_case_token(host_key, c->name, c->nonce, c->token);
	if (case_write_meta(c) < 0) {
		e = lf_fail(why, LF_IO, "write case.json: %s", strerror(errno));
		goto fail;
	}
	e = ledger_open(c->dirfd, "ledger.jsonl", c->name, host_key, true, NULL,
			&c->ledger, why);
	if (e != LF_OK)
		goto fail;
	/* New cases are sealed forward-securely (ledgerfs-ledger(5) SEALS). */
	e = ledger_seal_start(c->ledger, c->dirfd, "ledger.jsonl", host_key,
			      RATCHET_EPOCH_ROWS, why);
	if (e != LF_OK)
		goto fail;
	/* The host key's fingerprint: verify tells a wrong key from a
	 * forged MAC by it (ledgerfs-ledger(5) PHASES). */
	chain_key_fingerprint(host_key, CHAIN_KEY_BYTES, fp);
	row = json_pack("{s:s, s:s}", "phase", "case_opened", "key_fingerprint",
			fp);
	e = row ? ledger_append(c->ledger, row, NULL, NULL, why)
		: lf_fail(why, LF_NOMEM, "out of memory");
	json_decref(row);
	if (e != LF_OK)
		goto fail;
	close(c->dirfd);
	c->dirfd = -1;
	close(cases_fd);
	/* One descriptor an open case: its ledger (ledgerfs(8) LIMITS). */
	snprintf(path, sizeof(path), "cases/%s/ledger.jsonl", name);
	ledger_seal_park(c->ledger, backing_fd, path);
	*out = c;
	return LF_OK;
fail:
	case_free(c);
	/* A creation that failed half way frees its name (ledgerfs(8), FAILURE). */
	if (made)
		case_fail_unmake(cases_fd, name);
	if (cases_fd >= 0)
		close(cases_fd);
	return e;
}

enum lf_err case_seal_handout(struct lf_case *c,
			      unsigned char k0[CHAIN_KEY_BYTES],
			      struct lf_why *why)
{
	enum lf_err e;

	case_lock(c);
	e = c->load_failed
		    ? lf_fail(why, LF_NOT_FOUND, "the case failed at load")
		    : ledger_seal_handout(c->ledger, k0, why);
	pthread_mutex_unlock(&c->lock);
	return e;
}

void case_token(struct lf_case *c, char out[CHAIN_HEX_LEN + 1])
{
	case_lock(c);
	memcpy(out, c->token, CHAIN_HEX_LEN + 1);
	pthread_mutex_unlock(&c->lock);
}

/* Load the stored documents (both may be absent). */
enum lf_err case_load_docs(struct lf_case *c, const char *policy,
			   const char *mocks, struct lf_why *why)
{
	enum lf_err e = LF_OK;

	if (policy)
		c->pdoc = docshare_get(DOC_POLICY, policy, strlen(policy), &e,
				       why);
	if (e == LF_OK && mocks)
		c->mdoc =
			docshare_get(DOC_MOCKS, mocks, strlen(mocks), &e, why);
	return e;
}

void case_set_str(char **field, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	free(*field);
	*field = NULL;
	if (!fmt)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		*field = s;
	va_end(ap);
}

/*
 * Documents are taken whole: a malformed one leaves the previous one in
 * force and the reason in status.
 */
static enum lf_err case_set_doc(struct lf_case *c, enum doc_kind kind,
				const char *text, size_t len,
				struct lf_why *why)
{
	struct shared_doc *d = NULL, *old, **slot;
	enum case_state old_state;
	char **errfield;
	enum lf_err e;

	slot = kind == DOC_MOCKS ? &c->mdoc : &c->pdoc;
	errfield = kind == DOC_MOCKS ? &c->mocks_error : &c->policy_error;
	case_lock(c);
	if (c->state == CASE_CLOSED || c->state == CASE_FAILED) {
		e = lf_fail(why, LF_CLOSED, "case is %s",
			    case_state_name(c->state));
		goto out;
	}
	if (c->state == CASE_REGISTERED) {
		e = lf_fail(why, LF_FROZEN,
			    "%s is frozen: the target has registered",
			    kind == DOC_MOCKS ? "mocks" : "policy");
		goto out;
	}
	if (len > CASE_DOC_MAX || memchr(text, 0, len)) {
		e = lf_fail(why, LF_EINVAL_DOC,
			    "document too large or holds a NUL byte");
		goto record;
	}
	d = docshare_get(kind, text, len, &e, why);
	if (!d)
		goto record;
	old = *slot;
	old_state = c->state;
	*slot = d;
	if (kind == DOC_POLICY)
		c->state = CASE_READY;
	if (case_write_meta(c) < 0) {
		/* Not durable, not taken: the previous document stays. */
		e = lf_fail(why, LF_IO, "write case.json: %s", strerror(errno));
		*slot = old;
		c->state = old_state;
		docshare_put(d);
		goto record;
	}
	docshare_put(old);
	case_set_str(errfield, NULL);
	goto out;
record:
	case_set_str(errfield, "%s", why ? why->msg : "invalid document");
out:
	pthread_mutex_unlock(&c->lock);
	return e;
}

enum lf_err case_set_policy(struct lf_case *c, const char *text, size_t len,
			    struct lf_why *why)
{
	return case_set_doc(c, DOC_POLICY, text, len, why);
}

enum lf_err case_set_mocks(struct lf_case *c, const char *text, size_t len,
			   struct lf_why *why)
{
	return case_set_doc(c, DOC_MOCKS, text, len, why);
}

static char *case_text_copy(struct lf_case *c, struct shared_doc *const *d)
{
	char *s;

	case_lock(c);
	s = strdup(*d ? (*d)->text : "");
	pthread_mutex_unlock(&c->lock);
	return s;
}

char *case_policy_text(struct lf_case *c)
{
	return case_text_copy(c, &c->pdoc);
}

char *case_mocks_text(struct lf_case *c)
{
	return case_text_copy(c, &c->mdoc);
}

void case_save_counters(struct lf_case *c)
{
	case_lock(c);
	/* Only counts no row holds need saving; most cases have none. */
	if (c->refused > c->refused_rows || c->over_limit > 1)
		case_write_meta(c);
	pthread_mutex_unlock(&c->lock);
}
