"""Nothing a seat may not see is reachable by any tool: other seats', future and verifier-only items."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.mcp.seat_support import Run, error_text, project, projection_files

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("visibility")
    for seat in ("S1", "S2", "S4"):
        project(root, seat)
    project(root, "S1", date="2025-12-31")
    return root


async def _listing(run: Run) -> list[str]:
    async with run.client() as client:
        return [e["path"] for e in (await client.call_tool("list_files", {"limit": 500})).structured_content["entries"]]


@pytest.mark.parametrize("seat", ["S1", "S2", "S4"])
async def test_listing_is_exactly_the_seats_projection(tree: Path, seat: str) -> None:
    run = Run(project(tree, seat))
    assert await _listing(run) == projection_files(run.projection)
    run.close()


async def test_other_seats_future_and_verifier_items_are_unreachable(tree: Path) -> None:
    projection = project(tree, "S1")
    # Material that exists on disk beside and inside the projection, but not in its manifest.
    (tree / "verifier").mkdir(exist_ok=True)
    (tree / "verifier" / "rubric.md").write_text("hidden truth: 42\n")
    (projection / "files" / "Shared" / "planted.md").write_text("hidden truth: 42\n")
    run = Run(projection)
    attempts = {
        "HR/Reviews/P1 review.md": "no file 'HR/Reviews/P1 review.md' among the files seat S1 can see on 2025-07-01",
        "Shared/Notes/future.md": "no file 'Shared/Notes/future.md' among the files seat S1 can see",
        "Shared/planted.md": "no file 'Shared/planted.md' among the files seat S1 can see",
        "../../verifier/rubric.md": "'..' segments are not allowed",
        "../manifest.json": "'..' segments are not allowed",
    }
    async with run.client() as client:
        for path, message in attempts.items():
            assert message in error_text(await client.call_tool("read_file", {"path": path}))
        for query in ("confidential review", "future", "hidden truth"):
            for mode in ("literal", "ranked"):
                found = (await client.call_tool("search_files", {"query": query, "mode": mode})).structured_content
                assert found["matches"] == [], (query, mode)
    events = run.events()
    assert [(e.tool, e.arguments.get("path"), e.outcome) for e in events[: len(attempts)]] == [
        ("read_file", path, "denied") for path in attempts
    ]
    run.close()


async def test_private_mail_and_records_stay_with_their_seat(tree: Path) -> None:
    s2, s4 = Run(project(tree, "S2")), Run(project(tree, "S4"))
    async with s2.client() as client:
        assert "no message 'M2' among the messages seat S2 can see" in error_text(
            await client.call_tool("read_message", {"id": "M2"})
        )
        listed = (await client.call_tool("list_messages", {})).structured_content
        assert [m["id"] for m in listed["messages"]] == ["M1"]
    async with s4.client() as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "get_record" not in tools and "query_records" not in tools
        assert "Unknown tool" in error_text(await client.call_tool("get_record", {"id": "CC-1"}))
        hr = (await client.call_tool("read_file", {"path": "HR/Reviews/P1 review.md"})).structured_content
        assert hr["text"] == "confidential review\n"
    s2.close()
    s4.close()


async def test_a_record_appears_only_from_its_effective_date(tree: Path) -> None:
    early = Run(project(tree, "S1", date="2025-03-15"))
    later = Run(project(tree, "S1", date="2025-12-31"))
    async with early.client() as client:
        listed = (await client.call_tool("query_records", {})).structured_content
        assert [r["id"] for r in listed["records"]] == ["CC-1"]
        assert listed["records"][0]["status"] == "pending"  # approved only on 2025-04-01
        assert "no record 'APP-1'" in error_text(await client.call_tool("get_record", {"id": "APP-1"}))
    async with later.client() as client:
        assert (await client.call_tool("get_record", {"id": "CC-1"})).structured_content["status"] == "approved"
        assert "Shared/Notes/future.md" in [
            e["path"] for e in (await client.call_tool("list_files", {})).structured_content["entries"]
        ]
    early.close()
    later.close()


async def test_relations_name_only_records_the_seat_can_see(tmp_path: Path) -> None:
    from tests.builders import WorldSpec
    from worldkit.materialize import materialize

    spec = WorldSpec()
    spec.world["company"]["systems"].append({"id": "hrms", "name": "HR cases", "kind": "records"})
    spec.data["permissions"].append(
        {"id": "R-HRMS", "description": "HR reads HR cases", "subject": {"roles": ["hr"]}, "resource": {"systems": ["hrms"]}}
    )
    spec.data["records"].append(
        {"id": "HR-1", "system": "hrms", "type": "hr_case", "title": "HR case",
         "events": [{"date": "2025-03-01", "kind": "created", "status": "open", "by": "P4"}]}
    )
    spec.item("records", "CC-1")["links"] = ["APP-1", "HR-1"]
    world = spec.write(tmp_path / "world")
    projection = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "S1").out
    run = Run(projection)
    async with run.client() as client:
        record = (await client.call_tool("get_record", {"id": "CC-1"})).structured_content
        app = (await client.call_tool("get_record", {"id": "APP-1"})).structured_content
        ids = [r["id"] for r in (await client.call_tool("query_records", {})).structured_content["records"]]
    assert "HR-1" not in ids
    assert record["relations"] == ["APP-1"] and record["record"]["links"] == ["APP-1"]
    assert app["relations"] == ["CC-1"]
    run.close()
