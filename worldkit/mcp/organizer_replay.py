"""Replay InfoOrgBench organizer runs: their logged moves onto the packet's inbox, against the disk.

An organizer run's pre-task state is the packet's inbox (or the tree earlier runs on the same
workspace left: name them, in order, before the run). Each run's chain is verified first; its
`infoorg.move_files` state changes are re-applied by an `Organizer` over a scratch copy of the
inbox, and the record paths it gives are compared with the workspace on disk. After a kill and
`worldkit log recover`, every run's log replays to the tree on disk.

This module never writes to the store, the packet or the workspace it checks.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from worldkit._model import Model
from worldkit.errors import UsageError
from worldkit.store import Store, state_changes

__all__ = ["OrganizerReplay", "replay_organizer_runs"]


class OrganizerReplay(Model):
    """What replaying organizer runs onto a packet's inbox found."""

    runs: list[str]
    """The runs replayed, in order."""
    moves: int
    """Logged move events re-applied."""
    workspace: str
    """The workspace compared."""
    ok: bool
    """True when the replayed tree equals the workspace on disk."""
    differences: list[str]
    """Records whose replayed folder differs from the disk (at most 20 shown), or the problem."""

    @property
    def message(self) -> str:
        runs = ", ".join(self.runs)
        if self.ok:
            return f"runs {runs}: {self.moves} logged move(s) replayed onto the packet's inbox give the tree in {self.workspace}"
        return f"runs {runs}: the replayed tree differs from {self.workspace}: " + "; ".join(self.differences)


def replay_organizer_runs(store: Store, run_ids: Sequence[str], packet_dir: Path, workspace: Path) -> OrganizerReplay:
    """Re-apply the moves of `run_ids` (in order) onto `packet_dir`'s inbox; compare with `workspace`."""
    from worldkit.infoorg.organizer import Organizer, OrganizerRefused
    from worldkit.infoorg.overlays import inbox_inventory
    from worldkit.infoorg.validity import check_workspace

    inbox = Path(packet_dir) / "candidate" / "inbox"
    if not inbox.is_dir():
        raise UsageError(f"--packet {packet_dir} has no candidate/inbox/; pass the packet the runs served")
    if not Path(workspace).is_dir():
        raise UsageError(f"--workspace {workspace} is not a folder; pass the organizer's workspace")
    inventory = inbox_inventory(packet_dir)
    changes = [event for run in run_ids for event in state_changes(store, run)]
    moves = [e for e in changes if (e.state_change or {}).get("kind") == "infoorg.move_files"]
    with tempfile.TemporaryDirectory(prefix="worldkit-organizer-replay-") as scratch:
        replay = Path(scratch) / "replay"
        shutil.copytree(inbox, replay / "inbox")
        organizer = Organizer(replay, inventory=inventory)
        for event in moves:
            try:
                organizer.replay(event.state_change or {})
            except OrganizerRefused as refusal:
                return OrganizerReplay(runs=list(run_ids), moves=len(moves), workspace=str(workspace), ok=False,
                                       differences=[f"run {event.run_id} event {event.seq}: {refusal.message}"])
        replayed = check_workspace(replay, inventory, hash_bytes=False).paths
    disk = check_workspace(Path(workspace), inventory, hash_bytes=False).paths
    differing = sorted(r for r in set(replayed) | set(disk) if replayed.get(r) != disk.get(r))
    return OrganizerReplay(
        runs=list(run_ids), moves=len(moves), workspace=str(workspace), ok=not differing,
        differences=[f"{r}: replayed {'/'.join(replayed.get(r, ('?',)))}, on disk {'/'.join(disk.get(r, ('?',)))}"
                     for r in differing[:20]],
    )  # fmt: skip
