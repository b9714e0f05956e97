"""Write-ahead seat mutations: a kill -9 at each instant of a write leaves the disk consistent with
the log once recovery has run — the event before the file, never the file before the event.

A child process serves the seat (real event log in a SQLite file, real MCP client in memory),
writes `report.md` once, then writes it again and SIGKILLs itself at a chosen point of the second
write: before its event is stored (`before-log`), or after the event is committed and before the
rename (`after-log`).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.unit.mcp.seat_support import Run, permissive, project
from worldkit.mcp.confine import settle_temp_files
from worldkit.mcp.recover import logged_writes, recover_workspace
from worldkit.mcp.replay import replay_run
from worldkit.store import Store, read_events

pytestmark = pytest.mark.anyio

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import anyio
    from tests.unit.mcp.seat_support import Run, permissive
    from worldkit.mcp import confine
    from worldkit.store import eventlog

    projection, workspace, store, when = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    armed = []

    def die() -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    record, commit = eventlog.EventLog.record, confine.StagedWrite.commit

    def killing_record(self, tool, *args, **kwargs):
        if armed and when == "before-log":
            die()
        return record(self, tool, *args, **kwargs)

    def killing_commit(self):
        if armed and when == "after-log":
            die()
        return commit(self)

    eventlog.EventLog.record, confine.StagedWrite.commit = killing_record, killing_commit
    run = Run(projection, permissive(projection), workspace=workspace, run_id="wal", store_url=store)

    async def main() -> None:
        async with run.client() as client:
            first = await client.call_tool("write_file", {"path": "report.md", "content": "first"})
            assert not first.is_error, first
            armed.append(True)
            await client.call_tool("write_file", {"path": "report.md", "content": "second"})

    anyio.run(main)
    """
)


def _killed_write(tmp_path: Path, when: str) -> tuple[Path, Path, str]:
    projection = project(tmp_path, "S1")
    workspace = tmp_path / f"ws-{when}"
    store = f"sqlite:///{tmp_path / f'{when}.db'}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(projection), str(workspace), store, when],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == -9, done.stderr
    return projection, workspace, store


@pytest.mark.parametrize(
    ("when", "events", "content", "completed", "removed"),
    [("before-log", 1, "first", 0, 1), ("after-log", 2, "second", 1, 0)],
)
def test_a_write_killed_at_either_instant_is_settled_as_the_log_says(
    tmp_path: Path, when: str, events: int, content: str, completed: int, removed: int
) -> None:
    projection, workspace, url = _killed_write(tmp_path, when)
    leftovers = list(workspace.glob(".wk-tmp-*"))
    assert len(leftovers) == 1 and leftovers[0].read_text() == "second"  # staged durably, not yet visible
    assert (workspace / "report.md").read_text() == "first"
    with Store.open(url) as store:
        assert [e.tool for e in read_events(store, "wal")] == ["write_file"] * events
        # Without recovery the disk and the log disagree after an after-log kill (the temp file
        # is also an extra workspace file either way): replay says so.
        assert not replay_run(store, "wal", projection, post_task_workspace=workspace).ok
        report = recover_workspace(store, "wal", workspace)
        assert (len(report.completed), len(report.removed)) == (completed, removed)
        assert (workspace / "report.md").read_text() == content
        assert not list(workspace.glob(".wk-tmp-*"))
        replayed = replay_run(store, "wal", projection, post_task_workspace=workspace)
        assert replayed.ok, replayed.message
        # Settling again changes nothing.
        assert recover_workspace(store, "wal", workspace).completed == []


def test_settling_only_completes_what_the_log_names(tmp_path: Path) -> None:
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)  # fmt: skip
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.md").write_text("old")
    (tmp_path / "sub" / f".wk-tmp-{dead}-{'1' * 16}").write_text("new")  # logged for sub/a.md: completed
    (tmp_path / f".wk-tmp-{dead}-{'2' * 16}").write_text("new")  # same content, other folder: removed
    (tmp_path / "sub" / f".wk-tmp-{dead}-{'3' * 16}").write_text("unlogged")  # removed
    live = tmp_path / f".wk-tmp-{os.getpid()}-{'4' * 16}"
    live.write_text("in flight")  # a live writer's: left alone
    import hashlib

    logged = {"sub/a.md": hashlib.sha256(b"new").hexdigest(), "b.md": hashlib.sha256(b"x").hexdigest()}
    completed, removed = settle_temp_files(tmp_path, logged)
    assert completed == ["sub/a.md"]
    assert sorted(removed) == sorted([f".wk-tmp-{dead}-{'2' * 16}", f"sub/.wk-tmp-{dead}-{'3' * 16}"])
    assert (tmp_path / "sub" / "a.md").read_text() == "new" and live.exists()
    assert sorted(p.name for p in (tmp_path / "sub").iterdir()) == ["a.md"]


async def test_a_write_whose_event_cannot_be_stored_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from worldkit.errors import StoreError
    from worldkit.store import EventLog

    real, armed = EventLog.record, []

    def failing(self: EventLog, tool: str, *args: object, **kwargs: object) -> object:
        if armed and tool == "write_file" and kwargs.get("state_change"):
            raise StoreError("the store is gone")
        return real(self, tool, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(EventLog, "record", failing)
    projection = project(tmp_path, "S1")
    run = Run(projection, permissive(projection), workspace=tmp_path / "ws")
    try:
        async with run.client() as client:
            assert not (await client.call_tool("write_file", {"path": "a.md", "content": "one"})).is_error
            before = run.state.digest()
            armed.append(True)
            result = await client.call_tool("write_file", {"path": "new/b.md", "content": "two"})
            assert result.is_error
            assert sorted(p.relative_to(tmp_path / "ws").as_posix() for p in (tmp_path / "ws").rglob("*")) == ["a.md"]
            assert run.state.digest() == before  # no temp file, no folder, no state change
            assert logged_writes(run.store, run.run_id) == {"a.md": run.state.workspace_files()["a.md"]}
            assert [e.outcome for e in run.events()] == ["ok", "error"]
    finally:
        run.close()
