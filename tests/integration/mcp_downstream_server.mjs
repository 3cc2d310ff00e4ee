// SPDX-License-Identifier: MIT
// mcp_downstream_server.mjs - the real implementation of the passed
// tools in mcp_sdk_client.sh, an MCP stdio server written with the
// official TypeScript SDK: ledgerfs-mcp forwards passed calls to it.
// LF_NODE_MODULES names the node_modules folder holding the SDK.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const sdk = (p) =>
	import(pathToFileURL(join(process.env.LF_NODE_MODULES,
		"@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Server } = await sdk("server/index.js");
const { StdioServerTransport } = await sdk("server/stdio.js");
const { CallToolRequestSchema, ListToolsRequestSchema } = await sdk("types.js");

const server = new Server({ name: "lf-test-tools", version: "1.0.0" },
	{ capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
	tools: [{ name: "lookup_customer", inputSchema: { type: "object" } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
	const { name, arguments: args } = req.params;
	if (name === "lookup_customer") {
		const value = { id: args.id, name: "Ada" };
		return {
			content: [{ type: "text", text: JSON.stringify(value) }],
			structuredContent: value,
		};
	}
	if (name === "lookup_slow") {
		await new Promise((r) => setTimeout(r, Number(args.ms ?? 1500)));
		return { content: [{ type: "text", text: "slow done" }] };
	}
	return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
});
await server.connect(new StdioServerTransport());
