"""Replay a run: re-apply its logged state changes to the pre-task state and check the digests.

The chain is verified first (`state_changes` refuses a broken log). Each state-changing event
carries the state digest the server saw before and after applying it; replay starts from the
pre-task state rebuilt in memory, checks `before`, applies the change, checks `after`, and finally
compares the replayed post-task digest with the one the run recorded. The first disagreement is
reported with the event that shows it.

This module must never write to the store or to the pre-task directory.
"""

from __future__ import annotations

from pathlib import Path

from worldkit._model import Model
from worldkit.errors import StoreError
from worldkit.materialize.manifest import read_manifest
from worldkit.mcp.state import SeatState, parse_change, pre_task_state, scan_workspace
from worldkit.store import Store, get_run, state_changes

__all__ = ["ReplayReport", "replay_run"]


class ReplayReport(Model):
    """What replaying a run's state changes onto its pre-task state found."""


    run_id: str
    """The run replayed."""
    seat: str
    """The run's seat."""
    events: int
    """Events in the run's (verified) chain."""
    state_changes: int
    """State-changing events re-applied."""
    pre_task_digest: str
    """Digest of the pre-task state replay started from."""
    replayed_digest: str
    """Digest after re-applying every state change."""
    recorded_digest: str | None
    """Post-task digest the run recorded (with its last state change); None if it changed nothing."""
    ok: bool
    """True if every change re-applied onto the digest it was logged with and the final digests agree."""
    problem: str | None = None
    """The first disagreement, naming the event."""

    @property
    def message(self) -> str:
        if self.ok:
            return (
                f"run {self.run_id}: {self.state_changes} state change{'' if self.state_changes == 1 else 's'} "
                f"of {self.events} events replayed; "
                f"post-task state digest {self.replayed_digest} reproduced"
            )
        return f"run {self.run_id}: replay failed: {self.problem}"


def replay_run(
    store: Store, run_id: str, pre_task_dir: Path, *, post_task_workspace: Path | None = None
) -> ReplayReport:
    """Replay run `run_id` onto the pre-task state in `pre_task_dir` (a projection or candidate package).

    `post_task_workspace`, when given, is the workspace folder as the run left it: its files must
    equal the replayed workspace. Raises `LogTampered` if the chain is broken.
    """
    head = get_run(store, run_id)
    changes = list(state_changes(store, run_id))
    state = pre_task_state(pre_task_dir)
    pre = state.digest()
    seat = _projection_seat(pre_task_dir)

    def report(problem: str | None, recorded: str | None) -> ReplayReport:
        return ReplayReport(
            run_id=run_id,
            seat=head.seat,
            events=head.seq,
            state_changes=len(changes),
            pre_task_digest=pre,
            replayed_digest=state.digest(),
            recorded_digest=recorded,
            ok=problem is None,
            problem=problem,
        )

    if seat != head.seat:
        return report(
            f"the run acted as seat {head.seat} but {pre_task_dir} is the pre-task state of seat {seat}", None
        )
    recorded: str | None = None
    for event in changes:
        assert event.state_change is not None
        try:
            change = parse_change(event.state_change)
        except StoreError as error:
            return report(f"event {event.seq} ({event.tool}): {error.message}", recorded)
        if change.before is not None and change.before != state.digest():
            where = "the pre-task state" if recorded is None else "the state left by the previous change"
            return report(
                f"event {event.seq} ({event.tool}) was applied to state {change.before[:16]}… but replay has "
                f"{state.digest()[:16]}… ({where}); is {pre_task_dir} the untouched pre-task state of this run?",
                recorded,
            )
        try:
            state.apply(change)
        except StoreError as error:
            return report(f"event {event.seq} ({event.tool}) cannot be re-applied: {error.message}", recorded)
        recorded = change.after
        if change.after is not None and change.after != state.digest():
            return report(
                f"event {event.seq} ({event.tool}) logged state {change.after[:16]}… after it, replay gives "
                f"{state.digest()[:16]}…",
                recorded,
            )
    if post_task_workspace is not None:
        problem = _compare_workspace(state, post_task_workspace)
        if problem:
            return report(problem, recorded)
    return report(None, recorded)


def _projection_seat(pre_task_dir: Path) -> str:
    root = Path(pre_task_dir)
    projection = root / "projection" if (root / "projection" / "manifest.json").is_file() else root
    return read_manifest(projection).inputs.seat


def _compare_workspace(state: SeatState, workspace: Path) -> str | None:
    actual = scan_workspace(Path(workspace))
    replayed = state.workspace_files()
    if actual == replayed:
        return None
    missing = sorted(set(replayed) - set(actual))
    extra = sorted(set(actual) - set(replayed))
    changed = sorted(p for p in set(actual) & set(replayed) if actual[p] != replayed[p])
    groups = (("missing", missing), ("unexpected", extra), ("changed", changed))
    parts = [f"{label}: {', '.join(paths[:5])}" for label, paths in groups if paths]
    return f"the workspace at {workspace} differs from the replayed one ({'; '.join(parts)})"
