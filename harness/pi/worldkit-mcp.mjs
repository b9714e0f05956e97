// Pi extension: give Pi the run's tools from worldkit's MCP server, and nothing else of worldkit.
//
// Pi 0.73.1 has no MCP client, so this thin one (the official TypeScript MCP SDK) connects to the
// streamable-HTTP URL in $WORLDKIT_MCP_URL, lists the server's tools and registers each with Pi as
// `<$WORLDKIT_MCP_SERVER>_<tool>`, with the server's description and JSON input schema. Every call
// is forwarded to the server unchanged (the run's server logs it); a tool error comes back to the
// model as an error. worldkit loads it with `pi --no-builtin-tools -e worldkit-mcp.mjs`, so these
// are the only tools the model sees.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export default async function worldkitTools(pi) {
  const url = process.env.WORLDKIT_MCP_URL;
  if (!url) {
    throw new Error("worldkit-mcp: WORLDKIT_MCP_URL is not set (worldkit sets it when it starts Pi)");
  }
  const prefix = process.env.WORLDKIT_MCP_SERVER || "organizer";
  const client = new Client({ name: "worldkit-pi", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  for (const tool of tools) {
    pi.registerTool({
      name: `${prefix}_${tool.name}`,
      label: tool.name,
      description: tool.description || tool.name,
      promptSnippet: (tool.description || tool.name).split("\n")[0],
      parameters: tool.inputSchema,
      async execute(_toolCallId, params, signal) {
        const result = await client.callTool({ name: tool.name, arguments: params ?? {} }, undefined, { signal });
        const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
        if (result.isError) {
          throw new Error(text || `${tool.name} failed`);
        }
        return { content: [{ type: "text", text }], details: result.structuredContent ?? {} };
      },
    });
  }
  pi.on("session_shutdown", async () => {
    await client.close();
  });
}
