/* SPDX-License-Identifier: MIT */
/*
 * case_int.h - the inside of a case, shared by case.c (lifecycle and
 * views), case_call.c (the target's call path) and case_load.c (restart).
 */
#ifndef LF_CASE_INT_H
#define LF_CASE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "case.h"
#include "docshare.h"
#include "hostexec.h"
#include "mocks.h"
#include "policy.h"
#include "strmap.h"

enum call_completion { CALL_PENDING, CALL_COMPLETE, CALL_MISSING };

/*
 * One recorded call.  Replies and files are read back from the ledger
 * rows at dec_off/res_off, so an entry stays a few dozen bytes.
 */
struct call_entry {
	char *id;
	uint32_t seq;
	uint8_t mode;	    /* enum lf_mode */
	uint8_t completion; /* enum call_completion */
	uint8_t host_exec;  /* a pass the host runs (case_exec.c) */
	uint32_t dec_len, res_len;
	long long dec_off, res_off; /* res_off < 0: no result row */
};

struct lf_case {
	pthread_mutex_t lock;
	char name[129];
	int backing_fd; /* borrowed: the registry's backing folder */
	int dirfd;	/* backing/cases/NAME while loading, else -1 */
	struct case_limits lim;
	enum case_state state;
	char nonce[33];
	char token[CHAIN_HEX_LEN + 1];

	struct shared_doc *pdoc, *mdoc; /* shared, loaded; NULL when none */
	struct mocks_state *mstate;
	/* Reasons, allocated only when there is one: most cases never need. */
	char *policy_error, *mocks_error;
	char *tools; /* the tools file given at open, NULL when none */

	struct ledger *ledger;
	struct call_entry *calls;
	size_t ncalls, calls_cap;
	struct strmap index;

	unsigned long turn; /* the current turn, from 1 */
	unsigned long n_mode[3];
	unsigned long n_pending, n_missing, n_complete;
	unsigned long refused, refused_rows, over_limit;
	bool ledger_full; /* a call did not fit under max_ledger: block all */
	_Atomic size_t pending_bytes; /* partial target lines held (view) */
	_Atomic size_t snap_bytes;    /* its target files' copies held open */
	_Atomic size_t open_handles;  /* its target's open files and folders */
	struct hostexec_slots exec_slots; /* its executors (hostexec.h) */
	char *latest_reply;
	enum lf_err error_code;
	char *error;
	char *close_reason;
	/*
	 * Loaded failed (ledgerfs(8), FAILURE): what is on disk is the
	 * evidence, so nothing of the case is written again.
	 */
	bool load_failed;
	/* The last checkpoint's size and time (case_ckpt.c). */
	uint64_t ckpt_rows;
	long long ckpt_ms;
};

#define CASE_POLICY(c) ((c)->pdoc ? (c)->pdoc->policy : NULL)
#define CASE_MOCKS(c)  ((c)->mdoc ? (c)->mdoc->mocks : NULL)
#define CASE_STR(s)    ((s) ? (s) : "")

/* case_tools.c: take the stored tools file at load, checking its hash. */
enum lf_err case_load_tools(struct lf_case *c, const char *text,
			    const char *digest, struct lf_why *why);

/* case_exec.c: the exec: of the rule that passes tool, or NULL. */
struct exec_spec;
const struct exec_spec *case_exec_spec(struct lf_case *c, const char *tool);
/*
 * case_exec.c: the case's calls on executors were settled (lock held):
 * end their executors, running or not yet started.
 */
void case_exec_cancel(struct lf_case *c);
/* case_exec.c: run a recorded passed call on the host (lock held). */
enum lf_err case_exec_call(struct lf_case *c, const char *call_id,
			   const json_t *args, const struct exec_spec *spec,
			   char **reply, struct lf_why *why);
/* The reply of a recorded call, with a host-executed result.  Lock held. */
char *case_reply_of(struct lf_case *c, const struct call_entry *e);
/*
 * case_gate.c: the target's refusals and the ledger cap (ledgerfs(8)
 * LIMITS).  A row is measured as its canonical text plus what
 * ledger_append adds (case_id, row, time, prev, mac: under 400 bytes; the
 * rest is slack).  The case keeps free the rows it still owes: case_closed
 * and a turn row, one completion_missing row per passed call still
 * pending, and, until it has one, the over_limit row.
 */
#define ROW_OVERHEAD 1024
#define CLOSE_ROOM   4096
#define MISSING_ROW_MAX                                                        \
	(ROW_OVERHEAD + 512 + 6 * (REQUEST_CALL_ID_MAX + REQUEST_TOOL_MAX))
#define LIMIT_ROW_MAX(l) (2ULL * (l) + 4096)
/* The bytes a row takes in the ledger, as the cap counts them. */
unsigned long long case_row_bytes(const json_t *row);
/*
 * Does a row of `bytes` fit under the cap, with what the case owes after
 * it (`released`: bytes of that debt the row itself settles)?
 */
bool case_fits(const struct lf_case *c, unsigned long long bytes,
	       unsigned long long released);
/* Does a passed call's result row fit under the cap? */
bool case_fits_result(const struct lf_case *c, const json_t *row);
/* target/error: the latest failure of a target write.  Lock held. */
void case_note_error(struct lf_case *c, enum case_input in, enum lf_err code,
		     const char *reason);
/* why's text, or NULL for no why. */
const char *case_why_msg(const struct lf_why *why);
/* Refuse the line with why's text (a bounded row); keeps why.  Lock held. */
enum lf_err case_refuse_why(struct lf_case *c, enum case_input in,
			    enum lf_err code, struct lf_why *why,
			    const char *line, size_t len, const char *id);
/*
 * A closed case refuses everything the target writes (EPIPE, rowless);
 * an unregistered target is refused anything but register.  Lock held.
 */
enum lf_err case_gate_locked(struct lf_case *c, enum case_input in,
			     const char *line, size_t len, struct lf_why *why);

/* case.c */
void case_set_str(char **field, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int case_write_meta(struct lf_case *c);
/* Leave the durable failed marker (case_fail.h) for c->close_reason. */
void case_mark_failed(struct lf_case *c);
const char *case_call_key(void *ctx, uint32_t i);
struct call_entry *case_find_call(struct lf_case *c, const char *id);
/* A pending passed call gets its result row (off/len): complete or missing. */
void case_settle_call(struct lf_case *c, struct call_entry *e, bool missing,
		      long long off, size_t len);
struct call_entry *case_add_call(struct lf_case *c, const char *id,
				 uint32_t seq, int mode, long long off,
				 size_t len);
/*
 * Take c->lock once no deferred row of c is pending (ledger.h); every
 * use of the case takes it so.  Unlock with pthread_mutex_unlock.
 */
void case_lock(struct lf_case *c);

enum lf_err case_append(struct lf_case *c, json_t *row, long long *off,
			size_t *len, struct lf_why *why);
enum lf_err case_load_docs(struct lf_case *c, const char *policy,
			   const char *mocks, struct lf_why *why);
struct lf_case *case_alloc(const char *name, const struct case_limits *lim);

#endif
