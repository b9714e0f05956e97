"""Where a report's rows came from: enough to tell which runs, world and judge it shows.

For execution records: the worlds, revisions and revision digests, overlays and their
digests, projection fingerprints, run ids, agents and judges the records froze. For a ledger
release: the SHA-256 of each ledger file and the grader the release names. Only reads.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from worldkit import __version__
from worldkit._model import Model
from worldkit.analysis.ledgers import CRITERION_FILE, RUN_FILE, find_ledgers
from worldkit.record.execution import LoadedRecord

__all__ = ["Provenance", "ledger_provenance", "records_provenance"]


class Provenance(Model):
    """What one source of a report was computed from."""


    source: str
    """The rows' source name."""
    kind: str
    """`runs` (execution records) or `ledgers` (a WorkWorlds ledger release)."""
    worldkit: str = __version__
    """The worldkit version that made the report."""
    worlds: list[str] = []
    """`world@rev` of the runs."""
    revision_digests: list[str] = []
    """Revision digests the runs froze."""
    overlays: dict[str, str] = {}
    """Overlay id → overlay digest."""
    fingerprints: list[str] = []
    """Candidate projection fingerprints."""
    run_ids: list[str] = []
    """Every run id."""
    agents: list[str] = []
    """Agents."""
    judges: list[str] = []
    """Judges that graded semantic criteria (their ids), or what the release names."""
    calibrations: list[str] = []
    """How each judge was calibrated (`judge calibrate`): its digest and figures, or that the
    records carry no calibration for it."""
    files: dict[str, str] = {}
    """Ledger file → SHA-256 of its bytes."""
    stores: list[str] = []
    """Stores the records were read from (URLs, passwords hidden); empty for run folders."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _judge_id(judge: object) -> str | None:
    if isinstance(judge, dict):
        for key in ("id", "model", "kind"):
            if judge.get(key):
                return str(judge[key])
    return None


def records_provenance(records: list[LoadedRecord], source: str = "runs") -> Provenance:
    """Provenance of these execution records."""
    worlds, digests, overlays, prints, runs, agents, judges = (set(), set(), {}, set(), set(),
                                                              set(), set())
    for loaded in records:
        record = loaded.record
        inputs = record.inputs
        if inputs.get("world"):
            worlds.add(f"{inputs['world']}@{inputs.get('rev', '')}")
        if inputs.get("revision_digest"):
            digests.add(str(inputs["revision_digest"]))
        if inputs.get("overlay"):
            overlays[str(inputs["overlay"])] = str(inputs.get("overlay_sha256", ""))
        if record.digests.get("fingerprint"):
            prints.add(record.digests["fingerprint"])
        runs.add(record.run_id)
        agents.add(record.agent)
        judge = _judge_id(getattr(record, "judge", None))
        if judge:
            judges.add(judge)
        for criterion in record.criteria:
            graded_by = getattr(criterion, "graded_by", "")
            if criterion.route == "semantic" and graded_by:
                judges.add(graded_by)
    return Provenance(source=source, kind="runs", worlds=sorted(worlds), calibrations=_calibrations(records),
                      revision_digests=sorted(digests), overlays=dict(sorted(overlays.items())),
                      fingerprints=sorted(prints), run_ids=sorted(runs), agents=sorted(agents),
                      judges=sorted(judges),
                      stores=sorted({loaded.store for loaded in records if loaded.store}))


def _figure(figures: dict[str, object], key: str, pct: bool = False) -> str:
    value, interval = figures.get(key), figures.get(f"{key}_ci")
    if not isinstance(value, (int, float)):
        return "undefined"
    show = (lambda v: f"{100 * v:.1f}%") if pct else (lambda v: f"{v:.2f}")
    if isinstance(interval, list) and len(interval) == 2:
        return f"{show(value)} [{show(interval[0])}, {show(interval[1])}]"
    return show(value)


def _calibrations(records: list[LoadedRecord]) -> list[str]:
    """One line per (judge, calibration) the records carry; a judge graded without one is named too."""
    lines: set[str] = set()
    for loaded in records:
        record = loaded.record
        judge = _judge_id(record.judge)
        if not judge:
            continue
        calibration = record.calibration
        if not isinstance(calibration, dict):
            lines.add(f"{judge}: not calibrated (no --judge-calibration given)")
            continue
        overall = calibration.get("overall") or {}
        lines.add(f"{judge}: calibration {str(calibration.get('sha256', ''))[:12]} on "
                  f"{len(calibration.get('per_task') or {})} task(s), n={overall.get('n')}: agreement "
                  f"{_figure(overall, 'agreement', True)}, κ {_figure(overall, 'kappa')}, AC1 {_figure(overall, 'ac1')}")  # fmt: skip
    return sorted(lines)


def ledger_provenance(path: Path, source: str) -> Provenance:
    """Provenance of a ledger release: its files' digests, runs, agents and named grader."""
    folder = find_ledgers(path)
    files = {name: _sha256(folder / name) for name in (CRITERION_FILE, RUN_FILE,
                                                        "matched_results.json",
                                                        "task_mapping.csv")
             if (folder / name).is_file()}
    judges: list[str] = []
    matched = folder / "matched_results.json"
    if matched.is_file():
        try:
            grading = json.loads(matched.read_text(encoding="utf-8")).get("grading", {})
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            grading = {}
        name = grading.get("semantic_grader_model_version_string") if isinstance(
            grading, dict) else None
        if name:
            judges.append(str(name))
    return Provenance(source=source, kind="ledgers", files=files, judges=judges)
