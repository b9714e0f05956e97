"""A run's `ToolSession` served over MCP streamable HTTP on 127.0.0.1, for harness processes.

The bridge lists exactly the session's tools (names, descriptions, input schemas) and forwards
each call to the session, so the run's server — which logs every call — stays the only one that
acts. It listens on a port the kernel picks, only on the loopback interface, with the SDK's DNS
rebinding protection, and stops when the block ends.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from worldkit.agents.session import ToolSession

__all__ = ["serve_tools"]


@asynccontextmanager
async def serve_tools(tools: ToolSession, *, instructions: str | None = None) -> AsyncIterator[str]:
    """Serve `tools` while the block runs; yields the MCP URL (`http://127.0.0.1:PORT/mcp`)."""
    import uvicorn

    listing = await tools.list_tools()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.input_schema) for t in listing
        ])  # fmt: skip

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        outcome = await tools.call(params.name, dict(params.arguments or {}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=outcome.structured, is_error=outcome.is_error,
        )  # fmt: skip

    server: Server[Any] = Server("worldkit-tools", instructions=instructions, on_list_tools=list_tools,
                                 on_call_tool=call_tool)  # fmt: skip
    app = server.streamable_http_app(json_response=True)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    web = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [listener])
            with anyio.fail_after(30):
                while not web.started:
                    await anyio.sleep(0.01)
            try:
                yield f"http://127.0.0.1:{port}/mcp"
            finally:
                web.should_exit = True
    finally:
        listener.close()
