// SPDX-License-Identifier: MIT
// mcp_sdk_client.mjs - drives ledgerfs-mcp with the official MCP
// TypeScript SDK client over stdio: list tools, a passed call (forwarded
// to mcp_downstream_server.mjs), a mocked and a blocked call, ping while
// a call waits, cancellation.  Prints `ok - NAME` / `not ok - NAME: why`
// and, last, `calls {...}`: the call ids the shell checks in the ledger.
// Environment: LF_NODE_MODULES, LF_MCP (the server binary), LF_DIR (the
// case's target folder), LEDGERFS_CASE, LEDGERFS_TOKEN.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const sdk = (p) =>
	import(pathToFileURL(join(process.env.LF_NODE_MODULES,
		"@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const here = dirname(fileURLToPath(import.meta.url));
let failed = 0;
const ok = (name) => console.log(`ok - ${name}`);
const notOk = (name, why) => {
	failed++;
	console.log(`not ok - ${name}: ${why}`);
};
const check = (name, cond, detail) => (cond ? ok(name) : notOk(name, JSON.stringify(detail)));

const transport = new StdioClientTransport({
	command: process.env.LF_MCP,
	args: [`--dir=${process.env.LF_DIR}`, "--", process.execPath,
		join(here, "mcp_downstream_server.mjs")],
	env: { ...process.env },
	stderr: "inherit",
});
let negotiated;
transport.setProtocolVersion = (v) => { negotiated = v; };
const client = new Client({ name: "ledgerfs-sdk-test", version: "1.0.0" });
await client.connect(transport);

// The SDK client asks for its latest revision; the server answers with it.
check("the_server_answers_with_the_sdk_client_revision",
	negotiated === "2025-11-25" && client.getServerVersion()?.name === "ledgerfs-mcp",
	{ negotiated, server: client.getServerVersion() });

const { tools } = await client.listTools();
const lookup = tools.find((t) => t.name === "lookup_customer");
check("tools_list_shows_the_tools_file_given_at_open",
	tools.map((t) => t.name).join(",") === "lookup_customer,send_email,delete_account" &&
		lookup?.inputSchema?.properties?.id?.type === "integer",
	tools);

const passed = await client.callTool({ name: "lookup_customer", arguments: { id: 42 } });
check("a_passed_call_returns_the_downstream_result",
	!passed.isError && passed.structuredContent?.name === "Ada" &&
		passed.content?.[0]?.text === '{"id":42,"name":"Ada"}',
	passed);

const mocked = await client.callTool({ name: "send_email", arguments: { to: "a@b" } });
check("a_mocked_call_returns_the_host_result_as_text_and_structured_content",
	!mocked.isError && mocked.structuredContent?.status === "sent" &&
		JSON.parse(mocked.content[0].text).status === "sent",
	mocked);

const blocked = await client.callTool({ name: "delete_account", arguments: {} });
// delete_account declares an outputSchema: the SDK checks any
// structuredContent against it, so a block must carry none.
check("a_blocked_call_is_a_tool_error_carrying_the_host_reason",
	blocked.isError === true &&
		blocked.content?.[0]?.text?.includes("blocked by mediation policy rule"),
	blocked);

// ping answered while a passed call waits downstream
let callDone = 0, pingDone = 0;
const slow = client.callTool({ name: "lookup_slow", arguments: { ms: 1500 } })
	.then((r) => { callDone = Date.now(); return r; });
await new Promise((r) => setTimeout(r, 200));
await client.ping();
pingDone = Date.now();
const slowResult = await slow;
check("ping_is_answered_while_a_call_waits",
	pingDone < callDone && slowResult.content?.[0]?.text === "slow done",
	{ pingDone, callDone, slowResult });

// cancellation: the SDK sends notifications/cancelled on abort
const ac = new AbortController();
const cancelled = client.callTool({ name: "lookup_slow", arguments: { ms: 3000 } },
	undefined, { signal: ac.signal }).then(() => "resolved", (e) => `rejected: ${e}`);
await new Promise((r) => setTimeout(r, 300));
ac.abort("test cancels");
const outcome = await cancelled;
const after = await client.callTool({ name: "send_email", arguments: { to: "c@d" } });
check("a_cancelled_call_leaves_the_server_serving",
	outcome.startsWith("rejected") && after.structuredContent?.status === "sent",
	{ outcome, after });

await client.close();
console.log(`sdk_failed ${failed}`);
process.exit(failed ? 1 : 0);
