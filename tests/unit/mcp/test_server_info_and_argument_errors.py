"""Both MCP servers name worldkit's version in `initialize` and word argument errors for the agent."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from tests.unit.mcp.seat_support import MODES, Run, error_text, project
from worldkit import __version__
from worldkit.mcp.organizer import build_organizer_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def s1(tmp_path: Path):
    run = Run(project(tmp_path, "S1"))
    yield run
    run.close()


def _inbox(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "inbox").mkdir(parents=True)
    (tmp_path / "ws" / "inbox" / "F001.txt").write_text("Minutes: budget review.\n")
    return tmp_path / "ws"


def _readable(message: str) -> None:
    """No pydantic report: no URL, no model class name, no `[type=…]` codes, one line."""
    assert "pydantic.dev" not in message and "http" not in message
    assert "Arguments" not in message and "[type=" not in message and "input_value" not in message
    assert "\n" not in message and len(message) < 400


@pytest.mark.parametrize("mode", MODES)
async def test_server_info_version_is_worldkits(s1: Run, tmp_path: Path, mode: str) -> None:
    assert __version__
    async with s1.client(mode) as client:
        assert (client.server_info.name, client.server_info.version) == ("worldkit-seat-S1", __version__)
    async with Client(build_organizer_server(_inbox(tmp_path)), mode=mode) as client:
        assert client.server_info.version == __version__


CASES = [
    ("read_file", {}, "`path` is required but missing"),
    ("read_file", {"path": 3}, "`path` should be a valid string (got 3)"),
    ("list_files", {"limit": 0}, "`limit` should be greater than or equal to 1 (got 0)"),
    ("list_files", {"limit": "many"}, '`limit` should be a valid integer, unable to parse string as an integer (got "many")'),
    ("search_files", {"query": "x", "mode": "fuzzy"}, "`mode` should be 'literal' or 'ranked' (got \"fuzzy\")"),
    ("send_message", {"to": [3], "subject": "s", "body": "b"}, "`to[0]` should be a valid string (got 3)"),
    ("read_file", {"path": "a.md", "seat": "S4"}, "`seat` is not an argument of this tool"),
]


@pytest.mark.parametrize("mode", MODES)
async def test_argument_errors_name_the_argument_and_what_was_expected(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        for tool, arguments, problem in CASES:
            message = error_text(await client.call_tool(tool, arguments))
            _readable(message)
            assert message.startswith(f"Error executing tool {tool}: invalid arguments: {problem}"), message
    signature = "read_file takes path (string, required), offset (integer ≥ 0), length (integer 1–100000)."
    assert message.endswith(signature), message
    logged = s1.events()
    assert [e.outcome for e in logged] == ["error"] * len(CASES)
    assert logged[0].detail == {"reason": f"Error executing tool read_file: invalid arguments: `path` is required "
                                          f"but missing. {signature}"}


async def test_a_long_rejected_value_is_quoted_short(s1: Run) -> None:
    async with s1.client() as client:
        message = error_text(await client.call_tool("read_file", {"path": ["x" * 5000]}))
    _readable(message)
    assert "`path` should be a valid string (got [\"xxxxxxxx" in message and "x" * 100 not in message


async def test_the_organizers_argument_errors_are_worded_too(tmp_path: Path) -> None:
    async with Client(build_organizer_server(_inbox(tmp_path))) as client:
        result = await client.call_tool("list_files", {"limit": 10_000})
    message = " ".join(c.text for c in result.content)
    assert result.is_error
    _readable(message)
    assert "invalid arguments: `limit` should be less than or equal to 200 (got 10000)" in message
    assert "list_files takes offset (integer ≥ 0), limit (integer 1–200)." in message
