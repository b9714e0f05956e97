"""`worldkit serve` over stdio as a subprocess, then `worldkit log verify` and `log replay` on its run."""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.builders import WorldSpec
from worldkit._cli.main import run as cli
from worldkit.materialize import materialize

pytestmark = pytest.mark.anyio

RUN = "stdio-run-1"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return WorldSpec().write(tmp_path_factory.mktemp("serve-world") / "world")


@pytest.fixture(scope="module")
def store_url(world: Path) -> str:
    return f"sqlite:///{world.parent / 'store.db'}"


@pytest.fixture(scope="module")
async def client(world: Path, store_url: str) -> AsyncIterator[Client]:
    """One server process for the module (each spawn costs ~1 s)."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "serve", "--world", str(world), "--rev", "r1", "--date", "2025-07-01",
              "--seat", "S1", "--store", store_url, "--run-id", RUN],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(world.parent),
    )
    async with Client(params) as connected:
        yield connected


async def test_serves_the_seats_projection_over_stdio(client: Client, world: Path, tmp_path: Path) -> None:
    expected = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "S1")
    files = [e.path[len("files/"):] for e in expected.manifest.files if e.path.startswith("files/")]
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    listed = (await client.call_tool("list_files", {})).structured_content
    read = (await client.call_tool("read_file", {"path": "Desk/P1/todo.md"})).structured_content
    refused = await client.call_tool("read_file", {"path": "HR/Reviews/P1 review.md"})
    assert len(tools) == 10
    assert [e["path"] for e in listed["entries"]] == files
    assert read["text"] == "my todo\n"
    assert refused.is_error and "no file 'HR/Reviews/P1 review.md' among the files seat S1 can see" in refused.content[0].text


async def test_log_verify_and_replay_on_the_served_run(
    client: Client, world: Path, store_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    await client.call_tool("read_file", {"path": "Desk/P1/todo.md"})
    await client.call_tool("read_file", {"path": "HR/Reviews/P1 review.md"})  # denied
    await client.call_tool("search_files", {"query": "todo"})  # the server has logged every call so far
    assert cli(["log", "verify", RUN, "--store", store_url]) == 0
    assert capsys.readouterr().out.startswith(f"ok: run {RUN}: ")
    assert cli(["log", "show", RUN, "--store", store_url]) == 0
    shown = capsys.readouterr().out
    assert "denied" in shown and "read_file" in shown
    assert cli(["log", "replay", RUN, "--store", store_url, "--world", str(world), "--rev", "r1", "--date", "2025-07-01"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: run {RUN}: 0 state changes of ") and "reproduced" in out


async def test_one_edited_byte_is_detected_and_named(client: Client, world: Path, store_url: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # This test's own calls (the module's server may have served other tests first, or none:
    # xdist can run this module's tests on different workers).
    await client.call_tool("read_file", {"path": "Desk/P1/todo.md"})
    await client.call_tool("list_files", {"limit": 1})
    copy = world.parent / "tampered.db"
    with sqlite3.connect(store_url.removeprefix("sqlite:///")) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as db:  # an attacker with write access to the file, triggers dropped
        (seq,) = db.execute("SELECT max(seq) - 1 FROM log_events WHERE run_id = ?", (RUN,)).fetchone()
        db.execute("DROP TRIGGER log_events_no_update")
        db.execute("UPDATE log_events SET arguments = replace(arguments, 'todo', 'todO') WHERE run_id = ? AND seq = ?", (RUN, seq))
    assert cli(["log", "verify", RUN, "--store", f"sqlite:///{copy}"]) == 1
    assert f"event {seq} (read_file) was altered" in capsys.readouterr().err


async def test_initialize_names_worldkits_version_and_argument_errors_are_worded(client: Client) -> None:
    from worldkit import __version__

    assert (client.server_info.name, client.server_info.version) == ("worldkit-seat-S1", __version__)
    bad = await client.call_tool("read_file", {"path": "Desk/P1/todo.md", "length": 0})
    text = bad.content[0].text
    assert bad.is_error and text.startswith(
        "Error executing tool read_file: invalid arguments: `length` should be greater than or equal to 1 (got 0). "
        "read_file takes path (string, required)"
    ), text
    assert "pydantic" not in text and "\n" not in text
