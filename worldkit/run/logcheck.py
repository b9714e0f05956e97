"""A finished run's event log, checked against the anchor its run folder keeps.

`worldkit run` anchors the log's head in the run folder (`log-anchor.json`) and copies the anchor
into the execution record. Before a run is graded again, its log is checked: the two anchors must
agree, the record's trajectory must be an intact chain ending at the anchor, and — given the
store — the stored log must end there too and equal the trajectory. A log cut short, rewritten
or recomputed (detected for certain with a signed anchor) is refused with `LogTampered`.
This module never repairs anything and never grades.
"""

from __future__ import annotations

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

__all__ = ["check_run_log", "run_anchor"]


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
