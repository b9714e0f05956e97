"""Grading a captured run: the one code path behind `run`, `regrade`, `grade` and `judge-batch`.

`capture` rebuilds a run's final state from the frozen pre-task candidate package, the workspace
on disk and (if there is one) the event log: the logged state changes are replayed onto the
pre-task state, and the workspace on disk must be exactly what the logged writes produce.
`grade_captured` runs the deterministic checks, sends semantic criteria to the judge (if any),
applies the absence rule over all their verdicts (`worldkit.overlay.grading.credit_absences`: an
absence is credited only beside content), and labels evidence access from the log (`unknown`
for every criterion when there is no log).
`build_record` turns that into an execution record; `summary` is the JSON `run --json` and
`grade --json` print.

This module never starts an agent or a server; it reads what a run left.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.errors import CheckFailed, StoreError
from worldkit.grade.access import (
    AccessReport,
    evidence_access,
    tool_events,
    unknown_access,
)
from worldkit.grade.judge import (
    Judge,
    Verdict,
    deliverable_paths,
    grade_criterion,
    judge_id,
)
from worldkit.overlay.changes import baseline_records
from worldkit.overlay.context import GradingContext
from worldkit.overlay.grading import asks_content, check_rubric, credit_absences
from worldkit.overlay.models import Overlay
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.record.execution import (
    RECORD_SCHEMA_VERSION,
    CriterionOutcome,
    ExecutionRecord,
    RunStats,
)

__all__ = [
    "Captured",
    "Grades",
    "build_record",
    "capture",
    "grade_captured",
    "judge_failure",
    "recredit",
    "record_inputs",
    "summary",
]


@dataclass(frozen=True)
class Captured:
    """A run's final state as grading reads it."""

    overlay: Overlay
    candidate: Path
    """The staged candidate package: the frozen pre-task state."""
    workspace: Path
    """The workspace after the run."""
    events: list[dict[str, Any]] | None
    """The run's event log (lifecycle marks included), or None when there is none."""
    context: GradingContext
    request: str
    config: ToolConfig
    workspace_before: dict[str, str]
    workspace_after: dict[str, str]
    state_before: str
    state_after: str | None
    """The replayed state's digest (None without a log: the changes are unknown)."""


@dataclass(frozen=True)
class Grades:
    outcomes: list[CriterionOutcome]
    stats: RunStats
    judge: dict[str, Any] | None
    access: AccessReport
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    calibration: dict[str, Any] | None = None
    """The judge's calibration summary (`worldkit.grade.calibration`), when it was given one."""


_VERDICT = {True: "pass", False: "fail", None: "unknown"}
"""A check's `passed` → the criterion's result (`unknown`: not decidable without the event log)."""


def capture(overlay: Overlay, candidate: Path, workspace: Path, events: list[dict[str, Any]] | None) -> Captured:
    """The final state from the candidate package, the workspace and the log (see module doc)."""
    from worldkit.mcp.state import parse_change, pre_task_state, scan_workspace

    candidate = Path(candidate)
    workspace = Path(workspace)
    projection = candidate / "projection"
    if not workspace.is_dir():
        raise CheckFailed(f"workspace {workspace} does not exist; pass the folder the agent wrote its deliverables in")
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    state = pre_task_state(candidate)
    before_files = state.workspace_files()
    state_before = state.digest()
    after_files = scan_workspace(workspace)
    records: dict[str, dict[str, Any]] = {}
    sent: list[dict[str, Any]] = []
    state_after = None
    if events is not None:
        for event in tool_events(events):
            change = event.get("state_change")
            if event.get("outcome") == "ok" and change:
                try:
                    state.apply(parse_change(change))
                except StoreError as error:
                    raise CheckFailed(f"event {event.get('seq')} of the run's log cannot be replayed ({error.message}); "
                                      "the log does not describe this run — re-run the task") from None  # fmt: skip
        replayed = state.workspace_files()
        if replayed != after_files:
            differ = sorted(p for p in set(replayed) | set(after_files) if replayed.get(p) != after_files.get(p))
            raise CheckFailed(
                f"workspace {workspace} is not what the run's logged writes produce (differs at "
                f"{', '.join(differ[:5])}); it was modified outside the seat's tools or after the run"
            )
        records = state.final_records(baseline_records(projection))
        sent = state.sent_messages()
        state_after = state.digest()
    calls = [dict(e) for e in tool_events(events)] if events is not None else None
    request = (candidate / "request.md").read_text(encoding="utf-8")
    ctx = GradingContext(workspace=workspace, records=records, sent=sent, events=calls, projection=projection,
                         state_known=events is not None, request=request)  # fmt: skip
    return Captured(
        overlay=overlay, candidate=candidate, workspace=workspace, events=events, context=ctx, request=request,
        config=config, workspace_before=before_files, workspace_after=after_files, state_before=state_before,
        state_after=state_after,
    )  # fmt: skip


def grade_captured(
    captured: Captured,
    judge: Judge | None,
    *,
    keep_semantic: Mapping[str, CriterionOutcome] | None = None,
) -> Grades:
    """Checks, judge and access labels for every criterion.

    `keep_semantic`: verdicts to keep for semantic criteria when no judge is given (regrade keeps
    the recorded ones rather than turning them `ungraded`)."""
    overlay = captured.overlay
    checked = check_rubric(overlay, captured.context)  # the absence rule is applied below, over every verdict
    if captured.events is not None:
        access = evidence_access(overlay, None, captured.events, candidate=captured.candidate, config=captured.config)
        stats = RunStats(
            inspections=access.inspections,
            tool_calls=access.tool_calls,
            tool_calls_before_first_access=access.tool_calls_before_first_access,
        )
    else:
        access = unknown_access(overlay)
        stats = RunStats(inspections=None, tool_calls=None, tool_calls_before_first_access=None)
    grader = judge_id(judge)
    outcomes: list[CriterionOutcome] = []
    verdicts: dict[str, Verdict] = {}
    for criterion in overlay.rubric:
        label = access.labels[criterion.id]
        listed = {"seen_in_listing": access.seen_in_listing[criterion.id]} if access.seen_in_listing.get(criterion.id) else {}
        result = checked.get(criterion.id)
        if result is not None:
            outcomes.append(CriterionOutcome(id=criterion.id, route=criterion.route, access=label,
                                             result=_VERDICT[result.passed], detail=result.detail,
                                             graded_by="check", **listed))  # fmt: skip
            continue
        if criterion.route == "semantic" and judge is not None:
            verdict = grade_criterion(judge, overlay, criterion, captured.context, captured.request)
            verdicts[criterion.id] = verdict
            outcomes.append(CriterionOutcome(id=criterion.id, route="semantic", access=label, result=verdict.result,
                                             detail=verdict.reason,
                                             graded_by="" if verdict.result == "ungraded" else grader,
                                             **listed))  # fmt: skip
            continue
        kept = (keep_semantic or {}).get(criterion.id)
        if kept is not None and criterion.route == "semantic":
            outcomes.append(kept.model_copy(update={"access": label, "seen_in_listing": listed.get("seen_in_listing", [])}))
            continue
        why = "no judge" if criterion.route == "semantic" else "no check"
        outcomes.append(CriterionOutcome(id=criterion.id, route=criterion.route, access=label, result="ungraded",
                                         detail=why, **listed))  # fmt: skip
    outcomes = _credit_absences(overlay, outcomes)
    return Grades(outcomes=outcomes, stats=stats, judge=judge.describe() if judge is not None else None,
                  access=access, verdicts=verdicts, calibration=getattr(judge, "calibration", None))  # fmt: skip


def _credit_absences(overlay: Overlay, outcomes: list[CriterionOutcome]) -> list[CriterionOutcome]:
    """The outcomes with `worldkit.overlay.grading.credit_absences` applied (checks' and judges' verdicts alike)."""
    verdicts = {o.id: (o.result, o.detail) for o in outcomes}
    credited = credit_absences(overlay, verdicts)
    return [o if credited[o.id] == verdicts[o.id]
            else o.model_copy(update={"result": credited[o.id][0], "detail": credited[o.id][1]})
            for o in outcomes]  # fmt: skip


def recredit(captured: Captured, outcomes: list[CriterionOutcome]) -> list[CriterionOutcome]:
    """Recorded outcomes with the absence rule applied again after some verdicts changed (a batch
    judge's semantic verdicts): the deterministic criteria that ask for no content are checked
    again on the captured state (their recorded result already carries the old credit), then
    `credit_absences` runs over every verdict."""
    overlay = captured.overlay
    again = {c.id for c in overlay.rubric if c.check is not None and not asks_content(overlay, c)}
    checked = check_rubric(overlay, captured.context, again) if again else {}
    fresh = [o.model_copy(update={"result": _VERDICT[checked[o.id].passed], "detail": checked[o.id].detail})
             if checked.get(o.id) is not None else o for o in outcomes]  # fmt: skip
    return _credit_absences(overlay, fresh)


def judge_failure(outcomes: list[CriterionOutcome], judge: Mapping[str, Any] | None) -> str:
    """One line naming the judge's endpoint, why it failed and the criteria left `grader_error`; "" if none."""
    failed = [c for c in outcomes if c.result == "grader_error"]
    if not failed:
        return ""
    config = dict(judge or {})
    name = str(config.get("id") or config.get("kind") or "judge")
    where = f" at {config['base_url']}" if config.get("base_url") else ""
    reason = " ".join((failed[0].detail or "no reason given").split())[:200]
    return (f"judge {name}{where} failed ({reason}): {', '.join(sorted(c.id for c in failed))} left grader_error; "
            "re-judge once it answers (`worldkit regrade RUN_DIR --judge …` or `worldkit judge-batch RUNS --write`)")  # fmt: skip


def revision_digest(candidate: Path) -> str:
    """The revision digest the staged projection was rendered from (its manifest's inputs)."""
    manifest = json.loads((Path(candidate) / "projection" / "manifest.json").read_text(encoding="utf-8"))
    return str((manifest.get("inputs") or {}).get("revision_digest", ""))


def record_inputs(overlay: Overlay, candidate: Path) -> dict[str, str]:
    """An execution record's `inputs`: the task's world, revision, date, seat and overlay, and the
    revision digest its staged candidate was rendered from."""
    from worldkit.overlay import overlay_digest

    return {
        "world": overlay.world, "rev": overlay.rev, "date": overlay.date.isoformat(), "seat": overlay.seat,
        "overlay": overlay.id, "overlay_sha256": overlay_digest(overlay), "overlay_path": str(overlay.source or ""),
        "revision_digest": revision_digest(candidate),
    }  # fmt: skip


def build_record(
    captured: Captured,
    grades: Grades,
    *,
    run_id: str,
    agent: str,
    condition: str,
    agent_config: dict[str, Any] | None = None,
    agent_result: dict[str, Any] | None = None,
    package_summary: Mapping[str, Any] | None = None,
) -> ExecutionRecord:
    """The execution record of a graded run (A.1: inputs, digests, deliverables, trajectory)."""
    overlay = captured.overlay
    summary = dict(package_summary or {})
    if not summary:
        package_json = captured.candidate.parent / "package.json"
        if package_json.is_file():
            summary = json.loads(package_json.read_text(encoding="utf-8"))
    events = captured.events or []
    deliverables = deliverable_paths(overlay, captured.workspace_after)
    return ExecutionRecord(
        schema_version=RECORD_SCHEMA_VERSION,
        run_id=run_id,
        task=overlay.id,
        agent=agent,
        condition=condition,
        criteria=grades.outcomes,
        stats=grades.stats,
        inputs=record_inputs(overlay, captured.candidate),
        digests={
            "fingerprint": str(summary.get("fingerprint", "")),
            "candidate_sha256": str(summary.get("candidate_sha256", "")),
            "verifier_sha256": str(summary.get("verifier_sha256", "")),
            "state_before": captured.state_before,
            "state_after": captured.state_after or "",
            "event_log_head": events[-1]["hash"] if events and "hash" in events[-1] else "",
        },
        workspace_before=captured.workspace_before,
        workspace_after=captured.workspace_after,
        deliverables={path: captured.workspace_after.get(path) for path in deliverables},
        agent_result=dict(agent_result or {}),
        trajectory=list(events),
        agent_config=dict(agent_config or {"id": agent}),
        judge=grades.judge,
        judge_failure=judge_failure(grades.outcomes, grades.judge),
        calibration=grades.calibration,
    )


def summary(record: ExecutionRecord, record_path: Path | None) -> dict[str, Any]:
    """The JSON `worldkit run --json` and `worldkit grade --json` print."""
    criteria = {c.id: c.result for c in record.criteria}
    deterministic = [c.id for c in record.criteria if c.route == "deterministic"]
    semantic = [c.id for c in record.criteria if c.route == "semantic"]
    return {
        "run_id": record.run_id,
        "task": record.task,
        "agent": record.agent,
        "condition": record.condition,
        "status": record.status,
        "criteria": criteria,
        "access": {c.id: c.access for c in record.criteria},
        "seen_in_listing": {c.id: c.seen_in_listing for c in record.criteria if c.seen_in_listing},
        "deterministic_passed": sum(criteria[c] == "pass" for c in deterministic),
        "deterministic_total": len(deterministic),
        "semantic_passed": sum(criteria[c] == "pass" for c in semantic),
        "semantic_total": len(semantic),
        "graded_by": {c.id: c.graded_by for c in record.criteria},
        "judge": record.judge,
        "judge_failure": record.judge_failure,
        "calibration": record.calibration,
        "record": str(record_path) if record_path is not None else None,
    }
