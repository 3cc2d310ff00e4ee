/* SPDX-License-Identifier: MIT */
/*
 * evidence.h - fold a case's verified ledger rows into host action events
 * (ledgerctl(1) COMMANDS, evidence): one event per call, in attempt order,
 * in its final state, with the authority of each fact spelled out.
 */
#ifndef LF_EVIDENCE_H
#define LF_EVIDENCE_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"

/*
 * Fold rows (a JSON array of ledger rows, borrowed, in ledger order, as a
 * verified ledger gives them) into a new array of events.  turn: 0 for
 * every turn, else only calls whose decision row carries that turn.
 *
 * Each event: call_id, sequence, tool, args, mode, matched, reason,
 * policy_rule, policy_note (if any), turn, returned, is_error,
 * real_executed, execution_status, result_source, completion_status, the
 * mock provenance present on the decision (mock_source, mock_rule,
 * mock_step, scenario, scenario_state), over_limit (if set),
 * evidence_source "host_mediator", attempt_authoritative true,
 * decision_authoritative true, result_authoritative (true only when
 * result_source is "host_mediator"), decision_row and result_row (the row
 * holding the result: the decision row itself for mock/block, the
 * completion or completion_missing row for pass, null while pending).
 *
 * Rows that contradict each other (a second decision for one call id, a
 * completion for a call never decided, a row without its fields) are
 * LF_VERIFY with the row named.  *out: new reference, NULL on failure.
 */
enum lf_err evidence_fold(const json_t *rows, unsigned long turn, json_t **out,
			  struct lf_why *why);

/*
 * The same fold a row at a time, as a ledger scan hands rows over, so no
 * caller holds every row of a large ledger: new (NULL: no memory), a row
 * (LF_VERIFY as above), end (*out: new reference; the folder is left
 * to free), free.
 */
struct evidence_folder;
struct evidence_folder *evidence_folder_new(void);
enum lf_err evidence_folder_row(struct evidence_folder *f, const json_t *row,
				struct lf_why *why);
enum lf_err evidence_folder_end(struct evidence_folder *f, unsigned long turn,
				json_t **out, struct lf_why *why);
void evidence_folder_free(struct evidence_folder *f);
/*
 * Instead of evidence_folder_end: write the events to out as
 * json_dumpf(events, flags) would (flags: JSON_INDENT, JSON_SORT_KEYS),
 * one event in memory at a time.  LF_IO when out takes no more.
 */
enum lf_err evidence_folder_write(struct evidence_folder *f, unsigned long turn,
				  size_t flags, FILE *out, struct lf_why *why);
/*
 * The evidence document (ledgerctl(1) evidence, and export's
 * evidence.json, byte for byte): evidence_folder_write with two spaces
 * of indentation, then a newline.
 */
enum lf_err evidence_folder_print(struct evidence_folder *f, unsigned long turn,
				  FILE *out, struct lf_why *why);
/*
 * A ledger_row_cb (ledger.h) folding each row into ctx, a folder: a row
 * it refuses stops the scan, and evidence_folder_why says why (NULL when
 * no row was refused).
 */
int evidence_folder_cb(void *ctx, const json_t *row, long long off, size_t len);
const char *evidence_folder_why(const struct evidence_folder *f);

/* Find the event with call_id in events (borrowed).  Borrowed or NULL. */
json_t *evidence_find(const json_t *events, const char *call_id);

#endif
