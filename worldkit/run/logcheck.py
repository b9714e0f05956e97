"""A finished run's event log, checked against the anchor its run folder keeps.

`worldkit run` anchors the log's head in the run folder (`log-anchor.json`) and copies the anchor
into the execution record. Before a run is graded again, its log is checked: the two anchors must
agree, the record's trajectory must be an intact chain ending at the anchor, and — given the
store — the stored log must end there too and equal the trajectory. A log cut short, rewritten
or recomputed (detected for certain with a signed anchor) is refused with `LogTampered`.
This module never repairs anything and never grades.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.errors import LogTampered
from worldkit.record.execution import RECORD_FILENAME, ExecutionRecord
from worldkit.store import (
    ANCHOR_FILENAME,
    LogAnchor,
    Store,
    read_anchor,
    verified_events,
    verify_exported,
)
from worldkit.store.anchor import parse_anchor

__all__ = ["AnchorCopies", "anchor_copies", "check_run_log", "run_anchor"]


def run_anchor(run_dir: Path, record: ExecutionRecord) -> LogAnchor:
    """The run's log anchor: the run folder's `log-anchor.json`, which must equal the record's copy."""
    anchor_file = Path(run_dir) / ANCHOR_FILENAME
    if not anchor_file.exists():
        raise LogTampered(
            f"run folder {run_dir} has no {ANCHOR_FILENAME}: the log's head cannot be checked; "
            "a run folder must keep the anchor `worldkit run` wrote"
        )
    anchor = read_anchor(anchor_file)
    if record.log_anchor is None:
        raise LogTampered(
            f"the execution record in {run_dir} has no log_anchor; it was edited or is not a run's record"
        )
    if parse_anchor(record.log_anchor, source=str(Path(run_dir) / RECORD_FILENAME)) != anchor:
        raise LogTampered(f"{anchor_file} and the execution record's log_anchor differ: one of them was rewritten")
    if anchor.run_id != record.run_id:
        raise LogTampered(f"{anchor_file} anchors run {anchor.run_id}, but the record is run {record.run_id}")
    return anchor


def check_run_log(run_dir: Path, record: ExecutionRecord, store_url: str | None) -> list[dict[str, Any]]:
    """The run's events, verified: the record's trajectory as a chain against the anchor and,
    with `store_url`, the stored log against the anchor and equal to the trajectory."""
    anchor = run_anchor(run_dir, record)
    report = verify_exported(record.trajectory, anchor)
    if not report.ok:
        raise LogTampered(f"the execution record's trajectory: {report.message}")
    if store_url is None:
        return record.trajectory
    with Store.open(store_url, create=False) as store:
        _report, events = verified_events(store, record.run_id, anchor=anchor)
    stored = [e.model_dump(mode="json") for e in events]
    if stored != record.trajectory:
        pairs = zip(stored, record.trajectory, strict=False)
        first = next((i for i, (a, b) in enumerate(pairs, 1) if a != b), min(len(stored), len(record.trajectory)) + 1)
        raise LogTampered(f"the stored log of run {record.run_id} and the record's trajectory differ from event {first}")
    return stored


@dataclass
class AnchorCopies:
    """Every copy of one run's log anchor that was found, and what is wrong with them."""

    run_id: str
    copies: dict[str, LogAnchor] = field(default_factory=dict)
    """Where each copy was read (a file, `FILE#log_anchor`, `STORE#RUN`) → the anchor."""
    problems: list[str] = field(default_factory=list)
    """A copy missing, unreadable or disagreeing with another: each fails the event-logs check."""
    declared_unanchored: bool = False
    """run.json says the session was served without an anchor."""

    def anchor(self) -> LogAnchor | None:
        """The anchor to check the log against: a final copy if any (all final copies agree, else
        a problem was noted), else the furthest in-progress one."""
        if not self.copies:
            return None
        return max(self.copies.values(), key=lambda a: (a.final, a.seq))


def anchor_copies(run_dir: Path, *, anchors_dir: Path | None = None, stored: dict[str, Any] | None = None) -> AnchorCopies:
    """The anchors of the run in `run_dir`, looked for everywhere they are written: the folder's
    `log-anchor.json`, its execution record's `log_anchor`, the anchors folder (`anchors_dir/RUN.json`,
    where `worldkit serve` without --out anchors) and the record stored with the log (`stored`:
    run id → record JSON). A folder whose run wrote an anchor must still hold it: a copy that is
    gone while another remains is a problem, and so is a run with no copy at all unless its
    run.json declares it unanchored."""
    from worldkit.record.execution import read_record
    from worldkit.run.folder import read_run_folder

    root = Path(run_dir)
    anchor_file, record_file = root / ANCHOR_FILENAME, root / RECORD_FILENAME
    problems: list[str] = []
    copies: dict[str, LogAnchor] = {}
    run_id: str | None = None
    declared = False
    if (root / "run.json").is_file():
        try:
            folder = read_run_folder(root)
            run_id, declared = folder.run_id, folder.unanchored
        except Exception as error:  # noqa: BLE001 - an unreadable run.json is reported, not fatal here
            problems.append(f"{root / 'run.json'}: {getattr(error, 'message', error)}")
    record = None
    if record_file.is_file():
        try:
            record = read_record(record_file)
            run_id = run_id or record.run_id
            if record.log_anchor is not None:
                copies[f"{record_file}#log_anchor"] = parse_anchor(record.log_anchor, source=str(record_file))
        except Exception as error:  # noqa: BLE001
            problems.append(f"{record_file}: {getattr(error, 'message', error)}")
    if anchor_file.exists():
        try:
            copies[str(anchor_file)] = read_anchor(anchor_file)
        except LogTampered as error:
            problems.append(error.message)
    run_id = run_id or next((a.run_id for a in copies.values()), None) or root.name
    if anchors_dir is not None and (anchors_dir / f"{run_id}.json").is_file():
        try:
            copies[str(anchors_dir / f"{run_id}.json")] = read_anchor(anchors_dir / f"{run_id}.json")
        except LogTampered as error:
            problems.append(error.message)
    if stored and run_id in stored:
        held = stored[run_id].get("log_anchor")
        if held is not None:
            copies[f"store record of {run_id}"] = parse_anchor(held, source=f"store record of {run_id}")
    for where, anchor in copies.items():
        if anchor.run_id != run_id:
            problems.append(f"{where} anchors run {anchor.run_id}, but the run folder is run {run_id}")
    finals = {a for a in copies.values() if a.final}
    if len({a.model_dump_json() for a in finals}) > 1:
        problems.append(f"the final anchors of run {run_id} differ ({', '.join(sorted(copies))}): one was rewritten")
    if copies and not anchor_file.exists():
        problems.append(f"{anchor_file} is gone, but {', '.join(sorted(copies))} still holds the run's anchor: "
                        "the run folder's copy was deleted")  # fmt: skip
    if record is not None and record.log_anchor is None and copies:
        problems.append(f"{record_file} has no log_anchor, but {', '.join(sorted(copies))} does: it was removed")
    if not copies and not declared:
        problems.append(f"run {run_id} in {root} has no log anchor anywhere (folder, record, anchors folder, store); "
                        "a run that was never anchored must say so (`\"unanchored\": true` in run.json)")  # fmt: skip
    return AnchorCopies(run_id=run_id, copies=copies, problems=problems, declared_unanchored=declared)
