"""kill -9 of a logged organizer at each step of one move: before any rename, after each rename,
after the move's event is stored and after the journal is dropped. At every point the next server
either starts (nothing of the killed run is left to log) or refuses until `worldkit log recover
RUN` settles the move into the killed run's own log; then the killed run's log, replayed onto the
packet's inbox, gives exactly the tree on disk, and the next run logs nothing of it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures.jira_export import write_jira_export
from worldkit._cli.main import run
from worldkit.infoorg.organizer import InterruptedMove, Organizer
from worldkit.infoorg.overlays import inbox_inventory, stage_workspace
from worldkit.infoorg.packets import build_packets, write_packets
from worldkit.infoorg.validity import check_workspace
from worldkit.mcp.organizer import EventMoveLog, check_settled
from worldkit.mcp.session import open_run
from worldkit.store import Store, list_runs, read_events, state_changes, verify_chain

pytestmark = pytest.mark.usefixtures("restore_check_registry")

DRIVER = Path(__file__).with_name("organizer_kill_driver.py")
REPO = Path(__file__).resolve().parents[2]
MOVED = 3
STEPS = ["journal", *(f"rename-{n}" for n in range(1, MOVED + 1)), "logged", "dropped"]
UNSETTLED = {"journal", *(f"rename-{n}" for n in range(1, MOVED + 1))}
"""Kill points that leave a journal whose move the killed run has not logged."""


@pytest.fixture(scope="module")
def packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kill-steps")
    write_packets(build_packets("thread", write_jira_export(root / "export"), 1), root / "packets")
    (found,) = sorted((root / "packets").iterdir())
    return found


def _replayed(packet: Path, runs: list[str], store: Store, scratch: Path) -> dict:
    workspace = scratch / "replay"
    shutil.rmtree(workspace, ignore_errors=True)
    shutil.copytree(packet / "candidate" / "inbox", workspace / "inbox")
    organizer = Organizer(workspace, inventory=inbox_inventory(packet))
    for run_id in runs:
        for event in state_changes(store, run_id, key=None):
            organizer.replay(event.state_change)
    return check_workspace(workspace, organizer.inventory, hash_bytes=False).paths


@pytest.mark.parametrize("step", STEPS)
def test_a_kill_at_each_step_of_a_move_settles_into_the_killed_runs_log(
    step: str, packet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace, url = tmp_path / "ws", f"sqlite:///{tmp_path / 'store.db'}"
    stage_workspace(packet, workspace)
    ids = sorted(inbox_inventory(packet))[:MOVED]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    killed = subprocess.run(
        [sys.executable, str(DRIVER), str(packet), str(workspace), url, "killed", step, ",".join(ids), "a/b"],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    journal = workspace / ".organizer" / "journal.json"
    assert journal.exists() == (step not in ("dropped",))

    with Store.open(url) as store:
        if step in UNSETTLED:
            with pytest.raises(InterruptedMove, match="worldkit log recover killed"):
                check_settled(workspace, store, "next")
        else:
            check_settled(workspace, store, "next")
    # The CLI server refuses too, before it claims its run.
    if step in UNSETTLED:
        code = run(["infoorg", "serve", "--packet", str(packet), "--workspace", str(workspace),
                    "--store", url, "--run-id", "next"])  # fmt: skip
        _, err = capsys.readouterr()
        assert code == 2 and "did not finish" in err and "worldkit log recover killed" in err
        with Store.open(url) as store:
            assert [r.run_id for r in list_runs(store)] == ["killed"]

    assert run(["log", "recover", "killed", "--workspace", str(workspace), "--store", url]) == 0
    out, _ = capsys.readouterr()
    if step in UNSETTLED:
        assert "logged now" in out
    elif step == "logged":
        assert "already in the log" in out
    else:
        assert "no interrupted move" in out
    assert not journal.exists()

    with Store.open(url) as store:
        assert verify_chain(store, "killed", key=None).ok
        disk = check_workspace(workspace, inbox_inventory(packet), hash_bytes=False).paths
        assert _replayed(packet, ["killed"], store, tmp_path) == disk
        assert all(disk[i] == ("a", "b") for i in ids)  # every move is rolled forward
        moves = [e for e in read_events(store, "killed") if e.tool == "move_files"]
        assert len(moves) == 1
        assert bool((moves[0].detail or {}).get("recovered")) == (step in UNSETTLED)
    # `worldkit log replay` of the killed run equals its disk.
    assert run(["log", "replay", "killed", "--packet", str(packet), "--workspace", str(workspace), "--store", url]) == 0
    assert capsys.readouterr()[0].startswith("ok: runs killed: 1 logged move(s) replayed")
    with Store.open(url) as store:
        # The next server starts and logs nothing of the killed run's move.
        with open_run(store, "next", "EMP-ORG-001") as log:
            Organizer(workspace, move_log=EventMoveLog(log))
        assert list(read_events(store, "next")) == []


def test_recover_refuses_a_journal_of_another_run(packet: Path, tmp_path: Path, capsys) -> None:
    workspace, url = tmp_path / "ws", f"sqlite:///{tmp_path / 'store.db'}"
    stage_workspace(packet, workspace)
    ids = sorted(inbox_inventory(packet))[:2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])}
    subprocess.run([sys.executable, str(DRIVER), str(packet), str(workspace), url, "killed", "rename-1",
                    ",".join(ids), "x"], env=env, capture_output=True, timeout=120)  # fmt: skip
    with Store.open(url) as store:
        with open_run(store, "other", "EMP-ORG-001"):
            pass
    assert run(["log", "recover", "other", "--workspace", str(workspace), "--store", url]) == 2
    _, err = capsys.readouterr()
    assert "belongs to run killed, not other" in err
    assert (workspace / ".organizer" / "journal.json").exists()


def test_log_replay_names_a_record_the_disk_disagrees_on(packet: Path, tmp_path: Path, capsys) -> None:
    workspace, url = tmp_path / "ws", f"sqlite:///{tmp_path / 'store.db'}"
    stage_workspace(packet, workspace)
    first = sorted(inbox_inventory(packet))[0]
    with Store.open(url) as store, open_run(store, "r1", "EMP-ORG-001") as log:
        Organizer(workspace, inventory=inbox_inventory(packet), move_log=EventMoveLog(log)).move_files([first], ["a"])
    (workspace / "b").mkdir()
    (workspace / "a" / f"{first}.txt").rename(workspace / "b" / f"{first}.txt")  # a move the log never saw
    assert run(["log", "replay", "r1", "--packet", str(packet), "--workspace", str(workspace), "--store", url]) == 1
    _, err = capsys.readouterr()
    assert f"{first}: replayed a, on disk b" in err
