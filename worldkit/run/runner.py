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

from worldkit.errors import CheckFailed, WorldkitError
from worldkit.mcp.seat import SeatView
from worldkit.mcp.server import build_seat_server
from worldkit.mcp.state import DiskWorkspace, SeatState, pre_task_state, scan_workspace
from worldkit.overlay import apply_overlay, load_overlay, overlay_digest, resolve_overlay
from worldkit.overlay.load import overlay_world
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
from worldkit.store import EventLog, Store, read_events
from worldkit.verify.staged import require_staged


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


def _unwrapped(call: Any) -> Any:
    """Run `call`; a WorldkitError raised inside the MCP client's task group is re-raised as itself
    (a clear message and exit code), not as an exception group with a traceback."""
    try:
        return call()
    except BaseExceptionGroup as group:
        found = group.subgroup(lambda e: isinstance(e, WorldkitError))
        while found is not None and isinstance(found, BaseExceptionGroup):
            found = found.exceptions[0]
        if found is not None:
            raise found from None
        raise


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
    trust_staged: bool = False,
) -> RunResult:
    overlay = overlay_ref if isinstance(overlay_ref, Overlay) else load_overlay(resolve_overlay(overlay_ref))
    agent = make_agent(agent_name, agent_options)
    run_id = run_id or f"{overlay.id}.{agent_name}.{_condition_slug(condition)}.{uuid.uuid4().hex[:10]}"
    run_dir = Path(runs_dir).absolute() / run_id
    package = apply_overlay(overlay, run_dir / "package", condition)
    candidate = package.candidate
    # Against its own manifests and against what was frozen (or this fresh derivation where nothing is).
    staged_check = require_staged(package.out, "run blocked: staged package", trust_staged=trust_staged,
                                  world=overlay_world(overlay), derived=package.summary_model.model_dump(mode="json"))
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

    with Store.open(store_url) as store:
        log = EventLog(store, run_id, config.seat)
        server = build_seat_server(projection, config, workspace=workspace, event_log=log, state=state)

        async def drive() -> Any:
            async with Client(server) as client:
                return await agent.run(task, MCPToolSession(client))

        outcome = _unwrapped(lambda: anyio.run(drive))
        log.close()
        events = [e.model_dump(mode="json") for e in read_events(store, run_id)]

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
            "staged_reference": staged_check.counts.get("reference"),
            "trusted_staged": bool(staged_check.counts.get("trusted_staged")),
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
    )
    write_record(record, run_dir / RECORD_FILENAME)
    return RunResult(run_dir=run_dir, record=record)


def regrade_run(run_dir: Path, judge: Judge | None = None) -> tuple[ExecutionRecord, list[tuple[str, str, str, str]]]:
    """Grade a finished run again from disk: the workspace as captured, records and mail rebuilt by
    replaying the logged state changes onto the pre-task projection."""
    from worldkit.run.record import read_record

    run_dir = Path(run_dir)
    record = read_record(run_dir / RECORD_FILENAME)
    overlay = load_overlay(record.inputs.get("overlay_path") or resolve_overlay(record.task))
    candidate = run_dir / "package" / "candidate"
    projection = candidate / "projection"
    workspace = run_dir / "workspace"
    if scan_workspace(workspace) != record.workspace_after:
        raise CheckFailed(f"workspace {workspace} no longer matches the execution record; it was modified after the run")
    state = pre_task_state(projection)
    for event in record.trajectory:
        if event.get("state_change") and event["tool"] in ("update_record", "send_message"):
            state.apply(event["state_change"])
    ctx = GradingContext(
        workspace=workspace,
        records=state.final_records(baseline_records(projection)),
        sent=state.sent_messages(),
        events=record.trajectory,
        projection=projection,
    )
    return record, grade(overlay, ctx, judge)
