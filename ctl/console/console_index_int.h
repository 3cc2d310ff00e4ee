/* SPDX-License-Identifier: MIT */
/*
 * console_index_int.h - what the index (console_index.c) shares with its
 * JSON views (console_api.c): the per-case records and how to take a
 * refreshed, locked case.  Not for the rest of the console.
 */
#ifndef LF_CONSOLE_INDEX_INT_H
#define LF_CONSOLE_INDEX_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "console_index.h"

#define CX_NAME_MAX   128
#define CX_CHUNK      ((size_t)1 << 20)
#define CX_LINE_MAX   ((size_t)64 << 20)
#define CX_STATUS_MAX ((size_t)1 << 20)
/*
 * Ledger bytes one refresh takes at most: a long ledger seen for the
 * first time is read over several requests (the event stream drives
 * them), so no request waits for all of it; verify says "checking".
 */
#define CX_REFRESH_BUDGET ((long long)4 << 20)

enum cx_mode { CX_PASS, CX_MOCK, CX_BLOCK, CX_OTHER };

struct cx_call {
	uint32_t decision_row;
	uint32_t end_row; /* its completion or completion_missing row, or 0 */
	uint32_t turn;
	uint8_t mode;
	double t;
};

struct cx_case {
	char name[CX_NAME_MAX + 1];
	pthread_mutex_t lock;
	long long off;	    /* ledger bytes taken (whole lines) */
	long long *row_off; /* where row i+1 starts */
	size_t rows, row_cap;
	char prev[CHAIN_HEX_LEN + 1]; /* SHA-256 of the last line taken */
	char bad[256];		      /* the first fault; "" while good */
	bool mac_check;		      /* MACs are being checked */
	char mac_note[160];
	unsigned char case_key[CHAIN_KEY_BYTES];
	char ledger_fp[24]; /* key_fingerprint of case_opened, if any */
	struct cx_call *calls;
	size_t ncalls, call_cap;
	double first_t, last_t;
	char first_time[32], last_time[32];
	json_t *status;
	unsigned long long status_rows;
	char status_head[CHAIN_HEX_LEN + 1];
	bool status_matched; /* the chain reached status_rows and agreed */
	char *scratch;	     /* a line without its mac, during a refresh */
	size_t scratch_cap;
};

struct cx {
	char *mount;
	bool have_key;
	unsigned char key[CHAIN_KEY_BYTES];
	char key_fp[17];
	pthread_mutex_t lock; /* the array below */
	struct cx_case **cases;
	size_t n, cap;
};

/* c refreshed and locked, or NULL (no such case).  Unlock when done. */
struct cx_case *cx_take(struct cx *x, const char *name);

/* The case names of the view, sorted.  *n set; NULL on failure. */
char **cx_list_names(struct cx *x, size_t *n);
void cx_free_names(char **names, size_t n);

/* The view's case folder, opened read-only, or -1. */
int cx_case_dir(const struct cx *x, const char *name);

#endif
