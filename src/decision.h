/* SPDX-License-Identifier: MIT */
/*
 * decision.h - a decision row's evidence fields and the reply built from
 * it (ledgerfs(8) PROTOCOL, ledgerfs-ledger(5) CALL ROWS).  One home for
 * these rules, used by the daemon's call path and by anything else that
 * must decide exactly as it does.
 */
#ifndef LF_DECISION_H
#define LF_DECISION_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "mocks.h"
#include "policy.h"

/*
 * Decide tool/args under policy p and library m (may be NULL), advancing
 * st, and set on row (borrowed): mode, matched, reason, policy_rule,
 * policy_note, and the result fields of that mode (a pass is pending; a
 * mock or block carries the host's result).  *mode receives the mode.
 */
enum lf_err decision_fill(const struct policy *p, const struct mocks *m,
			  struct mocks_state *st, const char *case_id,
			  const char *tool, const json_t *args, json_t *row,
			  enum lf_mode *mode, struct lf_why *why);

/*
 * decision_fill with fit from mocks_fit for this call (NULL: matched
 * here, on a fresh budget).  Whatever the patterns cost was paid by
 * mocks_fit, which needs no lock; this part only reads and moves st.
 */
enum lf_err decision_fill_fit(const struct policy *p, const struct mocks *m,
			      struct mocks_state *st, const char *case_id,
			      const char *tool, const json_t *args,
			      const struct mocks_fit *fit, json_t *row,
			      enum lf_mode *mode, struct lf_why *why);

/*
 * The fields of a result the host produced (mock or block): returned
 * (stolen), is_error, not executed, host_mediator, authoritative.
 */
void decision_host_result(json_t *row, json_t *returned, bool is_error);

/* The reply line for a decision row: malloc'd, ends in '\n'. */
char *decision_reply(const json_t *row);

/* s (malloc'd, may be NULL) with a newline appended; frees s on failure. */
char *decision_add_newline(char *s);

#endif
