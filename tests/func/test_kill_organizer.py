"""kill -9 of the organizer server (`worldkit infoorg serve`) mid-move, 30 times on one workspace:
after each kill, `worldkit log recover RUN` settles an interrupted move into the killed run's own
log (the next server refuses to start until then), and replaying every run's logged moves onto
the packet's inbox gives exactly the tree on disk; no run's log holds another run's move.

A move is logged before its journal is dropped, and journal recovery logs the moves it completes
unless the journal's run already holds them; so no kill point — before the journal, between
renames, after the last rename, after the event — leaves the log and the disk disagreeing
(`test_kill_organizer_steps.py` kills at each of those points deterministically).

Each check compares the disk with every run's moves replayed onto the inbox. The replayed tree is
kept between checks: when the events replayed last time are still, unchanged and in order, the start
of the log, only the events after them are replayed onto it (replay is a fold over the events, so
the tree is the one a replay from the inbox gives); anything else replays from the inbox again.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.fixtures.jira_export import write_jira_export
from tests.func.kill_support import drive_and_kill, server_params
from worldkit._cli.main import run as cli_run
from worldkit.infoorg.organizer import Organizer
from worldkit.infoorg.overlays import inbox_inventory
from worldkit.infoorg.packets import build_packets, write_packets
from worldkit.infoorg.validity import check_workspace
from worldkit.store import Event, Store, state_changes, verify_chain

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("restore_check_registry")]

KILLS = 30
FOLDERS = ["alpha", "beta", "gamma", "delta"]


class _Replay:
    """Every run's logged moves replayed onto the packet's inbox, in `scratch/replay`."""

    def __init__(self, packet: Path, scratch: Path) -> None:
        self.packet, self.workspace = packet, scratch / "replay"
        self.applied: list[Event] = []  # the events the tree on disk is the replay of, in order

    def paths(self, runs: list[str], store: Store) -> dict:
        events = [event for run in runs for event in state_changes(store, run, key=None)]
        if events[: len(self.applied)] != self.applied:  # the log is not an extension of what was replayed
            self.applied = []
        if not self.applied:
            shutil.rmtree(self.workspace, ignore_errors=True)
            shutil.copytree(self.packet / "candidate" / "inbox", self.workspace / "inbox")
        organizer = Organizer(self.workspace, inventory=inbox_inventory(self.packet))
        done, self.applied = len(self.applied), []  # a replay that raises leaves a tree to start again
        for event in events[done:]:
            organizer.replay(event.state_change)
        self.applied = events
        return check_workspace(self.workspace, organizer.inventory, hash_bytes=False).paths


@pytest.fixture
def replay_scratch(tmp_path: Path) -> Iterator[Path]:
    """Where the log is replayed for comparison: in memory (tmpfs) where the machine has one. The
    organizer's replay writes as durably as a live move (journal, fsyncs), which a scratch copy
    does not need; the server under test keeps its workspace and store on disk."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        scratch = Path(tempfile.mkdtemp(prefix="worldkit-replay-", dir=shm))
        try:
            yield scratch
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    else:
        yield tmp_path


def test_thirty_kills_of_the_organizer_keep_replay_equal_to_disk(tmp_path: Path, replay_scratch: Path) -> None:
    write_packets(build_packets("thread", write_jira_export(tmp_path / "export"), 1), tmp_path / "packets")
    (packet,) = sorted((tmp_path / "packets").iterdir())
    ids = sorted(inbox_inventory(packet))
    workspace, store_url = tmp_path / "ws", f"sqlite:///{tmp_path / 'store.db'}"
    rng = random.Random(7)

    def move(n: int) -> tuple[str, dict]:
        chosen = rng.sample(ids, k=min(len(ids), rng.randint(1, 6)))
        depth = rng.randint(1, 2)
        return "move_files", {"ids": chosen, "destination": rng.sample(FOLDERS, k=depth)}

    runs: list[str] = []
    replayed = _Replay(packet, replay_scratch)
    tally = {"kills": 0, "answered_moves": 0, "recovered_moves_logged": 0, "replay_equal": 0}

    def check(store: Store) -> None:
        for run in runs:
            assert verify_chain(store, run, key=None).ok
        disk = check_workspace(workspace, inbox_inventory(packet), hash_bytes=False).paths
        assert replayed.paths(runs, store) == disk, f"after kill {tally['kills']}"
        tally["replay_equal"] += 1

    for k in range(KILLS + 1):
        run = f"org-{k}"
        runs.append(run)
        pidfile = tmp_path / f"pid-{k}"
        argv = ["infoorg", "serve", "--packet", str(packet), "--workspace", str(workspace),
                "--store", store_url, "--run-id", run]  # fmt: skip
        params = server_params(argv, pidfile, tmp_path)

        async def started(client: Client) -> None:
            # The server is up: an interrupted move of the killed one was rolled forward (and
            # logged) while it started. The replay of every run so far must equal the disk.
            with Store.open(store_url) as store:
                check(store)

        if k == KILLS:
            async def last() -> None:
                async with Client(params) as client:
                    await started(client)
            anyio.run(last)
            break
        answered = drive_and_kill(params, pidfile, move, rng=rng, kill_after=(0.0, 0.5), before=started)
        tally["kills"] += 1
        tally["answered_moves"] += len(answered)
        assert cli_run(["log", "recover", run, "--workspace", str(workspace), "--store", store_url]) == 0
        assert not (workspace / ".organizer" / "journal.json").exists()
    with Store.open(store_url) as store:
        for run in runs:
            recovered = [e for e in state_changes(store, run, key=None) if (e.detail or {}).get("recovered")]
            assert all(e.detail["journal_run"] == run for e in recovered)  # each in its own run's log
            tally["recovered_moves_logged"] += len(recovered)
    print("organizer kill -9 tally:", tally)
    assert tally["kills"] == KILLS and tally["replay_equal"] == KILLS + 1
