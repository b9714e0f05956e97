"""The organizer MCP server over the in-memory client, in the newest and the legacy protocol."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from worldkit.canon import sha256_json
from worldkit.mcp.organizer import build_organizer_server

MODES = ["auto", "legacy"]


class RecordingLog:
    """An event sink that keeps what it is given (the EventSink protocol)."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def append(self, tool, arguments, outcome, result_digest, detail=None, state_change=None):
        self.events.append(
            dict(
                tool=tool,
                arguments=arguments,
                outcome=outcome,
                result_digest=result_digest,
                detail=detail,
                state_change=state_change,
            )
        )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws" / "inbox").mkdir(parents=True)
    for i in range(1, 6):
        (tmp_path / "ws" / "inbox" / f"F00{i}.txt").write_text(f"Minutes {i}: budget review.\n")
    return tmp_path / "ws"


def session(server, mode: str, calls):
    async def go():
        async with Client(server, mode=mode) as client:
            return await calls(client)

    return asyncio.run(go())


@pytest.mark.parametrize("mode", MODES)
def test_five_tools_with_schemas_and_hints(ws: Path, mode: str) -> None:
    async def calls(client):
        return (await client.list_tools()).tools

    tools = {t.name: t for t in session(build_organizer_server(ws), mode, calls)}
    assert sorted(tools) == [
        "check_inventory", "list_files", "move_files", "read_file", "search_files"
    ]
    for name, tool in tools.items():
        assert tool.output_schema is not None, name
        assert tool.annotations.read_only_hint is (name != "move_files")
        assert tool.annotations.destructive_hint is False
    limit = tools["list_files"].input_schema["properties"]["limit"]
    assert limit["maximum"] == 200
    assert tools["read_file"].input_schema["properties"]["length"]["maximum"] == 100_000


@pytest.mark.parametrize("mode", MODES)
def test_a_session_through_the_tools(ws: Path, mode: str) -> None:
    async def calls(client):
        out = {}
        out["list"] = await client.call_tool("list_files", {"limit": 2})
        out["read"] = await client.call_tool("read_file", {"id": "F003", "offset": 0, "length": 9})
        out["search"] = await client.call_tool("search_files", {"query": "BUDGET"})
        out["move"] = await client.call_tool(
            "move_files", {"ids": ["F001", "F002"], "destination": ["reviews", "budget"]}
        )
        out["bad"] = await client.call_tool(
            "move_files", {"ids": ["F003"], "destination": ["reviews", "F3"]}
        )
        out["inventory"] = await client.call_tool("check_inventory", {})
        return out

    out = session(build_organizer_server(ws), mode, calls)
    listing = out["list"].structured_content
    assert [e["id"] for e in listing["entries"]] == ["F001", "F002"] and listing["next_offset"] == 2
    assert out["read"].structured_content["text"] == "Minutes 3"
    assert len(out["search"].structured_content["matches"]) == 5
    assert [m["id"] for m in out["move"].structured_content["moved"]] == ["F001", "F002"]
    assert out["bad"].is_error
    assert "folder name 'F3' looks like a record id" in out["bad"].content[0].text
    inventory = out["inventory"].structured_content
    assert inventory["intact"] and inventory["unplaced"] == ["F003", "F004", "F005"]
    assert (ws / "reviews" / "budget" / "F001.txt").is_file()
    assert not (ws / "reviews" / "F3").exists()


@pytest.mark.parametrize("mode", MODES)
def test_every_call_goes_to_the_event_log(ws: Path, mode: str) -> None:
    log = RecordingLog()

    async def calls(client):
        results = [
            await client.call_tool("list_files", {}),
            await client.call_tool("read_file", {"id": "F404"}),
            await client.call_tool("list_files", {"limit": 1000}),
            await client.call_tool("no_such_tool", {}),
            await client.call_tool("move_files", {"ids": ["F001"], "destination": ["a"]}),
        ]
        return results

    results = session(build_organizer_server(ws, event_log=log), mode, calls)
    outcomes = [(e["tool"], e["outcome"]) for e in log.events]
    assert outcomes == [
        ("list_files", "ok"),
        ("read_file", "denied"),
        ("list_files", "error"),
        ("no_such_tool", "error"),
        ("move_files", "ok"),
    ]
    assert log.events[0]["result_digest"] == sha256_json(results[0].structured_content)
    assert "unknown record id 'F404'" in log.events[1]["detail"]["reason"]
    assert log.events[1]["arguments"] == {"id": "F404"}
    change = dict(log.events[4]["state_change"])
    assert len(change.pop("plan")) == 32  # the journal's plan id: recovery checks it was logged
    assert change == {
        "kind": "infoorg.move_files",
        "moves": [{"id": "F001", "from": ["inbox"], "to": ["a"]}],
    }
    # Logged by the tool body before the journal went, with the digest the middleware would use.
    assert log.events[4]["result_digest"] == sha256_json(results[4].structured_content)
    assert log.events[4]["arguments"] == {"ids": ["F001"], "destination": ["a"]}
    assert all(e["state_change"] is None for e in log.events[:4])


@pytest.mark.slow
def test_the_stdio_entry_point_serves_the_sdk_client(ws: Path) -> None:
    import sys

    from mcp import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit.mcp.organizer", "--workspace", str(ws)],
        cwd=str(Path(__file__).resolve().parents[3]),
    )

    async def calls(client):
        moved = await client.call_tool("move_files", {"ids": ["F005"], "destination": ["x"]})
        listing = await client.call_tool("list_files", {"offset": 4})
        return moved, listing

    moved, listing = session(params, "legacy", calls)
    assert not moved.is_error
    entries = listing.structured_content["entries"]
    assert entries == [{"id": "F005", "path": ["x"], "format": "text"}]


FIGURE_11 = (
    "You are operating the supplied bounded record workspace through five tools. Follow the "
    "user's organization task and actually move the records. list_files exposes original IDs, "
    "formats, current locations and public anchor metadata. read_file supports full-text "
    "pagination; search_files searches record bodies; move_files moves selected IDs and creates "
    "valid folders; check_inventory reports only integrity and placement state. Issue at most "
    "200 tool calls in one response. Do not use external files or networks. The independently "
    "captured final workspace is authoritative. End with the requested JSON declaration, but do "
    "not substitute a proposed layout for actual moves. No hidden reference, score or "
    "grouping-quality feedback is available."
)
"""Figure 11 of the paper, typed out here so the template cannot drift from it."""


@pytest.mark.parametrize("mode", MODES)
def test_initialize_instructions_are_figure_11_then_the_request(ws: Path, mode: str) -> None:
    request = "You are organizing a collection of text records into a folder hierarchy.\n"

    async def calls(client):
        return client.instructions

    assert session(build_organizer_server(ws), mode, calls) == FIGURE_11
    with_request = session(build_organizer_server(ws, request=request), mode, calls)
    assert with_request == FIGURE_11 + "\n\n" + request.strip()


@pytest.mark.parametrize("mode", MODES)
def test_check_inventory_lists_the_actual_assignments(ws: Path, mode: str) -> None:
    async def calls(client):
        await client.call_tool("move_files", {"ids": ["F002"], "destination": ["budget", "q1"]})
        return (await client.call_tool("check_inventory", {})).structured_content

    inventory = session(build_organizer_server(ws), mode, calls)
    assert inventory["assignments"][:2] == [
        {"id": "F001", "path": ["inbox", "F001.txt"]},
        {"id": "F002", "path": ["budget", "q1", "F002.txt"]},
    ]
    assert not {"score", "quality", "correct"} & set(inventory)
