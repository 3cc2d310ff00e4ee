/* SPDX-License-Identifier: MIT */
/*
 * journal.h - the commit journal (ledgerfs(8) --sync=journal): the rows
 * of every case written, besides their ledgers, to one file of fixed size
 * filled with zeros ahead, so that one fdatasync makes a batch of rows of
 * many ledgers durable without a journal commit of the file system.  The
 * ledgers are flushed only when the journal is full (one syncfs, then it
 * starts again); after a crash, the next start writes the journal's rows
 * back into their ledgers before any case loads.
 */
#ifndef LF_JOURNAL_H
#define LF_JOURNAL_H

#include <stddef.h>

#include "err.h"

#define JOURNAL_FILE	     "commit.journal" /* in the backing folder */
#define JOURNAL_SIZE_DEFAULT (64ull << 20)
#define JOURNAL_SIZE_MIN     (256ull << 10)
#define JOURNAL_SIZE_MAX     (1ull << 30)

/* journal_write's answer when the rows do not fit in what is left. */
#define JOURNAL_FULL (-1)

struct journal;

/* One row: its case, where it starts in the ledger, the line and '\n'. */
struct journal_row {
	const char *case_id;
	long long offset;
	const char *line;
	size_t n;
};

/* What a start found in the journal (journal_recover). */
struct journal_report {
	unsigned long long rows;    /* entries of the last generation */
	unsigned long long written; /* written back into their ledgers */
	unsigned long long skipped; /* no such ledger, or not its next row */
	unsigned long long gen;	    /* that generation (0: no journal) */
	char skip_reason[384];	    /* the first skip's reason */
};

/*
 * Write the rows of BACKING/commit.journal's last generation back into
 * cases/NAME/ledger.jsonl wherever a ledger lacks them (a crash before
 * the ledger's own pages reached the disk), then make the ledgers
 * durable (syncfs).  A row is written only where its ledger holds the
 * line its prev names, ending right before it.  No journal: nothing.
 */
enum lf_err journal_recover(int backing_fd, struct journal_report *rep,
			    struct lf_why *why);

/*
 * Open the journal for writing (created, or grown, to size bytes of
 * flushed zeros), its generation after gen: from its start, a marker
 * that ends the previous generation.
 */
enum lf_err journal_open(int backing_fd, unsigned long long size,
			 unsigned long long gen, struct journal **out,
			 struct lf_why *why);
void journal_close(struct journal *j);

/*
 * Append a batch of rows (none: flush only) and fdatasync: 0, an errno
 * value, or
 * JOURNAL_FULL when they do not fit (then nothing was written: the caller
 * makes every ledger durable itself and calls journal_restart).
 */
int journal_write(struct journal *j, const struct journal_row *rows, size_t n);

/*
 * Start a new generation from the file's start: every row of the old
 * one must be durable in its ledger already.  0 or an errno value.
 */
int journal_restart(struct journal *j);

/* Remove the journal (a start without --sync=journal, after recovery). */
int journal_remove(int backing_fd);

#endif
