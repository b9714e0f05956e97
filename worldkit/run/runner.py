"""`worldkit run`: stage a task, let an agent work through the seat's tools, capture, grade, record.

The final state is captured from the servers' state and the workspace on disk, never from the
agent's last message. A run is blocked (nothing is started) when the staged package fails its
workspace check.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from worldkit.errors import CheckFailed, LogTampered
from worldkit.mcp.seat import SeatView
from worldkit.mcp.server import build_seat_server
from worldkit.mcp.state import DiskWorkspace, SeatState, pre_task_state, scan_workspace
from worldkit.overlay import apply_overlay, load_overlay, overlay_digest, resolve_overlay
from worldkit.overlay.changes import baseline_records
from worldkit.overlay.context import GradingContext
from worldkit.overlay.grading import evaluate_rubric
from worldkit.overlay.models import Overlay
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.run.access import evidence_access
from worldkit.run.agents import AgentTask, make_agent
from worldkit.run.judge import Judge
from worldkit.run.record import (
    RECORD_FILENAME,
    RECORD_SCHEMA_VERSION,
    CriterionOutcome,
    ExecutionRecord,
    RunStats,
    write_record,
)
from worldkit.run.session import MCPToolSession
from worldkit.store import (
    ANCHOR_FILENAME,
    EventLog,
    LogAnchor,
    Store,
    read_anchor,
    verified_events,
    verify_exported,
)
from worldkit.store.anchor import parse_anchor
from worldkit.verify.workspace import verify_workspace


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    record: ExecutionRecord

    def summary(self) -> dict[str, Any]:
        criteria = {c.id: c.result for c in self.record.criteria}
        routes = {c.id: c.route for c in self.record.criteria}
        deterministic = [cid for cid, route in routes.items() if route == "deterministic"]
        return {
            "run_id": self.record.run_id,
            "task": self.record.task,
            "agent": self.record.agent,
            "condition": self.record.condition,
            "criteria": criteria,
            "access": {c.id: c.access for c in self.record.criteria},
            "deterministic_passed": sum(criteria[c] == "pass" for c in deterministic),
            "deterministic_total": len(deterministic),
            "record": str(self.run_dir / RECORD_FILENAME),
        }


def _condition_slug(condition: str) -> str:
    return condition.replace(":", "-")


def grade(
    overlay: Overlay, ctx: GradingContext, judge: Judge | None
) -> list[tuple[str, str, str, str]]:
    """(criterion id, route, pass|fail|ungraded, detail) for every criterion."""
    checked = evaluate_rubric(overlay, ctx)
    graded = []
    for criterion in overlay.rubric:
        verdict = checked.get(criterion.id)
        if verdict is None and criterion.route == "semantic" and judge is not None:
            verdict = judge.grade(overlay, criterion, ctx)
        if verdict is None:
            graded.append((criterion.id, criterion.route, "ungraded", "no judge" if criterion.route == "semantic" else "no check"))
        else:
            graded.append((criterion.id, criterion.route, "pass" if verdict.passed else "fail", verdict.detail))
    return graded


def run_task(
    overlay_ref: str | Path | Overlay,
    agent_name: str,
    *,
    condition: str = "full",
    runs_dir: Path = Path("runs"),
    store_url: str | None = None,
    agent_options: dict[str, Any] | None = None,
    judge: Judge | None = None,
    run_id: str | None = None,
) -> RunResult:
    overlay = overlay_ref if isinstance(overlay_ref, Overlay) else load_overlay(resolve_overlay(overlay_ref))
    agent = make_agent(agent_name, agent_options)
    run_id = run_id or f"{overlay.id}.{agent_name}.{_condition_slug(condition)}.{uuid.uuid4().hex[:10]}"
    run_dir = Path(runs_dir).absolute() / run_id
    package = apply_overlay(overlay, run_dir / "package", condition)
    candidate = package.candidate
    for staged in (candidate, candidate / "projection"):
        check = verify_workspace(staged)
        if check.status != "pass":
            problems = "; ".join(f"{i.kind} {i.path}" for i in check.items[:5])
            raise CheckFailed(f"run blocked: staged package {staged} fails the workspace check ({problems}); {check.fix}")
    projection = candidate / "projection"
    # The agent works on a copy: the staged package stays the frozen pre-task state (replay uses it).
    workspace = run_dir / "workspace"
    shutil.copytree(candidate / "workspace", workspace)
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    workspace_before = scan_workspace(workspace)
    state = SeatState(pre_task_state(candidate).base, DiskWorkspace(workspace))
    state_before = state.digest()
    reference = tuple(a.model_dump(mode="json") for a in overlay.reference.actions) if agent_name == "oracle" else ()
    task = AgentTask(request=(candidate / "request.md").read_text(encoding="utf-8"), seat=config.seat, reference_actions=reference)

    anchor_file = run_dir / ANCHOR_FILENAME
    with Store.open(store_url) as store:
        log = EventLog(store, run_id, config.seat, claim=True, anchor=anchor_file)
        try:
            server = build_seat_server(projection, config, workspace=workspace, event_log=log, state=state)

            async def drive() -> Any:
                async with Client(server) as client:
                    return await agent.run(task, MCPToolSession(client))

            outcome = anyio.run(drive)
        finally:
            log.close()  # seals the head and writes the final anchor
        anchor = read_anchor(anchor_file)
        _report, verified = verified_events(store, run_id, anchor=anchor)
        events = [e.model_dump(mode="json") for e in verified]

    # Capture: from the servers' state and the disk, independently of the agent's message.
    workspace_after = scan_workspace(workspace)
    records = state.final_records(baseline_records(projection))
    sent = state.sent_messages()
    ctx = GradingContext(workspace=workspace, records=records, sent=sent, events=events, projection=projection)
    graded = grade(overlay, ctx, judge)
    access = evidence_access(overlay, SeatView(projection, config), events)
    deliverable = overlay.deliverable.path
    record = ExecutionRecord(
        schema_version=RECORD_SCHEMA_VERSION,
        run_id=run_id,
        task=overlay.id,
        agent=agent_name,
        condition=condition,
        criteria=[
            CriterionOutcome(id=cid, route=route, result=result, access=access.labels[cid], detail=detail)
            for cid, route, result, detail in graded
        ],
        stats=RunStats(
            inspections=access.inspections,
            tool_calls=access.tool_calls,
            tool_calls_before_first_access=access.tool_calls_before_first_access,
        ),
        inputs={
            "world": overlay.world, "rev": overlay.rev, "date": overlay.date.isoformat(), "seat": overlay.seat,
            "overlay": overlay.id, "overlay_sha256": overlay_digest(overlay),
            "overlay_path": str(overlay._source or ""),
            "revision_digest": package.summary().get("revision_digest", ""),
        },
        digests={
            "fingerprint": package.fingerprint,
            "candidate_sha256": package.candidate_sha256,
            "verifier_sha256": package.verifier_sha256,
            "state_before": state_before,
            "state_after": state.digest(),
            "event_log_head": events[-1]["hash"] if events else "",
        },
        workspace_before=workspace_before,
        workspace_after=workspace_after,
        deliverables={deliverable: workspace_after.get(deliverable)} if deliverable else {},
        agent_result={"steps": outcome.steps, "tokens": outcome.tokens, "stopped_by": outcome.stopped_by,
                      "notes": outcome.notes, "final_message": outcome.final_message[:2000]},
        trajectory=events,
        log_anchor=anchor.model_dump(mode="json", exclude_none=True),
    )
    write_record(record, run_dir / RECORD_FILENAME)
    return RunResult(run_dir=run_dir, record=record)


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
        raise LogTampered(f"the execution record in {run_dir} has no log_anchor; it was edited or is not a run's")
    if parse_anchor(record.log_anchor, source=f"{run_dir / RECORD_FILENAME}") != anchor:
        raise LogTampered(
            f"{anchor_file} and the execution record's log_anchor differ: one of them was rewritten"
        )
    if anchor.run_id != record.run_id:
        raise LogTampered(f"{anchor_file} anchors run {anchor.run_id}, the record is run {record.run_id}")
    return anchor


def check_run_log(run_dir: Path, record: ExecutionRecord, store_url: str | None) -> list[dict[str, Any]]:
    """The run's events, verified: the record's trajectory as a chain against the anchor and,
    with a store, the stored log against the anchor and equal to the trajectory."""
    anchor = run_anchor(run_dir, record)
    report = verify_exported(record.trajectory, anchor)
    if not report.ok:
        raise LogTampered(f"the execution record's trajectory: {report.message}")
    if store_url is None:
        return record.trajectory
    with Store.open(store_url, create=False) as store:
        _stored, events = verified_events(store, record.run_id, anchor=anchor)
    stored = [e.model_dump(mode="json") for e in events]
    if stored != record.trajectory:
        first = next(
            (i for i, (a, b) in enumerate(zip(stored, record.trajectory, strict=False), 1) if a != b),
            min(len(stored), len(record.trajectory)) + 1,
        )
        raise LogTampered(
            f"the stored log of run {record.run_id} and the record's trajectory differ from event {first}"
        )
    return stored


def regrade_run(
    run_dir: Path, judge: Judge | None = None, *, store_url: str | None = None
) -> tuple[ExecutionRecord, list[tuple[str, str, str, str]]]:
    """Grade a finished run again from disk: the workspace as captured, records and mail rebuilt by
    replaying the logged state changes onto the pre-task projection.

    The log is checked first (`check_run_log`): against the run's anchor, and with `store_url`
    against the store; a log cut short, rewritten or recomputed is refused (`LogTampered`)."""
    from worldkit.run.record import read_record

    run_dir = Path(run_dir)
    record = read_record(run_dir / RECORD_FILENAME)
    trajectory = check_run_log(run_dir, record, store_url)
    overlay = load_overlay(record.inputs.get("overlay_path") or resolve_overlay(record.task))
    candidate = run_dir / "package" / "candidate"
    projection = candidate / "projection"
    workspace = run_dir / "workspace"
    if scan_workspace(workspace) != record.workspace_after:
        raise CheckFailed(f"workspace {workspace} no longer matches the execution record; it was modified after the run")
    state = pre_task_state(projection)
    for event in trajectory:
        if event.get("state_change") and event["tool"] in ("update_record", "send_message"):
            state.apply(event["state_change"])
    ctx = GradingContext(
        workspace=workspace,
        records=state.final_records(baseline_records(projection)),
        sent=state.sent_messages(),
        events=trajectory,
        projection=projection,
    )
    return record, grade(overlay, ctx, judge)
