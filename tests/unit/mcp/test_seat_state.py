"""Permitted mutations change the run's state, refused ones change nothing, and replaying the log's
state changes onto the pre-task state reproduces the post-task digest exactly."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.mcp.seat_support import Run, error_text, permissive, project
from worldkit.errors import PathRefused, StoreError
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


def _content(text: str) -> dict[str, str]:
    return {"content": text, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


# The digests of these states as worldkit has always computed them (canonical JSON of the whole
# state): logs written before the digest was kept incrementally must still replay.
_PINNED_CHANGES = [
    {"kind": "write_file", "path": "report.md", **_content("résumé\n")},
    {"kind": "update_record", "record": "CC-é1", "action": "comment", "text": 'ok "quoted"', "by": "P1", "date": "2025-07-01"},
    {"kind": "update_record", "record": "APP-1", "action": "status", "text": "closed", "by": "P1", "date": "2025-07-01"},
    {"kind": "write_file", "path": "a.md", **_content("a\n")},
    {"kind": "send_message", "id": "SENT-0001", "sender": "P1", "to": ["P3"], "subject": "s", "body": "b",
     "reply_to": None, "date": "2025-07-01"},
    {"kind": "write_file", "path": "draft.md", **_content("v2\n")},
]
_PINNED_DIGESTS = [
    "1188a9b5c566b9ffcd29fe35da61b10d258fc3fbe8cf141908f113c942103323",
    "b9fb46c9187d774e676dc04ee53d3e34fa7528b6c8bd2174d22cee00ae5d796f",
    "f903c9349345c023bd4ed0c7bb4a6fd15dddfd940d09747911b6fdd8210441b4",
    "c6b3c2d4fcb17cc29009682ca21bebd91fb6b598a7579616b4c80b1e900c9ebe",
    "fd43af0fd7bed8e6a125602a69615ab2d588ac9928c36bcf57e0a4dec105cf59",
    "9db64e3ad48892a6f9d4df8641b50a9f67f642b91963dd29af8fe4d2b27753e7",
    "607bd0e0fadb23e16d943b1e840c8fd50111fd4ea5097ff598e364db5df0d11a",
]


def test_state_digests_are_the_ones_logs_were_written_with() -> None:
    state = SeatState("f" * 64, MemoryWorkspace({"draft.md": b"draft\n", "été/z.md": b"z\n"}))
    found = [state.digest()]
    for change in _PINNED_CHANGES:
        pending = state.stage(change)
        pending.commit()
        assert pending.after == state.digest() == state.reference_digest()
        found.append(state.digest())
    assert found == _PINNED_DIGESTS


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["write", "record"]), st.text(min_size=1, max_size=6), st.text(max_size=8)),
        max_size=30,
    )
)
def test_the_kept_digest_equals_the_digest_of_the_whole_state(steps: list) -> None:
    """Keys in any order (new ones sorting first, last, between; unicode) and rewrites of old ones:
    each staged `after` and each `digest()` equal the canonical-JSON digest of the whole state."""
    state = SeatState("0" * 64, MemoryWorkspace({"m.md": b"m\n"}))
    for kind, key, text in steps:
        if kind == "write":
            change = {"kind": "write_file", "path": f"d/{key}.md".replace("\x00", "0"), **_content(text)}
        else:
            change = {"kind": "update_record", "record": key, "action": "comment", "text": text or "x",
                      "by": "P1", "date": "2025-07-01"}
        try:
            pending = state.stage(change)
        except (StoreError, PathRefused):  # a path the workspace refuses (e.g. `\\`): nothing staged
            continue
        pending.commit()
        assert pending.after == state.digest() == state.reference_digest()


def test_mail_recipients_are_de_duplicated_and_bounded(projection: Path) -> None:
    from worldkit.mcp.seat import MAX_RECIPIENTS

    view = SeatView(projection, permissive(projection), workspace=None)
    result, change = view.send_message(["P3"] * 300 + ["list-all", "P3"], "once each", "body")
    assert change.to == ["P3", "list-all"] and result.to == ["P3", "list-all"]
    assert [m["to"] for m in view.state.sent_messages()] == [["P3", "list-all"]]
    with pytest.raises(CallRefused, match="100000 recipients"):  # refused before any is looked at
        view.send_message(["P3"] * 100_000, "flood", "body")
    many = [f"P{i}" for i in range(MAX_RECIPIENTS + 1)]
    with pytest.raises(CallRefused, match=f"address at most {MAX_RECIPIENTS}"):
        view.send_message(many, "too many", "body")
    assert len(view.state.sent_messages()) == 1  # the refused one changed nothing
