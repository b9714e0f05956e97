"""worldkit's stdio transport (`worldkit.mcp.stdio`) speaks exactly as the SDK's `stdio_server` does.

The same scripted exchange — handshake, tool calls, a refusal, malformed and non-object lines, an
unknown method, invalid params, a last line without its newline, then EOF — gives byte-identical
output through both transports, except that ours answers the malformed lines the SDK drops; plus the line splitting, error items, pipelining, large answers
and the descriptors' blocking mode.
"""

from __future__ import annotations

import asyncio
import json
import os
from io import TextIOWrapper
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from tests.unit.mcp.seat_support import Run, project
from worldkit.mcp.base import WorldkitMCPServer
from worldkit.mcp.stdio import PipeReadStream, _LineProtocol, serve_pipes

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _request(rid: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


INITIALIZE = _request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "test", "version": "0"}})
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
# (bytes sent, answers awaited before the next send)
SCRIPT: list[tuple[bytes, int]] = [
    (INITIALIZE, 1),
    (INITIALIZED, 0),
    (_request(2, "tools/list"), 1),
    (_request(3, "tools/call", {"name": "read_file", "arguments": {"path": "Desk/P1/todo.md"}}), 1),
    (b"this is not json\n", 0),
    (_request(4, "tools/call", {"name": "read_file", "arguments": {"path": "HR/Reviews/P1 review.md"}}), 1),
    (b'["an array", "not a message"]\n', 0),
    (b"\n", 0),
    (_request(5, "no/such/method"), 1),
    (_request(6, "tools/call", {"name": "read_file", "arguments": {"path": "Desk/P1/todo.md", "length": 0}}), 1),
    (_request(7, "tools/call", {"name": 7}), 1),
    (_request(8, "ping").rstrip(b"\n"), 0),  # no newline: complete (and answered) only at EOF
]


class _Client:
    """The client's ends of the two pipes, on the running event loop."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, to_server: int, from_server: int) -> _Client:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(from_server, "rb", 0))
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(to_server, "wb", 0))
        return cls(reader, asyncio.StreamWriter(transport, protocol, None, loop))

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def line(self) -> bytes:
        with anyio.fail_after(30):
            return await self.reader.readline()

    async def rest(self) -> bytes:
        with anyio.fail_after(30):
            return await self.reader.read()


async def _transcript(serve: Any, script: list[tuple[bytes, int]]) -> list[bytes]:
    """Run `serve(fd_in, fd_out)` against the script; every line the server wrote, in order."""
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    out: list[bytes] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve, to_server_r, from_server_w)
        client = await _Client.connect(to_server_w, from_server_r)
        for data, answers in script:
            await client.send(data)
            for _ in range(answers):
                out.append(await client.line())
        client.writer.close()  # EOF: the server must finish and close its end
        out.extend(line + b"\n" for line in (await client.rest()).split(b"\n") if line)
    return out


def _sdk_serve(server: WorldkitMCPServer) -> Any:
    async def serve(fd_in: int, fd_out: int) -> None:
        stdin = anyio.wrap_file(TextIOWrapper(os.fdopen(fd_in, "rb"), encoding="utf-8", errors="replace"))
        stdout = anyio.wrap_file(TextIOWrapper(os.fdopen(fd_out, "wb"), encoding="utf-8"))
        lowlevel = server._lowlevel_server  # noqa: SLF001
        try:
            async with stdio_server(stdin, stdout) as (read_stream, write_stream):
                await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
        finally:
            await stdin.aclose()
            await stdout.aclose()

    return serve


def _ours(server: WorldkitMCPServer, **options: Any) -> Any:
    async def serve(fd_in: int, fd_out: int) -> None:
        await serve_pipes(server, fd_in, fd_out, **options)

    return serve


async def test_the_scripted_exchange_is_byte_identical_to_the_sdk_transport(tmp_path: Path) -> None:
    projection = project(tmp_path, "S1")
    ours, sdks = Run(projection, run_id="ours"), Run(projection, run_id="sdk")
    try:
        screened = await _transcript(_ours(ours.server), SCRIPT)
        expected = await _transcript(_sdk_serve(sdks.server), SCRIPT)
        # The SDK leaves the two malformed lines unanswered; ours answers each with a JSON-RPC error
        # (worldkit.mcp.jsonrpc_screen) and is otherwise byte-identical.
        refusals = [line for line in screened if json.loads(line).get("id") is None]
        assert [json.loads(line)["error"]["code"] for line in refusals] == [-32700, -32600]
        got = [line for line in screened if line not in refusals]
        assert got == expected
        answers = [json.loads(line) for line in got]
        assert [a["id"] for a in answers] == [1, 2, 3, 4, 5, 6, 7, 8]  # nothing for the malformed lines
        assert answers[0]["result"]["serverInfo"]["name"] == "worldkit-seat-S1"
        assert answers[2]["result"]["structuredContent"]["text"] == "my todo\n"
        assert answers[3]["result"]["isError"] is True
        assert answers[4]["error"]["code"] == -32601
        assert answers[7]["result"] == {}
        # Both logged the same calls (the three tools/call that reached the server, and the bad params).
        assert [e.tool for e in ours.events()] == [e.tool for e in sdks.events()]
        assert [e.result_digest for e in ours.events()] == [e.result_digest for e in sdks.events()]
    finally:
        ours.close()
        sdks.close()


def _feed(protocol: _LineProtocol, *chunks: bytes, eof: bool = True) -> None:
    for chunk in chunks:
        protocol.data_received(chunk)
    if eof:
        protocol.eof_received()


async def _items(protocol: _LineProtocol) -> list[SessionMessage | Exception]:
    stream = PipeReadStream(protocol)
    return [item async for item in stream]


async def test_a_malformed_line_becomes_the_exception_item_and_reading_goes_on() -> None:
    protocol = _LineProtocol(1 << 20)
    _feed(protocol, b"{not json}\n", _request(1, "ping"), b'{"jsonrpc": "2.0"}\n', _request(2, "ping"))
    items = await _items(protocol)
    assert [type(i).__name__ for i in items] == ["ValidationError", "SessionMessage", "ValidationError", "SessionMessage"]
    assert [i.message.id for i in items if isinstance(i, SessionMessage)] == [1, 2]


async def test_a_message_split_byte_by_byte_and_a_crlf_line_are_read_whole() -> None:
    protocol = _LineProtocol(1 << 20)
    message = _request(1, "tools/call", {"name": "read_file", "arguments": {"path": "Désk/ünïcode.md"}})
    _feed(protocol, *[message[i : i + 1] for i in range(len(message))], _request(2, "ping")[:-1] + b"\r\n")
    items = await _items(protocol)
    assert all(isinstance(i, SessionMessage) for i in items), items
    assert items[0].message.params["arguments"]["path"] == "Désk/ünïcode.md"  # type: ignore[union-attr]
    assert [i.message.id for i in items] == [1, 2]  # type: ignore[union-attr]


async def test_an_over_long_line_is_one_error_item_and_the_next_line_is_read() -> None:
    protocol = _LineProtocol(64)
    _feed(protocol, b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "', b"x" * 200, b'"}}\n',
          _request(2, "ping"))
    items = await _items(protocol)
    assert isinstance(items[0], ValueError) and "longer than 64 bytes" in str(items[0])
    assert isinstance(items[1], SessionMessage) and items[1].message.id == 2
    assert len(items) == 2


async def test_an_over_long_line_in_one_chunk_is_refused_too() -> None:
    protocol = _LineProtocol(64)
    _feed(protocol, _request(1, "ping", {"pad": "x" * 100}) + _request(2, "ping"))
    items = await _items(protocol)
    assert isinstance(items[0], ValueError) and "longer than 64 bytes" in str(items[0])
    assert isinstance(items[1], SessionMessage) and items[1].message.id == 2
    assert len(items) == 2


async def test_a_closed_stream_refuses_to_receive() -> None:
    protocol = _LineProtocol(1 << 20)
    _feed(protocol, _request(1, "ping"), eof=False)
    stream = PipeReadStream(protocol)
    await stream.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await stream.receive()


def _big_server() -> WorldkitMCPServer:
    server = WorldkitMCPServer("big", log_level="WARNING")

    @server.tool()
    def big(n: int) -> str:
        """`n` characters."""
        return ("0123456789" * (n // 10 + 1))[:n]

    return server


async def test_pipelined_calls_with_answers_larger_than_the_pipe_all_arrive_whole() -> None:
    # 20 requests sent at once, each answer 300 KB (several times a pipe's buffer): the server waits
    # on the full pipe while the client reads, and every answer arrives whole, in one line.
    calls = b"".join(
        _request(10 + i, "tools/call", {"name": "big", "arguments": {"n": 300_000 + i}}) for i in range(20)
    )
    script = [(INITIALIZE, 1), (INITIALIZED, 0), (calls, 20)]
    lines = await _transcript(_ours(_big_server()), script)
    answers = [json.loads(line) for line in lines]
    assert sorted(a["id"] for a in answers[1:]) == list(range(10, 30))
    for answer in answers[1:]:
        assert len(answer["result"]["structuredContent"]["result"]) == 300_000 + answer["id"] - 10


async def test_the_descriptors_are_left_in_their_blocking_mode() -> None:
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    # Duplicates share the open file descriptions, whose blocking flag the event loop changes.
    kept_in, kept_out = os.dup(to_server_r), os.dup(from_server_w)
    try:
        os.write(to_server_w, INITIALIZE)
        os.close(to_server_w)
        await serve_pipes(_big_server(), to_server_r, from_server_w)
        assert os.get_blocking(kept_in) and os.get_blocking(kept_out)
        assert json.loads(os.read(from_server_r, 1 << 16))["id"] == 1
    finally:
        for fd in (kept_in, kept_out, from_server_r):
            os.close(fd)


async def test_a_stop_signal_ends_the_input_after_what_was_read_is_answered(tmp_path: Path) -> None:
    """SIGINT while serving: the calls read before it are answered, a line not complete yet is dropped,
    the server ends as at EOF (closing its end) and says which signal
    ended it; the process's own SIGINT handler is back afterwards."""
    import signal

    run = Run(project(tmp_path, "S1"), run_id="stop")
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    def own_handler(signum: int, frame: object) -> None:  # the process's own, put back afterwards
        raise AssertionError("the process's handler ran while serving")

    before = signal.signal(signal.SIGINT, own_handler)
    ended: list[int | None] = []

    async def serve() -> None:
        ended.append(await serve_pipes(run.server, to_server_r, from_server_w, stop_on=(signal.SIGINT,)))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            client = await _Client.connect(to_server_w, from_server_r)
            await client.send(INITIALIZE + INITIALIZED)
            assert json.loads(await client.line())["id"] == 1
            await client.send(_request(2, "ping") + _request(3, "ping")[:10])  # a whole line, half of another
            assert json.loads(await client.line())["id"] == 2
            os.kill(os.getpid(), signal.SIGINT)
            rest = await client.rest()  # the server closed its end without being sent EOF
            with pytest.raises(ConnectionError):  # no reader is left on the server's side
                await client.send(_request(4, "ping"))
            client.writer.close()
        assert rest == b""
        assert ended == [signal.SIGINT]
        assert signal.getsignal(signal.SIGINT) is own_handler
    finally:
        signal.signal(signal.SIGINT, before)
        run.close()
