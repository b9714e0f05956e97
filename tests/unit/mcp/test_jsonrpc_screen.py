"""Every JSON-RPC line gets an answer or a logged refusal (`worldkit.mcp.jsonrpc_screen`): the lines
the SDK drops unanswered — or runs with no answer, a `tools/call` whose id is null or an object —
are answered with a JSON-RPC error over the stdio transport, never run, and never logged as calls."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import pytest

from tests.unit.mcp.seat_support import Run, project
from tests.unit.mcp.test_stdio_transport import INITIALIZE, INITIALIZED, _Client
from worldkit.mcp.jsonrpc_screen import INVALID_REQUEST, MAX_DEPTH, PARSE_ERROR, screen
from worldkit.mcp.stdio import serve_pipes

READ = {"name": "read_file", "arguments": {"path": "Desk/P1/todo.md"}}


def _call(rid: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": READ}).encode() + b"\n"


# (line, expected error code, expected id in the answer); written by hand, one attack shape each.
MALFORMED: list[tuple[str, bytes, int, object]] = [
    ("id null", _call(None), INVALID_REQUEST, None),
    ("id object", _call({"a": 1}), INVALID_REQUEST, None),
    ("id array", _call([1]), INVALID_REQUEST, None),
    ("id boolean", _call(True), INVALID_REQUEST, None),
    ("id fraction", _call(1.5), INVALID_REQUEST, None),
    ("nesting 200", b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"a":' + b"[" * 200 + b"]" * 200 + b"}}\n",
     INVALID_REQUEST, None),
    ("nesting 100,000", b"[" * 100_000 + b"\n", INVALID_REQUEST, None),
    ("lone surrogate", b'{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"read_file",'
                       b'"arguments":{"path":"\\ud800"}}}\n', PARSE_ERROR, None),
    ("batch", b"[" + _call(11).rstrip() + b"," + _call(12).rstrip() + b"]\n", INVALID_REQUEST, None),
    ("empty batch", b"[]\n", INVALID_REQUEST, None),
    ('jsonrpc "1.0"', b'{"jsonrpc":"1.0","id":13,"method":"ping"}\n', INVALID_REQUEST, 13),
    ("no jsonrpc", b'{"id":14,"method":"ping"}\n', INVALID_REQUEST, 14),
    ("5,000-digit integer", b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"ping"}\n', PARSE_ERROR, None),
    ("non-JSON", b"hello\n", PARSE_ERROR, None),
    ("not UTF-8", b'{"jsonrpc":"2.0","id":15,"method":"\xff"}\n', PARSE_ERROR, None),
    ("a string", b'"ping"\n', INVALID_REQUEST, None),
    ("method not a string", b'{"jsonrpc":"2.0","id":16,"method":7}\n', INVALID_REQUEST, 16),
    ("neither request nor response", b'{"jsonrpc":"2.0","id":17}\n', INVALID_REQUEST, 17),
]


@pytest.mark.parametrize(("name", "line", "code", "rid"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_each_malformed_line_is_refused_with_its_error(name: str, line: bytes, code: int, rid: object) -> None:
    refusal = screen(line)
    assert refusal is not None and refusal.code == code and refusal.id == rid and not refusal.silent
    answer = json.loads(refusal.answer())
    assert answer == {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": refusal.reason}}


@pytest.mark.parametrize("line", [
    _call(1), _call("a-string-id"), INITIALIZED, b'{"jsonrpc":"2.0","id":3,"result":{}}\n',
    b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":' + b"[" * (MAX_DEPTH - 2) + b"]" * (MAX_DEPTH - 2) + b"}}\n",
    b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"t":"[[[[ inside a string ]]]] \\" ["}}\n',
])  # fmt: skip
def test_well_formed_messages_pass(line: bytes) -> None:
    assert screen(line) is None


def test_a_request_sent_as_a_notification_is_refused_silently() -> None:
    line = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": READ}).encode()
    refusal = screen(line)
    assert refusal is not None and refusal.silent and "without an id" in refusal.reason


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_over_stdio_every_line_is_answered_and_no_refused_call_is_logged(tmp_path: Path, anyio_backend) -> None:
    run = Run(project(tmp_path, "S1"), run_id="screen")
    to_server_r, to_server_w = os.pipe()
    from_server_r, from_server_w = os.pipe()
    notification = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": READ}).encode() + b"\n"
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve_pipes, run.server, to_server_r, from_server_w)
            client = await _Client.connect(to_server_w, from_server_r)
            await client.send(INITIALIZE)
            assert json.loads(await client.line())["id"] == 1
            await client.send(INITIALIZED)
            answers = []
            for _name, line, code, rid in MALFORMED:
                await client.send(line)
                answer = json.loads(await client.line())
                answers.append((answer["id"], answer["error"]["code"]))
            assert answers == [(rid, code) for _n, _l, code, rid in MALFORMED]
            await client.send(notification)
            await client.send(_call(99))  # the next answer is this call's: the notification got none
            answer = json.loads(await client.line())
            assert answer["id"] == 99 and answer["result"]["structuredContent"]["text"] == "my todo\n"
            client.writer.close()
            assert await client.rest() == b""
        events = run.events()
        assert [(e.tool, e.outcome) for e in events] == [("read_file", "ok")]
        assert all(e.result_digest for e in events if e.outcome == "ok")
    finally:
        run.close()
