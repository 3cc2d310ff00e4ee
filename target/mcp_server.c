/* SPDX-License-Identifier: MIT */
/*
 * mcp_server.c - ledgerfs-mcp's JSON-RPC side (ledgerfs-mcp(1)
 * PROTOCOL): read lines, answer initialize, ping, tools/list, hand
 * tools/call to its own thread, act on cancellation, and answer every
 * malformed message with its JSON-RPC error.  Apart from main, so the
 * fuzz harness drives exactly what the program runs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"

/* Newest first: the answer when the client asks for one we lack. */
static const char *const mcp_versions[] = {"2025-11-25", "2025-06-18"};

static void reply(struct mcp_server *s, json_t *msg)
{
	if (msg)
		mcp_send(s->out_fd, &s->out_lock, msg);
	json_decref(msg);
}

static json_t *result_of(const json_t *id, json_t *result)
{
	return json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
			 "result", result);
}

static json_t *do_initialize(const json_t *id, const json_t *params)
{
	const char *want =
		json_string_value(json_object_get(params, "protocolVersion"));
	const char *version = mcp_versions[0];
	size_t i;

	if (!json_is_object(params) || !want)
		return mcp_error(id, -32602,
				 "initialize: params.protocolVersion required");
	for (i = 0; i < sizeof(mcp_versions) / sizeof(mcp_versions[0]); i++)
		if (strcmp(want, mcp_versions[i]) == 0)
			version = mcp_versions[i];
	return result_of(
		id, json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}",
			      "protocolVersion", version, "capabilities",
			      "tools", "listChanged", 0, "serverInfo", "name",
			      "ledgerfs-mcp", "version", LEDGERFS_VERSION,
			      "instructions",
			      "Every tool call is decided and recorded by the "
			      "evaluation host (ledgerfs)."));
}

/* tools/list: the case's target/tools, as the host wrote it. */
static json_t *do_tools_list(struct mcp_server *s, const json_t *id)
{
	char path[4200], why[160];
	struct mcp_reader r;
	json_t *doc = NULL, *out, *tool;
	char *all = NULL, *line;
	size_t i;
	size_t len, total = 0;
	enum mcp_read got;
	int fd;

	snprintf(path, sizeof(path), "%s/tools", s->lc.dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mcp_error(id, -32603, "cannot read the case's tools");
	/* The file may span lines: read them all, bounded. */
	mcp_reader_init(&r, fd);
	while ((got = mcp_read_line(&r, &line, &len)) == MCP_LINE) {
		char *t;

		if (total + len + 1 > MCP_LINE_MAX ||
		    !(t = realloc(all, total + len + 2)))
			break;
		all = t;
		memcpy(all + total, line, len);
		total += len;
		all[total++] = '\n';
	}
	mcp_reader_free(&r);
	close(fd);
	if (got == MCP_EOF && all)
		doc = mcp_parse(all, total, why, sizeof(why));
	free(all);
	if (!json_is_array(json_object_get(doc, "tools"))) {
		json_decref(doc);
		return mcp_error(id, -32603, "the case's tools are unreadable");
	}
	/* MCP requires an inputSchema; a tool listed without one takes none. */
	json_array_foreach(json_object_get(doc, "tools"), i, tool)
	{
		if (json_is_object(tool) &&
		    !json_object_get(tool, "inputSchema"))
			json_object_set_new(
				tool, "inputSchema",
				json_pack("{s:s}", "type", "object"));
	}
	out = result_of(
		id, json_pack("{s:O}", "tools", json_object_get(doc, "tools")));
	json_decref(doc);
	return out;
}

static json_t *do_tools_call(struct mcp_server *s, json_t *id,
			     const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");

	if (!json_is_object(params) || !name || !*name)
		return mcp_error(id, -32602,
				 "tools/call: params.name required");
	/* Not a name any case takes, and C would cut it at the NUL. */
	if (strlen(name) != json_string_length(json_object_get(params, "name")))
		return mcp_error(id, -32602,
				 "tools/call: params.name holds \\u0000");
	if (args && !json_is_object(args) && !json_is_null(args))
		return mcp_error(id, -32602,
				 "tools/call: params.arguments must be an "
				 "object");
	if (mcp_call_start(s, id, name, json_is_object(args) ? args : NULL))
		return mcp_error(id, -32603, "cannot start the call");
	return NULL; /* its thread answers */
}

/* A valid JSON-RPC id for a request: a string or an integer. */
static int id_ok(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

void mcp_handle(struct mcp_server *s, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	json_t *params = json_object_get(msg, "params");
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *ver = json_string_value(json_object_get(msg, "jsonrpc"));

	if (!json_is_object(msg)) {
		reply(s,
		      mcp_error(NULL, -32600,
				json_is_array(msg) ? "batches are not supported"
						   : "not a JSON-RPC object"));
		return;
	}
	if (!method &&
	    (json_object_get(msg, "result") || json_object_get(msg, "error")))
		return; /* a response; this server sends no requests */
	if (!ver || strcmp(ver, "2.0") != 0 || !method || (id && !id_ok(id))) {
		reply(s, mcp_error(id_ok(id) ? id : NULL, -32600,
				   "invalid JSON-RPC request"));
		return;
	}
	if (params && !json_is_object(params) && !json_is_array(params)) {
		if (id)
			reply(s, mcp_error(id, -32602,
					   "params must be an object"));
		return;
	}
	if (!id) {
		/* Notifications get no response; cancel is the one acted on. */
		if (strcmp(method, "notifications/cancelled") == 0 &&
		    id_ok(json_object_get(params, "requestId")))
			mcp_call_cancel(s,
					json_object_get(params, "requestId"));
		return;
	}
	if (strcmp(method, "initialize") == 0)
		reply(s, do_initialize(id, params));
	else if (strcmp(method, "ping") == 0)
		reply(s, result_of(id, json_object()));
	else if (strcmp(method, "tools/list") == 0)
		reply(s, do_tools_list(s, id));
	else if (strcmp(method, "tools/call") == 0)
		reply(s, do_tools_call(s, id, params));
	else
		reply(s, mcp_error(id, -32601, "method not found"));
}

void mcp_serve(struct mcp_server *s, int fd)
{
	struct mcp_reader r;
	char *line, why[160], msg[200];
	size_t len;
	enum mcp_read got;

	mcp_reader_init(&r, fd);
	while ((got = mcp_read_line(&r, &line, &len)) != MCP_EOF) {
		json_t *m;

		if (got == MCP_TOO_LONG) {
			reply(s, mcp_error(NULL, -32700,
					   "parse error: line over the limit"));
			continue;
		}
		if (strspn(line, " \t\r") == len)
			continue;
		m = mcp_parse(line, len, why, sizeof(why));
		if (!m) {
			snprintf(msg, sizeof(msg), "parse error: %s", why);
			reply(s, mcp_error(NULL, -32700, msg));
			continue;
		}
		mcp_handle(s, m);
		json_decref(m);
	}
	mcp_reader_free(&r);
}
