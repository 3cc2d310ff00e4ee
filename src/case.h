/* SPDX-License-Identifier: MIT */
/*
 * case.h - one case: its lifecycle (ledgerfs(8) LIFECYCLE), its call index,
 * and the call path that ties request parsing, policy, mocks and the ledger
 * together.  Every function takes the case's own lock; no lock is global.
 */
#ifndef LF_CASE_H
#define LF_CASE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "chain.h"
#include "err.h"
#include "ledger.h"

struct lf_case;
struct hostexec;

enum case_state {
	CASE_OPENED,	 /* no valid policy yet */
	CASE_READY,	 /* valid policy in; waiting for the target */
	CASE_REGISTERED, /* the target registered; policy and mocks frozen */
	CASE_CLOSED,
	CASE_FAILED,
};

struct case_limits {
	size_t max_line;	       /* request line bytes (default 1 MiB) */
	unsigned long max_calls;       /* per case; past it calls are blocked */
	unsigned long max_refused;     /* refused rows kept per case */
	unsigned long long max_ledger; /* ledger bytes the target may cause */
};

#define CASE_MAX_CALLS_DEFAULT	 100000UL
#define CASE_MAX_REFUSED_DEFAULT 64UL
#define CASE_DOC_MAX		 (16u * 1024 * 1024)
#define CASE_MAX_LEDGER_DEFAULT	 (1ULL << 30)

/*
 * The smallest --max-ledger for a line limit: the rows kept free for the
 * end of a case (ledgerfs(8) LIMITS) and a few calls must fit.
 */
unsigned long long case_min_ledger(size_t max_line);

/* The files of the target folder, for refusal rows and `error`. */
enum case_input { CASE_IN_REQUEST, CASE_IN_RESULT, CASE_IN_REGISTER };

/*
 * Create case `name` under backing_fd (a folder holding cases/): its
 * folder, case.json (with a fresh nonce) and a ledger whose row 1 is
 * case_opened.  LF_BAD_NAME, LF_EXISTS, LF_IO.
 */
enum lf_err case_create(int backing_fd, const unsigned char *host_key,
			const char *name, const struct case_limits *lim,
			struct lf_case **out, struct lf_why *why);

/*
 * Load an existing case after a restart: case.json, then the ledger
 * (verified with the key, torn tail cut and recorded), replaying its rows
 * to rebuild state, call index, counters and scenario state.  A case that
 * cannot be trusted (unreadable, its ledger not verifying, case.json not
 * matching the hashes its rows bound) is still made, failed with the
 * reason: LF_VERIFY with *out set and why.  *out is NULL only for a bad
 * name or no memory.
 */
enum lf_err case_load(int backing_fd, const unsigned char *host_key,
		      const char *name, const struct case_limits *lim,
		      struct lf_case **out, struct lf_why *why);

void case_free(struct lf_case *c);

/*
 * The executor helper every case of this process runs host-executed
 * calls through (borrowed; NULL: none, and such calls get an error
 * result).  Set before serving, cleared after.
 */
void case_set_hostexec(struct hostexec *hx);

/*
 * A passed call the host runs, for a view that answers a write later
 * (ledgerfs(8) HOST EXECUTORS): while case_exec_catch(slot) is set on a
 * thread with a deferral open (defer.h), case_call records the decision
 * row, puts the call in *slot and returns LF_EXEC_PENDING, waiting for
 * nothing.  Once that row is durable the view starts it
 * (case_exec_start: never blocks, takes no case lock); ready(arg, x)
 * runs when the executor has answered, on the executor client's thread,
 * and there case_exec_finish records its completion as case_call would
 * have (*reply on LF_OK) and frees x.  case_exec_drop frees a call never
 * started: it stays pending, as after a crash.
 */
struct case_exec;
typedef void (*case_exec_ready_fn)(void *arg, struct case_exec *x);
void case_exec_catch(struct case_exec **slot);
void case_exec_start(struct case_exec *x, case_exec_ready_fn ready, void *arg);
enum lf_err case_exec_finish(struct case_exec *x, char **reply,
			     struct lf_why *why);
void case_exec_drop(struct case_exec *x);

/* Make the case's later appends durable through group g (see commit.h). */
void case_set_commit(struct lf_case *c, struct commit_group *g);

/*
 * Save the counters that past their row bounds live only in memory
 * (refusals and over-limit calls not recorded as rows), for a clean
 * shutdown.  After a crash they restart from what the rows show.
 */
void case_save_counters(struct lf_case *c);

const char *case_name(const struct lf_case *c);
enum case_state case_get_state(struct lf_case *c);
const char *case_state_name(enum case_state s);

/* Host side: documents (frozen from registration on).  LF_EINVAL_DOC,
 * LF_FROZEN, LF_CLOSED.  The reason is also kept for `status`. */
enum lf_err case_set_policy(struct lf_case *c, const char *text, size_t len,
			    struct lf_why *why);
enum lf_err case_set_mocks(struct lf_case *c, const char *text, size_t len,
			   struct lf_why *why);
/* The document text as written (malloc'd, may be ""), for reading back. */
char *case_policy_text(struct lf_case *c);
char *case_mocks_text(struct lf_case *c);
/*
 * The tools file (src/tools.h), host side: checked, taken whole, frozen
 * from registration on, recorded in case.json with its hash.  Errors as
 * case_set_policy.  case_tools_text: the file given (malloc'd, "" when
 * none); case_target_tools: what the target's `tools` shows, the file
 * given or else one made from the policy's tool names.
 */
enum lf_err case_set_tools(struct lf_case *c, const char *text, size_t len,
			   struct lf_why *why);
char *case_tools_text(struct lf_case *c);
char *case_target_tools(struct lf_case *c);
/*
 * The case's initial seal key K0, once (ledgerfs-ledger(5) SEALS): only
 * in epoch 0, never again after it was given.  LF_NOT_FOUND otherwise.
 */
enum lf_err case_seal_handout(struct lf_case *c,
			      unsigned char k0[CHAIN_KEY_BYTES],
			      struct lf_why *why);

/* The registration token (64 hex digits + NUL). */
void case_token(struct lf_case *c, char out[CHAIN_HEX_LEN + 1]);

/*
 * Host commands, one per line: "turn", "close", "fail REASON".
 */
enum lf_err case_command(struct lf_case *c, const char *line, size_t len,
			 struct lf_why *why);

/*
 * Target side.  Each takes one line (no newline).  On success of
 * case_call, *reply is a malloc'd reply line ending in '\n'.  Each refusal
 * returns its code, records a bounded `refused` (or
 * `registration_refused`) row and sets the case's `error` text.  The
 * return happens only after the row is durable.
 */
enum lf_err case_register(struct lf_case *c, const char *line, size_t len,
			  struct lf_why *why);
enum lf_err case_call(struct lf_case *c, const char *line, size_t len,
		      char **reply, struct lf_why *why);
enum lf_err case_result(struct lf_case *c, const char *line, size_t len,
			struct lf_why *why);
/*
 * Record a refusal decided outside the parsers (e.g. a line over the
 * limit seen by the view before it was complete).  Returns code, or
 * LF_CLOSED (and records nothing) when the case is closed or failed.
 */
enum lf_err case_refuse(struct lf_case *c, enum case_input in, enum lf_err code,
			const char *reason, const char *input,
			size_t input_len);

/*
 * LF_CLOSED (the reason in `error`, no row) when the case is closed or
 * failed, so a target's write is refused before its line is complete.
 */
enum lf_err case_target_gate(struct lf_case *c, enum case_input in,
			     struct lf_why *why);

/*
 * Bytes the view holds for a case, counted per case so one target cannot
 * take the whole daemon-wide budget (ledgerfs(8) LIMITS): its targets'
 * partial lines, the copies of its target files held open, and (in
 * handles, not bytes) its target's open files and folders.  Charge
 * add bytes unless that passes limit (false: nothing charged); give back
 * n.
 */
enum case_budget { CASE_PENDING_LINES, CASE_OPEN_COPIES, CASE_OPEN_HANDLES };
bool case_charge(struct lf_case *c, enum case_budget b, size_t add,
		 size_t limit);
void case_uncharge(struct lf_case *c, enum case_budget b, size_t n);

/* Views: each returns a malloc'd NUL-terminated text, or NULL. */
char *case_status_json(struct lf_case *c);
char *case_latest_reply(struct lf_case *c);
/* The last refusal: its reason and (in *code) its core code. */
char *case_error_text(struct lf_case *c, enum lf_err *code);
/* Reply for one call id; NULL (and LF_NOT_FOUND) when unknown. */
char *case_reply_for(struct lf_case *c, const char *call_id);

/* calls/: number of recorded calls, and the folder name of the i-th
 * (0-based, attempt order) as "000001-c1" (ledgerfs(8) THE VIEW). */
size_t case_call_count(struct lf_case *c);
int case_call_dirname(struct lf_case *c, size_t i, char *buf, size_t size);
/* replies/: the i-th call's file name; -1 when it has none (too long). */
int case_reply_name(struct lf_case *c, size_t i, char *buf, size_t size);
/* calls/DIR/FILE with FILE in request, decision, result. malloc'd. */
char *case_call_file(struct lf_case *c, const char *dirname, const char *file);

/* Bytes of the ledger file now (for serving `ledger`), and a pread. */
long long case_ledger_size(struct lf_case *c);
long case_ledger_read(struct lf_case *c, char *buf, size_t size, long long off);
void case_ledger_head(struct lf_case *c, struct ledger_head *out);

/* Approximate heap bytes used by the case (for the memory benchmark). */
size_t case_memory(struct lf_case *c);

#endif
