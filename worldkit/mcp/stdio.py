"""Serve an MCP server over stdio without a thread hop per message.

The SDK's stdio transport reads and writes through `anyio.wrap_file`, which sends every line
read, every write and every flush to a worker thread. Here stdin and stdout are event-loop pipes
(asyncio's `connect_read_pipe` / `connect_write_pipe`) handed to the SDK's own `stdio_server`, so
framing and parsing stay the SDK's. As in the SDK, fd 0 is pointed at the null device and fd 1 at
stderr while serving, so stray output cannot corrupt the wire. When stdin or stdout is not a pipe,
socket or terminal (e.g. a regular file), it falls back to the SDK transport.
"""

from __future__ import annotations

import asyncio
import gc
import os
import stat
from typing import Any

import anyio

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

__all__ = ["run_stdio"]

_LINE_LIMIT = 1 << 26  # one JSON-RPC message per line; 64 MiB is far beyond any tool call


class _Lines:
    """`async for line in stdin` over an asyncio StreamReader."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class _Output:
    """`await write(text)` / `await flush()` over an asyncio StreamWriter."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


async def _serve(server: MCPServer) -> None:
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        lowlevel: Any = server._lowlevel_server  # noqa: SLF001 - what MCPServer.run_stdio_async runs
        async with stdio_server(_Lines(reader), _Output(writer)) as (read_stream, write_stream):  # type: ignore[arg-type]
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        writer.close()
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def run_stdio(server: MCPServer) -> None:
    """Serve `server` on this process's stdin/stdout until the client closes stdin."""
    # Everything loaded so far (projection, index, libraries) lives for the whole session: keep it
    # out of the collector's scans, which otherwise add latency spikes to calls.
    gc.collect()
    gc.freeze()
    if not (_pipe_like(0) and _pipe_like(1)):
        server.run("stdio")
        return
    # anyio.run, not asyncio.run: it records that the loop is asyncio, so each of the SDK's
    # anyio calls (several per message) skips sniffing for the running library.
    anyio.run(_serve, server)
