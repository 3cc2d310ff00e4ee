/* SPDX-License-Identifier: MIT */
/*
 * snapshot.c - the text each read-only file of the view shows
 * (ledgerfs(8) THE VIEW), taken whole when the file is opened and when
 * stat asks its size (fh.c).
 */
#include "fh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "case_ckpt.h"

/*
 * K0 as 64 hex digits and a newline, handed out by this open and never
 * again (ledgerfs-ledger(5) SEALS); NULL (ENOENT) once gone.
 */
static char *snapshot_seal_key(struct lf_case *c)
{
	static const char digits[] = "0123456789abcdef";
	unsigned char k0[CHAIN_KEY_BYTES];
	struct lf_why why;
	char *s;
	int i;

	if (case_seal_handout(c, k0, &why) != LF_OK)
		return NULL;
	s = malloc(2 * CHAIN_KEY_BYTES + 2);
	if (s) {
		for (i = 0; i < CHAIN_KEY_BYTES; i++) {
			s[2 * i] = digits[k0[i] >> 4];
			s[2 * i + 1] = digits[k0[i] & 15];
		}
		s[2 * CHAIN_KEY_BYTES] = '\n';
		s[2 * CHAIN_KEY_BYTES + 1] = '\0';
	}
	explicit_bzero(k0, sizeof(k0));
	return s;
}

char *lfs_snapshot(struct node *n)
{
	char tok[CHAIN_HEX_LEN + 2], *s, *t;
	enum lf_err code;

	switch (n->kind) {
	case N_TOKEN:
		case_token(n->c, tok);
		strcat(tok, "\n");
		return strdup(tok);
	case N_STATUS:
		return case_status_json(n->c);
	case N_POLICY:
		return case_policy_text(n->c);
	case N_MOCKS:
		return case_mocks_text(n->c);
	case N_TOOLS:
		return case_tools_text(n->c);
	case N_TARGET_TOOLS:
		return case_target_tools(n->c);
	case N_CHECKPOINT:
		return case_checkpoint_text(n->c);
	case N_SEAL_KEY:
		return snapshot_seal_key(n->c);
	case N_REPLY:
		return case_latest_reply(n->c);
	case N_REPLYFILE:
		return case_reply_for(n->c, n->arg);
	case N_CALLFILE:
		return case_call_file(n->c, n->arg, n->file);
	case N_ERROR:
		s = case_error_text(n->c, &code);
		if (!s || !*s)
			return s;
		if (asprintf(&t, "%s %s\n", lfs_errno_name(lfs_errno(code)),
			     s) < 0)
			t = NULL;
		free(s);
		return t;
	default:
		return strdup("");
	}
}
