"""The seat server's ten tools through an in-memory MCP client, in both protocol modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.mcp.seat_support import (
    MODES,
    Run,
    bundle_tools,
    error_text,
    project,
    projection_files,
)
from worldkit.canon import sha256_json
from worldkit.tools.specs import TOOLS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def s1(tmp_path: Path):
    run = Run(project(tmp_path, "S1"))
    yield run
    run.close()


@pytest.mark.parametrize("mode", MODES)
async def test_served_tools_are_exactly_the_bundle(tmp_path: Path, mode: str) -> None:
    for seat in ("S1", "S4"):  # S4 sees no records: its bundle has no records server
        projection = project(tmp_path, seat)
        run = Run(projection)
        promised = bundle_tools(projection)
        async with run.client(mode) as client:
            served = {tool.name: tool for tool in (await client.list_tools()).tools}
        run.close()
        assert sorted(served) == sorted(promised)
        for name, tool in served.items():
            spec = promised[name]
            assert tool.description == spec["description"]
            assert tool.input_schema == spec["input_schema"], name
            assert tool.output_schema is not None and tool.output_schema["type"] == "object"
            assert tool.annotations.read_only_hint is spec["read_only"]
            assert tool.annotations.destructive_hint is (name == "write_file")
    assert {t.name for t in TOOLS} == set(bundle_tools(project(tmp_path, "S1")))


@pytest.mark.parametrize("mode", MODES)
async def test_list_files_pages_the_projection(s1: Run, mode: str) -> None:
    expected = projection_files(s1.projection)
    async with s1.client(mode) as client:
        first = (await client.call_tool("list_files", {"limit": 2})).structured_content
        rest = (await client.call_tool("list_files", {"offset": first["next_offset"], "limit": 100})).structured_content
    assert first["next_offset"] == 2 and rest["next_offset"] is None and first["total"] == len(expected)
    entries = first["entries"] + rest["entries"]
    assert [e["path"] for e in entries] == expected
    assert set(entries[0]) == {"path", "size", "sha256"}


@pytest.mark.parametrize("mode", MODES)
async def test_read_file_by_offset_and_length(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        head = (await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md", "length": 3})).structured_content
        tail = (await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md", "offset": head["next_offset"]})).structured_content
        past = await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md", "offset": 99})
    assert head["text"] + tail["text"] == "SOP v1\n"
    assert head["next_offset"] == 3 and tail["next_offset"] is None and tail["total_chars"] == 7
    assert "offset 99 is past the end" in error_text(past)


@pytest.mark.parametrize("mode", MODES)
async def test_search_literal_and_ranked(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        literal = (await client.call_tool("search_files", {"query": "PULL window"})).structured_content
        ranked = (await client.call_tool("search_files", {"query": "window todo", "mode": "ranked"})).structured_content
        empty = await client.call_tool("search_files", {"query": "   "})
    assert [(m["path"], m["line"]) for m in literal["matches"]] == [("Shared/Notes/note.md", 1)]
    assert "pull window" in literal["matches"][0]["snippet"]
    assert {m["path"] for m in ranked["matches"]} == {"Shared/Notes/note.md", "Desk/P1/todo.md"}
    assert all(m["score"] > 0 for m in ranked["matches"])
    assert "empty query" in error_text(empty)


@pytest.mark.parametrize("mode", MODES)
async def test_records_query_and_get(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        all_ = (await client.call_tool("query_records", {})).structured_content
        approved = (await client.call_tool("query_records", {"status": "approved", "type": "change_control"})).structured_content
        text = (await client.call_tool("query_records", {"text": "protocol"})).structured_content
        record = (await client.call_tool("get_record", {"id": "CC-1"})).structured_content
        unknown = await client.call_tool("get_record", {"id": "CC-9"})
    assert [r["id"] for r in all_["records"]] == ["APP-1", "CC-1"]
    assert [r["id"] for r in approved["records"]] == ["CC-1"]
    assert [r["id"] for r in text["records"]] == ["APP-1"]
    assert record["status"] == "approved" and record["record"]["title"] == "Tighten window"
    assert record["changes"] == []
    assert "no record 'CC-9' among the records seat S1 can see on 2025-07-01" in error_text(unknown)


@pytest.mark.parametrize("mode", MODES)
async def test_messages_list_and_read(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        listed = (await client.call_tool("list_messages", {})).structured_content
        private = (await client.call_tool("read_message", {"id": "M2"})).structured_content
        found = (await client.call_tool("list_messages", {"kind": "mail", "text": "pending"})).structured_content
    assert [m["id"] for m in listed["messages"]] == ["M1", "M2"]
    assert private["body"] == "Just for Ann.\n" and private["subject"] == "Private"
    assert [m["id"] for m in found["messages"]] == ["M1"]


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_seat_refuses_every_mutation_and_logs_it(s1: Run, mode: str) -> None:
    before = s1.state.digest()
    async with s1.client(mode) as client:
        write = await client.call_tool("write_file", {"path": "report.md", "content": "x"})
        comment = await client.call_tool("update_record", {"id": "CC-1", "action": "comment", "text": "hi"})
        send = await client.call_tool("send_message", {"to": ["P3"], "subject": "s", "body": "b"})
    assert "writing 'report.md' is not allowed: seat S1 is served a projection without a task workspace" in error_text(write)
    assert "commenting on CC-1 is not allowed: the task permits no 'comment' updates on any record" in error_text(comment)
    assert "sending to P3 is not allowed: the task permits sending no mail" in error_text(send)
    assert s1.state.digest() == before
    events = s1.events()
    assert [(e.tool, e.outcome) for e in events] == [
        ("write_file", "denied"), ("update_record", "denied"), ("send_message", "denied")
    ]
    assert all(e.state_change is None and e.detail["reason"] and e.seat == "S1" for e in events)


@pytest.mark.parametrize("mode", MODES)
async def test_identity_cannot_be_passed(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        for tool, arguments, extra in [
            ("read_file", {"path": "Shared/SOPs/SOP-001.md", "seat": "S4"}, "seat"),
            ("list_files", {"as_user": "P4"}, "as_user"),
            ("send_message", {"to": ["P3"], "subject": "s", "body": "b", "from": "P3"}, "from"),
        ]:
            result = await client.call_tool(tool, arguments)
            assert f"`{extra}` is not an argument of this tool" in error_text(result)
    assert [e.outcome for e in s1.events()] == ["error", "error", "error"]


@pytest.mark.parametrize("mode", MODES)
async def test_every_call_is_logged_with_the_digest_of_what_was_returned(s1: Run, mode: str) -> None:
    async with s1.client(mode) as client:
        listed = await client.call_tool("list_files", {})
        read = await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md"})
        refused = await client.call_tool("read_file", {"path": "../manifest.json"})
        unknown = await client.call_tool("no_such_tool", {})
    events = s1.events()
    assert [(e.seq, e.tool, e.outcome) for e in events] == [
        (1, "list_files", "ok"), (2, "read_file", "ok"), (3, "read_file", "denied"), (4, "no_such_tool", "error")
    ]
    assert events[0].result_digest == sha256_json(listed.structured_content)
    assert events[1].result_digest == sha256_json(read.structured_content)
    assert events[1].arguments == {"path": "Shared/SOPs/SOP-001.md"}
    assert events[2].result_digest == sha256_json([c.model_dump(mode="json", exclude_none=True) for c in refused.content])
    assert "'..' segments are not allowed" in events[2].detail["reason"]
    assert unknown.is_error and "Unknown tool" in events[3].detail["reason"]


async def test_every_call_is_logged_before_it_is_answered(tmp_path: Path) -> None:
    from mcp import Client

    from tests.unit.mcp.seat_support import permissive
    from worldkit.mcp.server import build_seat_server

    projection = project(tmp_path, "S1")
    run = Run(projection)
    server = build_seat_server(projection, permissive(projection), event_log=run.log)
    async with Client(server) as client:
        for n in range(1, 21):
            await client.call_tool("list_files", {"limit": 1})
            # Write-ahead: by the time the answer arrived, its event was committed.
            assert [e.seq for e in run.events()] == list(range(1, n + 1))
        await client.call_tool("update_record", {"id": "CC-1", "action": "comment", "text": "ok"})
        assert run.events()[-1].tool == "update_record" and run.events()[-1].state_change
    run.close()


async def test_a_call_whose_event_cannot_be_stored_is_not_answered(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from tests.unit.mcp.seat_support import permissive
    from worldkit.errors import StoreError
    from worldkit.mcp.server import build_seat_server

    class Broken:
        calls = 0

        def append(self, *args: object, **kwargs: object) -> None:
            Broken.calls += 1
            raise StoreError("disk full")

    projection = project(tmp_path, "S1")
    server = build_seat_server(projection, permissive(projection), event_log=Broken())
    async with Client(server) as client:
        with pytest.raises(MCPError, match="Internal server error"):
            await client.call_tool("list_files", {"limit": 1})  # no listing reaches the agent
    assert Broken.calls == 1