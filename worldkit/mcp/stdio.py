"""Serve an MCP server over stdio with no thread and no extra task between the pipe and the server.

The SDK's `stdio_server` reads and writes through `anyio.wrap_file` (a worker-thread hop for every
line read, every write and every flush) and couples the pipe to the server through two more tasks
and memory streams. Here the pipes are event-loop transports, and the two streams the SDK's
`Server.run` consumes (its `ReadStream` / `WriteStream` protocols) sit directly on them:

- read: the pipe's bytes are split into lines as they arrive; each line is screened
  (`worldkit.mcp.jsonrpc_screen`: a line the SDK would leave unanswered gets a JSON-RPC error and
  a log line, and never reaches the server), then parsed exactly as the SDK's transport parses it
  (`jsonrpc_message_adapter.validate_json`);
- write: a message is serialized as the SDK serializes it (one JSON line) and written to the pipe
  at once, one write per message, from the task that answers the request — so the answer leaves
  before that task's bookkeeping, and concurrent answers never interleave.

The protocol is the SDK's own (`Server.run`: handshake, eras, errors, cancellation); only the
transport underneath changes. A stop signal (SIGINT, SIGTERM) is taken as the end of input: the
lines already read are answered and the server ends as at EOF, in the event loop's own order, so
the caller seals its log after the last answer; a second signal ends the process at once. As in
the SDK, fd 0 is pointed at the null device and fd 1 at
stderr while serving, so stray output cannot corrupt the wire. When stdin or stdout is not a
pipe, socket or terminal (e.g. a regular file), the SDK's own transport serves.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import os
import selectors
import signal
import stat
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from worldkit._process import freeze_process
from worldkit.mcp.jsonrpc_screen import INVALID_REQUEST, Refusal, screen, unparsed

__all__ = ["STOP_SIGNALS", "PipeReadStream", "PipeWriteStream", "run_stdio", "serve_pipes"]

LINE_LIMIT = 1 << 26
"""Longest line accepted (64 MiB: far beyond any tool call); a longer one becomes an error item."""

_PENDING_LINES = 64
"""Parsed-but-unconsumed lines before reading pauses (the client then waits on a full pipe)."""


class _LineProtocol(asyncio.Protocol):
    """Splits the read pipe's bytes into complete lines, in the event loop's read callback."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.lines: collections.deque[bytes | Exception] = collections.deque()
        self.buffer = bytearray()
        self.skipping = False  # inside an over-long line: drop bytes until its newline
        self.eof = False
        self.waiter: asyncio.Future[None] | None = None
        self.transport: asyncio.ReadTransport | None = None
        self.paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buffer = self.buffer
        scan = len(buffer)  # the buffer holds no newline: look only at what came
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", scan)) >= 0:
            if self.skipping:
                self.skipping = False
            elif end + 1 - start > self.limit:
                self.lines.append(self._too_long())
            else:
                self.lines.append(bytes(buffer[start : end + 1]))
            start = scan = end + 1
        del buffer[:start]
        if len(buffer) > self.limit:
            if not self.skipping:
                self.lines.append(self._too_long())
                self.skipping = True
            buffer.clear()
        if len(self.lines) >= _PENDING_LINES and self.transport is not None and not self.paused:
            self.transport.pause_reading()
            self.paused = True
        self._wake()

    def _too_long(self) -> ValueError:
        return ValueError(f"a message line is longer than {self.limit} bytes; it was skipped")

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def end(self) -> None:
        """No more input (a stop signal): the lines read are still handed out; a line not complete yet
        is dropped, and nothing more is read."""
        self.buffer.clear()
        if self.transport is not None and not self.paused:
            self.transport.pause_reading()
            self.paused = True
        self._finish()

    def taken(self) -> None:
        """A line was consumed: resume reading once the backlog is small again."""
        if self.paused and not self.eof and len(self.lines) < _PENDING_LINES // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    def _finish(self) -> None:
        if not self.eof:
            self.eof = True
            if self.buffer and not self.skipping:  # a last line without its newline, as a file reader yields it
                self.lines.append(bytes(self.buffer))
            self.buffer.clear()
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class PipeReadStream:
    """The server's read stream over a read pipe: one item per line, a message or the parse error.

    Items are parsed as the SDK's stdio transport parses them. Ends at EOF (`EndOfStream`); after
    `aclose`, `receive` raises `ClosedResourceError`.
    """

    def __init__(self, protocol: _LineProtocol, refuse: Callable[[Refusal], None] | None = None) -> None:
        self._protocol = protocol
        self._closed = False
        self._refuse = refuse

    async def receive(self) -> SessionMessage | Exception:
        while True:
            line = await self._next_line()
            if isinstance(line, Exception):
                if self._refuse is None:
                    return line
                self._refuse(Refusal(INVALID_REQUEST, f"Invalid Request: {line}", None))
                continue
            if self._refuse is None:
                return self._parse(line)
            if not line.strip():
                continue  # a blank line is no message: nothing to answer
            refusal = screen(line)
            if refusal is None:
                parsed = self._parse(line)
                if not isinstance(parsed, Exception):
                    return parsed
                refusal = unparsed(line, parsed)  # the SDK's own parser refused it: answer, never drop
            self._refuse(refusal)

    async def _next_line(self) -> bytes | Exception:
        protocol = self._protocol
        while not protocol.lines:
            if self._closed:
                raise anyio.ClosedResourceError
            if protocol.eof:
                raise anyio.EndOfStream
            waiter = asyncio.get_running_loop().create_future()
            protocol.waiter = waiter
            try:
                await waiter
            finally:
                protocol.waiter = None
        if self._closed:
            raise anyio.ClosedResourceError
        line = protocol.lines.popleft()
        protocol.taken()
        return line

    @staticmethod
    def _parse(line: bytes) -> SessionMessage | Exception:
        try:
            # As the SDK's stdin reader: UTF-8 with replacement, then the JSON-RPC message adapter.
            return SessionMessage(jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False))
        except Exception as exc:  # noqa: BLE001 - the SDK hands any parse failure to the server as an item
            return exc

    def __aiter__(self) -> PipeReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._closed = True
        self._protocol._wake()  # noqa: SLF001 - a waiting receive sees the close

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> PipeReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()


class PipeWriteStream:
    """The server's write stream over a write pipe: each message one JSON line, written at once.

    Serialized as the SDK's stdio transport serializes (`model_dump_json(by_alias=True,
    exclude_unset=True)`, UTF-8). `send` waits only when the pipe's buffer is over its high-water
    mark (a client not reading). A lost pipe raises `BrokenResourceError`; after `aclose`,
    `ClosedResourceError`.
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._closed = False

    async def send(self, item: SessionMessage, /) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        writer = self._writer
        if writer.transport.is_closing():
            raise anyio.BrokenResourceError
        line = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        writer.write(line.encode("utf-8"))
        if writer.transport.get_write_buffer_size():
            try:
                await writer.drain()
            except ConnectionError as error:
                raise anyio.BrokenResourceError from error

    def refuse(self, refusal: Refusal) -> None:
        """Answer a refused line with its JSON-RPC error (none for a notification), and log it."""
        refusal.log()
        if refusal.silent or self._closed or self._writer.transport.is_closing():
            return
        self._writer.write(refusal.answer())

    async def flush(self) -> None:
        """Wait until everything sent has reached the pipe (or the pipe is gone)."""
        transport = self._writer.transport
        if transport.is_closing() or not transport.get_write_buffer_size():
            return
        transport.set_write_buffer_limits(high=0)  # drain now waits for an empty buffer
        try:
            await self._writer.drain()
        except ConnectionError:
            pass

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> PipeWriteStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc_val: BaseException | None, exc_tb: TracebackType | None
    ) -> None:
        await self.aclose()


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals `run_stdio` takes as the end of input."""


async def serve_pipes(
    server: MCPServer,
    fd_in: int,
    fd_out: int,
    *,
    line_limit: int = LINE_LIMIT,
    stop_on: Sequence[int] = (),
    screen_lines: bool = True,
) -> int | None:
    """Serve `server` on the pipes `fd_in` (requests) and `fd_out` (answers) until EOF on `fd_in`, or
    until one of the signals `stop_on` (this must be the main thread) arrives: then the lines already
    read are answered, the server ends as at EOF, and the signal's number is returned; a second one
    raises `SystemExit(128 + N)` at once. The signals' handlers are put back as they were.

    Every line is screened first (`worldkit.mcp.jsonrpc_screen`): a line the SDK would drop
    unanswered (not JSON, a batch, an id that is null or an object, …) is answered with a JSON-RPC
    error and logged, never run; `screen_lines=False` hands every line to the SDK as it is.

    Both descriptors are taken over (closed on return); their open files are left in the blocking
    mode they had.
    """
    loop = asyncio.get_running_loop()
    stopped: list[int] = []
    previous: dict[int, Any] = {}
    # The loop makes both descriptions non-blocking and closes the descriptors itself (at EOF, say):
    # duplicates, kept to the end, are where their blocking mode is put back.
    kept = [(os.dup(fd), os.get_blocking(fd)) for fd in (fd_in, fd_out)]
    transports: list[asyncio.BaseTransport] = []
    try:
        protocol = _LineProtocol(line_limit)

        def stop(signum: int) -> None:
            if stopped:
                raise SystemExit(128 + signum)
            stopped.append(signum)
            protocol.end()

        for signum in stop_on:
            handler = signal.getsignal(signum)
            loop.add_signal_handler(signum, stop, signum)
            previous[signum] = handler
        read_transport, _ = await loop.connect_read_pipe(lambda: protocol, os.fdopen(fd_in, "rb", buffering=0))
        transports.append(read_transport)
        write_transport, write_protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", buffering=0)
        )
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)  # type: ignore[arg-type]
        write_stream = PipeWriteStream(writer)
        read_stream = PipeReadStream(protocol, refuse=write_stream.refuse if screen_lines else None)
        lowlevel: Any = server._lowlevel_server  # noqa: SLF001 - what MCPServer.run_stdio_async runs
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        await write_stream.flush()
    finally:
        for signum, handler in previous.items():
            loop.remove_signal_handler(signum)
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        for transport in transports:
            transport.close()
        for fd, was_blocking in kept:
            try:
                os.set_blocking(fd, was_blocking)  # a shared terminal or pipe is left as it was found
            finally:
                os.close(fd)
    return stopped[0] if stopped else None


def _pipe_like(fd: int) -> bool:
    """A pipe, a socket, or a device the event loop can wait on (a terminal; not /dev/null, which
    epoll refuses: the loop would never see its end of input, and the server would never exit)."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    if not stat.S_ISCHR(mode):
        return False
    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


async def _serve_stdio(server: MCPServer) -> int | None:
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        return await serve_pipes(server, wire_in, wire_out, stop_on=STOP_SIGNALS)
    finally:
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def run_stdio(server: MCPServer) -> int | None:
    """Serve `server` on this process's stdin/stdout until the client closes stdin, or until a stop
    signal (`STOP_SIGNALS`) ends the input: then the signal's number is returned, once every line
    read before it is answered (a second signal raises `SystemExit(128 + N)`). Where stdin or stdout
    is not pipe-like, the SDK's transport serves and the signals keep their handlers."""
    # Everything loaded so far (projection, index, libraries) lives for the whole session: keep it
    # out of the collector's scans, which otherwise add latency spikes to calls.
    gc.collect()
    freeze_process()
    if not (_pipe_like(0) and _pipe_like(1)):
        server.run("stdio")
        return None
    # anyio.run, not asyncio.run: it records that the loop is asyncio, so each of the SDK's
    # anyio calls (several per message) skips sniffing for the running library.
    return anyio.run(_serve_stdio, server)
