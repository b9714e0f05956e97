// A non-Python MCP client: spawns `python -m worldkit serve … --transport stdio` with the
// TypeScript SDK, lists the tools, lists and reads a file, tries a refused read, prints JSON.
// Usage: node client.mjs PYTHON [serve arguments…]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [python, ...serveArgs] = process.argv.slice(2);
if (!python) {
  console.error("usage: node client.mjs PYTHON [worldkit serve arguments…]");
  process.exit(2);
}

const transport = new StdioClientTransport({
  command: python,
  args: ["-m", "worldkit", "serve", ...serveArgs, "--transport", "stdio"],
  env: { ...process.env },
  stderr: "inherit",
});
const client = new Client({ name: "worldkit-node-test", version: "1.0.0" });
await client.connect(transport);

const tools = (await client.listTools()).tools;
const listed = await client.callTool({ name: "list_files", arguments: { limit: 500 } });
const files = listed.structuredContent.entries.map((entry) => entry.path);
const read = await client.callTool({ name: "read_file", arguments: { path: files[0], length: 200 } });
const refused = await client.callTool({ name: "read_file", arguments: { path: "../manifest.json" } });

console.log(
  JSON.stringify({
    server: client.getServerVersion(),
    tools: tools.map((tool) => ({
      name: tool.name,
      readOnlyHint: tool.annotations?.readOnlyHint ?? null,
      hasOutputSchema: Boolean(tool.outputSchema),
    })),
    files,
    read: read.structuredContent,
    refused: { isError: refused.isError === true, text: refused.content.map((c) => c.text).join(" ") },
  }),
);
await client.close();
