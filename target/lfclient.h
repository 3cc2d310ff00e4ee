/* SPDX-License-Identifier: MIT */
/*
 * lfclient.h - the target side of the file protocol (ledgerfs(8)
 * PROTOCOL), shared by every program that runs inside the sandbox:
 * ledgercall, ledgerfs-relay, ledgerfs-mcp.  libc only, no globals, so
 * it links into a static binary and serves concurrent callers.
 */
#ifndef LFCLIENT_H
#define LFCLIENT_H

#include <stddef.h>

/* The longest reply a client reads back (a reply holds a mock's result). */
#define LFC_REPLY_MAX (8u * 1024 * 1024)
/* Longest reason kept from the case's `error` file. */
#define LFC_REASON_MAX 512

/* The decision a reply carries, by its top-level "mode". */
enum lfc_mode {
	LFC_MODE_UNKNOWN = 0,
	LFC_MODE_PASS,
	LFC_MODE_MOCK,
	LFC_MODE_BLOCK,
};

struct lfc {
	char dir[4096]; /* the case's target folder */
};

/*
 * Point c at DIR, or at $LEDGERFS_DIR, or at /mediator.  Returns 0, or
 * ENAMETOOLONG.
 */
int lfc_init(struct lfc *c, const char *dir);

/*
 * Append s to out as a JSON string (quotes and escapes).  Returns 0, or
 * -1 when out (size bytes) is too small.
 */
int lfc_json_str(char *out, size_t size, const char *s);

/* A call id unique to this process and moment: lc-PID-TIME. */
char *lfc_make_id(char *buf, size_t size);

/*
 * Register from LEDGERFS_CASE and LEDGERFS_TOKEN.  Returns 0 (a repeat
 * of a correct registration is accepted by the view), the errno of the
 * write or close, or -1 when the variables are missing or too long.
 */
int lfc_register(const struct lfc *c);

/*
 * Register case_id with token (a server that learns the case from its
 * client, as ledgerfs-relay does).  Returns as lfc_register.
 */
int lfc_register_as(const struct lfc *c, const char *case_id,
		    const char *token);

/* True when LEDGERFS_CASE and LEDGERFS_TOKEN are both set. */
int lfc_have_credentials(void);

/*
 * Write one request line (it must end in a newline) to DIR/request,
 * opened read-write, and read the reply to that call back from the same
 * descriptor.  On 0, *reply is a new NUL-terminated string (the caller
 * frees it) of *len bytes, never empty.  Otherwise returns the errno of
 * the write or close (the reason is in DIR/error, lfc_reason), or EPROTO
 * when no reply came; *reply is then NULL.
 */
int lfc_request(const struct lfc *c, const char *line, char **reply,
		size_t *len);

/*
 * Build and send {"call_id":ID,"tool":TOOL,"args":ARGS}: ARGS is JSON
 * text the daemon checks.  Returns as lfc_request, or -1 when the tool
 * name or id is too long to quote.
 */
int lfc_call(const struct lfc *c, const char *id, const char *tool,
	     const char *args, char **reply, size_t *len);

/* Write one result line to DIR/result.  Returns 0 or the errno. */
int lfc_result_line(const struct lfc *c, const char *line);

/*
 * Build and send {"call_id":ID,"returned":RETURNED,"is_error":..,
 * "real_executed":..}: RETURNED is JSON text.  Returns 0, the errno, or
 * -1 when the id is too long.
 */
int lfc_result(const struct lfc *c, const char *id, const char *returned,
	       int is_error, int real_executed);

/*
 * Read the case's `error` file (the reason for the last refusal) into
 * buf, without its trailing newline.  Returns buf, "" when there is none.
 * The file is the case's: with err > 0 (the errno this client's write
 * got), a reason that names another errno belongs to another write
 * refused meanwhile, and "" is returned; a reason with the same errno is
 * the latest such refusal's, which concurrent writers may share.
 */
char *lfc_reason(const struct lfc *c, int err, char *buf, size_t size);

/*
 * The decision of a reply, from its top-level "mode" (the host writes it
 * right after call_id and sequence, so the first "mode" key is the
 * reply's own, never one inside a returned value).
 */
enum lfc_mode lfc_reply_mode(const char *reply);

/*
 * True when a pass reply says the host ran the tool itself
 * ("result_source":"host_executed", ledgerfs(8) PROTOCOL): its result is
 * in the reply, the target must not run the tool nor write a result.  A
 * pass reply's own returned value is null otherwise, so the key cannot
 * come from inside a value.
 */
int lfc_reply_host_executed(const char *reply);

#endif
