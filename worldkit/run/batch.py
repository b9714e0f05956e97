"""Post-execution judging: every semantic criterion of many finished runs in one blinded batch.

As the paper graded: after all runs are done, the judge sees the items of all runs mixed in a
seeded shuffle, each as a `JudgeItem` that names no run, agent, condition or packet. Items with
identical content are judged once. With `write`, each record's semantic verdicts and its `judge`
configuration are replaced by the batch's; deterministic verdicts are never touched, except that
the absence rule is applied again over the new verdicts (`worldkit.grade.grading.recredit`: an
absence is credited only beside content).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.errors import UsageError
from worldkit.grade.grading import capture, judge_failure, recredit
from worldkit.grade.judge import (
    Judge,
    JudgeItem,
    Verdict,
    grade_criterion,
    judge_id,
    judge_item,
)
from worldkit.record.execution import find_records, read_record, write_record
from worldkit.run.regrade import load_run_overlay, record_claims

__all__ = ["BatchResult", "judge_batch"]


@dataclass(frozen=True)
class BatchResult:
    runs: dict[str, dict[str, str]]
    """run id → criterion id → verdict."""
    items: int
    """Distinct items sent to the judge."""
    order: list[str]
    """The order the distinct items were judged in (their content digests)."""
    judge: dict[str, Any]
    written: list[str]
    """Records rewritten (with `write`)."""
    failure: str = ""
    """One line naming the judge's endpoint and the criteria it left `grader_error` ("" if none)."""

    def counts(self) -> dict[str, int]:
        """Criterion executions by verdict, over every run (identical items count once per run)."""
        found: dict[str, int] = {}
        for verdicts in self.runs.values():
            for verdict in verdicts.values():
                found[verdict] = found.get(verdict, 0) + 1
        return dict(sorted(found.items()))

    def counts_line(self) -> str:
        executions = sum(len(v) for v in self.runs.values())
        by_verdict = ", ".join(f"{n} {verdict}" for verdict, n in self.counts().items())
        return (f"{executions} criterion executions in {len(self.runs)} run(s) ({by_verdict}); "
                f"{self.items} distinct item(s) sent to {self.judge.get('id')}")  # fmt: skip

    def as_json(self) -> dict[str, Any]:
        return {"runs": self.runs, "items": self.items, "order": self.order, "judge": self.judge,
                "written": self.written, "executions": sum(len(v) for v in self.runs.values()),
                "counts": self.counts(), "judge_failure": self.failure}  # fmt: skip


def judge_batch(paths: Iterable[Path], judge: Judge, *, seed: int = 0, write: bool = False) -> BatchResult:
    """Judge the semantic criteria of every completed run under `paths` in one shuffled batch."""
    queue: list[tuple[Path, str, str, JudgeItem]] = []
    contexts: dict[str, Any] = {}
    records = {}
    captures = {}
    for record_path in find_records(list(paths)):
        record = read_record(record_path)
        if record.status == "failed":
            continue
        run_dir = record_path.parent
        overlay = load_run_overlay(run_dir, record_claims(record), record_path)
        captured = capture(overlay, run_dir / "package" / "candidate", run_dir / "workspace", record.trajectory)
        records[record_path] = record
        captures[record_path] = captured
        for criterion in overlay.rubric:
            if criterion.route == "semantic":
                item = judge_item(overlay, criterion, captured.context, captured.request)
                queue.append((record_path, record.run_id, criterion.id, item))
                contexts.setdefault(item.digest(), (overlay, criterion, captured))
    if not queue:
        raise UsageError("no semantic criteria to judge in the completed runs found; pass the runs directory")
    distinct: dict[str, JudgeItem] = {}
    for _path, _run, _cid, item in queue:
        distinct.setdefault(item.digest(), item)
    order = sorted(distinct)
    random.Random(seed).shuffle(order)
    verdicts: dict[str, Verdict] = {}
    for digest in order:
        # Through the same call as a single run (a judge that reads the run's state gets it too).
        overlay, criterion, captured = contexts[digest]
        verdicts[digest] = grade_criterion(judge, overlay, criterion, captured.context, captured.request)
    judged: dict[Path, list[Any]] = {}
    for record_path, record in records.items():
        by_criterion = {cid: verdicts[item.digest()] for p, _r, cid, item in queue if p == record_path}
        criteria = [
            c.model_copy(update={"result": by_criterion[c.id].result, "detail": by_criterion[c.id].reason,
                                 "graded_by": judge_id(judge)}) if c.id in by_criterion else c
            for c in record.criteria
        ]  # fmt: skip
        judged[record_path] = recredit(captures[record_path], criteria)  # an absence is credited only beside content
    runs: dict[str, dict[str, str]] = {}
    for record_path, run_id, criterion_id, _item in queue:
        runs.setdefault(run_id, {})[criterion_id] = next(c.result for c in judged[record_path] if c.id == criterion_id)
    failed = sorted(f"{run_id}:{cid}" for run_id, verdicts in runs.items() for cid, v in verdicts.items()
                    if v == "grader_error")  # fmt: skip
    failure = ""
    if failed:
        config = judge.describe()
        where = f" at {config['base_url']}" if config.get("base_url") else ""
        reason = next(v.reason for v in verdicts.values() if v.result == "grader_error")
        shown = ", ".join(failed[:10]) + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
        failure = (f"judge {judge_id(judge)}{where} failed ({' '.join(reason.split())[:200]}): {shown} left "
                   "grader_error; run judge-batch again once it answers")  # fmt: skip
    written: list[str] = []
    if write:
        config = judge.describe()
        for record_path, record in records.items():
            by_criterion = {cid for p, _r, cid, _item in queue if p == record_path}
            if not by_criterion:
                continue
            criteria = judged[record_path]
            own = [c for c in criteria if c.id in by_criterion]
            update = {"criteria": criteria, "judge": {**config, "batch": True},
                      "judge_failure": judge_failure(own, config),
                      "calibration": getattr(judge, "calibration", None)}  # fmt: skip
            write_record(record.model_copy(update=update), record_path)
            written.append(str(record_path))
    return BatchResult(runs=runs, items=len(distinct), order=order, judge=judge.describe(), written=written,
                       failure=failure)
