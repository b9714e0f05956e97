"""Permitted mutations change the run's state, refused ones change nothing, and replaying the log's
state changes onto the pre-task state reproduces the post-task digest exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.mcp.seat_support import Run, error_text, permissive, project
from worldkit.materialize.manifest import read_manifest
from worldkit.mcp.replay import replay_run
from worldkit.mcp.seat import CallRefused, SeatView
from worldkit.mcp.state import MemoryWorkspace, SeatState, pre_task_state

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def projection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return project(tmp_path_factory.mktemp("state"), "S1")


def _candidate(projection: Path, root: Path) -> Path:
    """A candidate-package-shaped pre-task directory: projection/ and a workspace with one draft."""
    shutil.copytree(projection, root / "projection")
    (root / "workspace").mkdir()
    (root / "workspace" / "draft.md").write_text("draft\n")
    return root


@pytest.fixture
def staged(projection: Path, tmp_path: Path):
    candidate = _candidate(projection, tmp_path / "candidate")
    workspace = tmp_path / "live-workspace"
    shutil.copytree(candidate / "workspace", workspace)  # the run works on a copy; the candidate stays pre-task
    run = Run(candidate / "projection", permissive(candidate / "projection"), workspace=workspace)
    yield candidate, run
    run.close()


SEQUENCE = [
    ("write_file", {"path": "report.md", "content": "# Report\n\nCC-1 is approved.\n"}, True),
    ("write_file", {"path": "notes.txt", "content": "not permitted\n"}, False),
    ("write_file", {"path": "workspace/report/summary.md", "content": "summary\n"}, True),
    ("update_record", {"id": "CC-1", "action": "comment", "text": "Checked against SOP-001."}, True),
    ("update_record", {"id": "CC-1", "action": "status", "text": "reopened"}, False),
    ("update_record", {"id": "APP-1", "action": "comment", "text": "not permitted"}, False),
    ("update_record", {"id": "CC-1", "action": "status", "text": "closed"}, True),
    ("update_record", {"id": "CC-1", "action": "attach", "text": "workspace/report.md"}, True),
    ("send_message", {"to": ["P3"], "subject": "CC-1 closed", "body": "See the report.", "reply_to": "M1"}, True),
    ("send_message", {"to": ["P3", "P4"], "subject": "leak", "body": "x"}, False),
    ("write_file", {"path": "report.md", "content": "# Report v2\n"}, True),
    ("write_file", {"path": "report.md", "content": "bad \ud800 text"}, False),
    ("update_record", {"id": "CC-1", "action": "comment", "text": "bad \udfff"}, False),
    ("send_message", {"to": ["P3"], "subject": "s", "body": "\ud800"}, False),
]


async def test_replay_reproduces_the_post_task_digest(staged: tuple[Path, Run]) -> None:
    candidate, run = staged
    pre = run.state.digest()
    assert pre == pre_task_state(candidate).digest()
    async with run.client() as client:
        for tool, arguments, permitted in SEQUENCE:
            before = run.state.digest()
            result = await client.call_tool(tool, arguments)
            assert result.is_error is (not permitted), (tool, arguments, result.content)
            if not permitted:
                assert "is not allowed" in error_text(result) and run.state.digest() == before
        record = (await client.call_tool("get_record", {"id": "CC-1"})).structured_content
        sent = (await client.call_tool("read_message", {"id": "SENT-0001"})).structured_content
        report = (await client.call_tool("read_file", {"path": "workspace/report.md"})).structured_content
        found = (await client.call_tool("search_files", {"query": "report v2"})).structured_content
    assert record["status"] == "closed"
    assert [(c["action"], c["text"]) for c in record["changes"]] == [
        ("comment", "Checked against SOP-001."), ("status", "closed"), ("attach", "report.md")
    ]
    assert sent["sent_by_you"] and sent["to"] == ["P3"] and sent["reply_to"] == "M1" and sent["sender"] == "P1"
    assert report["text"] == "# Report v2\n"
    assert [m["path"] for m in found["matches"]] == ["workspace/report.md"]
    assert (run.workspace / "report" / "summary.md").read_text() == "summary\n"
    assert not (run.workspace / "notes.txt").exists()

    events = run.events()
    assert [e.outcome for e in events[: len(SEQUENCE)]] == ["ok" if p else "denied" for _, _, p in SEQUENCE]
    changes = [e for e in events if e.state_change is not None]
    assert len(changes) == sum(p for _, _, p in SEQUENCE)
    assert changes[0].state_change["before"] == pre
    assert changes[-1].state_change["after"] == run.state.digest()

    replayed = replay_run(run.store, run.run_id, candidate, post_task_workspace=run.workspace)
    assert replayed.ok, replayed.problem
    assert replayed.replayed_digest == replayed.recorded_digest == run.state.digest()
    assert replayed.state_changes == len(changes) and replayed.events == len(events)
    assert "post-task state digest" in replayed.message


async def test_replay_names_the_event_when_the_pre_task_state_is_wrong(staged: tuple[Path, Run], tmp_path: Path) -> None:
    candidate, run = staged
    async with run.client() as client:
        await client.call_tool("read_file", {"path": "Shared/SOPs/SOP-001.md"})
        await client.call_tool("write_file", {"path": "report.md", "content": "v1\n"})
    (candidate / "workspace" / "draft.md").write_text("edited after staging\n")
    report = replay_run(run.store, run.run_id, candidate)
    assert not report.ok
    assert report.problem.startswith("event 2 (write_file) was applied to state ")
    assert "is " + str(candidate) + " the untouched pre-task state of this run?" in report.problem
    other_seat = project(tmp_path, "S2")
    assert "the run acted as seat S1" in replay_run(run.store, run.run_id, other_seat).problem


def test_final_records_and_sent_mail_in_the_grading_shape(projection: Path) -> None:
    view = SeatView(projection, permissive(projection), workspace=None)
    view.update_record("CC-1", "comment", "looks fine")
    view.update_record("CC-1", "status", "closed")
    view.send_message(["P3"], "done", "body")
    baseline = {rid: dict(rec) for rid, rec in view.records.items()}
    final = view.state.final_records(baseline)
    assert list(final) == ["CC-1"]
    assert final["CC-1"]["status"] == "closed"
    assert [(h["kind"], h.get("note"), h.get("status")) for h in final["CC-1"]["history"][-2:]] == [
        ("comment", "looks fine", None), ("status", None, "closed")
    ]
    assert view.state.sent_messages() == [
        {"id": "SENT-0001", "to": ["P3"], "subject": "done", "body": "body", "reply_to": None, "date": "2025-07-01"}
    ]


_ACTIONS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["a.md", "b.md", "report/c.md", "x.txt"]), st.text(max_size=20)),
    st.tuples(st.just("comment"), st.sampled_from(["CC-1", "APP-1"]), st.text(min_size=1, max_size=20)),
    st.tuples(st.just("status"), st.just("CC-1"), st.sampled_from(["closed", "open"])),
    st.tuples(st.just("send"), st.sampled_from(["P3", "P4", "list-all"]), st.text(max_size=20)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(_ACTIONS, max_size=12))
def test_any_sequence_of_changes_replays_to_the_same_digest(projection: Path, tmp_path: Path, actions: list) -> None:
    fingerprint = read_manifest(projection).fingerprint
    live = SeatState(fingerprint, MemoryWorkspace({"draft.md": b"draft\n"}))
    view = SeatView(projection, permissive(projection), state=live)
    logged = []
    for kind, target, text in actions:
        before = live.digest()
        try:
            if kind == "write":
                _, change = view.write_file(target, text)
            elif kind in ("comment", "status"):
                _, change = view.update_record(target, kind, text)
            else:
                _, change = view.send_message([target], "subject", text)
        except CallRefused:
            assert live.digest() == before
            continue
        logged.append(change.model_dump(mode="json"))
    replay = SeatState(fingerprint, MemoryWorkspace({"draft.md": b"draft\n"}))
    for payload in logged:
        assert payload["before"] == replay.digest()
        replay.apply(payload)
        assert payload["after"] == replay.digest()
    assert replay.digest() == live.digest()
    assert replay.snapshot() == live.snapshot()
