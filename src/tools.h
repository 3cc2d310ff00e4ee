/* SPDX-License-Identifier: MIT */
/*
 * tools.h - the tools file of a case: what the target's `tools` file
 * shows (ledgerfs(8) FILES), in the shape of MCP's tools/list result,
 * {"tools":[{"name":..,"inputSchema":{..}},..]}.  Given at open, or made
 * from the policy's tool names when there is none.
 */
#ifndef LF_TOOLS_H
#define LF_TOOLS_H

#include <jansson.h>
#include <stddef.h>

#include "err.h"

/* The largest tools file taken (as the policy and mocks). */
#define TOOLS_MAX (1024u * 1024)

/*
 * Check a tools file: JSON (not YAML), an object with "tools", an array
 * of objects each with a "name" (a tool name as a call's, ledgerfs(8)
 * PROTOCOL) and, when present, an object "inputSchema".  LF_OK, or
 * LF_EINVAL_DOC with why naming the entry.
 */
enum lf_err tools_check(const char *text, size_t len, struct lf_why *why);

/*
 * The tools file a policy implies: each interaction's `match` that holds
 * no wildcard, once, in rule order, with the schema of an object
 * ({"type":"object"}).  policy_doc is borrowed.  A new string ending in
 * a newline, or NULL when out of memory.
 */
char *tools_from_policy(const json_t *policy_doc);

#endif
