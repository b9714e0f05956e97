"""`worldkit run`: stage a task, let an agent work through the seat's tools, capture, grade, record.

The run folder (`worldkit.run.folder`) is staged first; the final state is captured from the
servers' event log and the workspace on disk, never from the agent's last message, and graded by
the same code as `grade` and `regrade` (`worldkit.grade.grading`). A run is blocked (nothing is
started) when the staged package fails its workspace check. A run whose agent fails (its endpoint
is down or keeps answering 500) is marked failed — a `worldkit:run-failed` event closes its log
and its execution record says `status: failed` — and raises `RunFailed` (exit 4).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from worldkit.agents.registry import AgentTask, make_agent
from worldkit.agents.session import MCPToolSession
from worldkit.errors import CheckFailed, WorldkitError
from worldkit.frozen.seed import require_fresh_workspace
from worldkit.grade.grading import (
    Grades,
    build_record,
    capture,
    grade_captured,
    record_inputs,
    summary,
)
from worldkit.grade.judge import Judge
from worldkit.mcp.server import build_seat_server
from worldkit.mcp.session import staged_meta
from worldkit.mcp.state import DiskWorkspace, SeatState, pre_task_state
from worldkit.overlay import load_overlay, resolve_overlay
from worldkit.overlay.models import Overlay
from worldkit.overlay.toolconfig import ToolConfig
from worldkit.record.execution import (
    RECORD_FILENAME,
    RECORD_SCHEMA_VERSION,
    ExecutionRecord,
    RunStats,
    write_record,
)
from worldkit.record.stored import store_record
from worldkit.run import folder as run_folder
from worldkit.store import (
    ANCHOR_FILENAME,
    EventLog,
    Store,
    read_anchor,
    verified_events,
)

__all__ = ["FAILED_TOOL", "RunFailed", "RunResult", "agent_config", "check_staged", "run_task"]

FAILED_TOOL = "worldkit:run-failed"


class RunFailed(WorldkitError):
    """The agent could not finish (its endpoint was down, kept failing, …); the run is marked failed.
    Its exit code is the cause's when worldkit raised that on purpose (an endpoint down: 5), else 4."""

    def __init__(self, message: str, cause: BaseException | None = None) -> None:
        super().__init__(message)
        if isinstance(cause, WorldkitError):
            self.exit_code = cause.exit_code


@dataclass(frozen=True)
class RunResult:
    run_dir: Path
    record: ExecutionRecord

    def summary(self) -> dict[str, Any]:
        return summary(self.record, self.run_dir / RECORD_FILENAME)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "agent"


def agent_config(agent: Any) -> dict[str, Any]:
    """The agent's configuration for the record; `id` is how reports group agents."""
    describe = getattr(agent, "describe", None)
    config = dict(describe()) if callable(describe) else {}
    config.setdefault("id", getattr(agent, "id", None) or getattr(agent, "name", type(agent).__name__))
    return config


def check_staged(
    candidate: Path, *, overlay: Overlay | None = None, trust_staged: bool = False, derived: dict[str, Any] | None = None
) -> Any:
    """Refuse a staged package that fails its own manifests or is not what was frozen (compared with
    `manifests/<world>/`, or re-derived from the overlay's world where nothing is frozen), unless
    `trust_staged`; returns the `frozen-workspace` result (its counts say whether it was trusted)."""
    from worldkit.frozen.staged import require_staged
    from worldkit.overlay.load import overlay_world

    world = overlay_world(overlay) if overlay is not None else None
    return require_staged(candidate, "run blocked: staged package", trust_staged=trust_staged, world=world,
                          derived=derived, overlay=overlay)


def _leaf(error: BaseException) -> BaseException:
    """The error inside (possibly nested) exception groups — a WorldkitError if there is one."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        found = [e for e in error.exceptions if isinstance(_leaf(e), WorldkitError)]
        error = found[0] if found else error.exceptions[0]
    return error


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
    config_of_agent = agent_config(agent)
    agent_id = str(config_of_agent["id"])
    run_id = run_id or f"{overlay.id}.{_slug(agent_id)}.{_slug(condition)}.{uuid.uuid4().hex[:10]}"
    run_dir = Path(runs_dir).absolute() / run_id
    paths = run_folder.RunPaths(run_dir)
    _folder, package = run_folder.stage_run_folder(
        overlay, run_dir, run_id=run_id, condition=condition, store=store_url, agent=agent_id,
        agent_config=config_of_agent,
    )  # fmt: skip
    candidate = paths.candidate
    staged_check = check_staged(candidate, overlay=overlay, trust_staged=trust_staged,
                                derived=package.summary_model.model_dump(mode="json"))
    require_fresh_workspace(paths.workspace, candidate, overlay, what="run workspace")
    config = ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes())
    state = SeatState(pre_task_state(candidate).base, DiskWorkspace(paths.workspace))
    reference = tuple(a.model_dump(mode="json") for a in overlay.reference.actions) if agent_name == "oracle" else ()
    request = (candidate / "request.md").read_text(encoding="utf-8")

    failure: str | None = None
    cause: BaseException | None = None
    outcome: Any = None
    anchor_file = paths.root / ANCHOR_FILENAME
    with Store.open(store_url) as store:
        meta = staged_meta("worldkit.run", staged_check, trusted=bool(staged_check.counts.get("trusted_staged")),
                           agent=agent_id, condition=condition)  # fmt: skip
        log = EventLog(store, run_id, config.seat, claim=True, anchor=anchor_file, meta=meta)
        key = _answer_key(agent, overlay, candidate, config, store, run_id)
        task = AgentTask(request=request, seat=config.seat, reference_actions=reference, answer_key=key, run_id=run_id)
        try:
            server = build_seat_server(paths.projection, config, workspace=paths.workspace, event_log=log, state=state)

            async def drive() -> Any:
                async with Client(server) as client:
                    return await agent.run(task, MCPToolSession(client))

            try:
                outcome = anyio.run(drive)
            except Exception as error:  # noqa: BLE001 - any agent failure marks the run failed, then is reported
                leaf = cause = _leaf(error)
                failure = leaf.message if isinstance(leaf, WorldkitError) else f"{type(leaf).__name__}: {leaf}"
                log.append(FAILED_TOOL, {"agent": agent_id}, "error", None, {"error": failure[:1000]})
        finally:
            log.close()  # seals the head and writes the final anchor
        anchor = read_anchor(anchor_file)
        events = [e.model_dump(mode="json") for e in verified_events(store, run_id, anchor=anchor)[1]]
    log_anchor = anchor.model_dump(mode="json", exclude_none=True)

    seat_files = run_folder.seat_file_count(paths.projection)
    if failure is not None:
        record = _failed_record(overlay, package, run_id, agent_id, condition, config_of_agent, events, failure, paths)
        record = record.model_copy(update={"log_anchor": log_anchor,
                                           "inputs": {**record.inputs, "seat_files": seat_files}})
        _keep(record, paths.record, store_url)
        raise RunFailed(f"run {run_id} failed: {failure}. The run is marked failed (record {paths.record})", cause)

    captured = capture(overlay, candidate, paths.workspace, events)
    if captured.state_after != state.digest():
        raise CheckFailed(
            f"run {run_id}: replaying its log gives state {captured.state_after} but the servers ended at "
            f"{state.digest()}; the event log is incomplete — re-run the task"
        )
    grades: Grades = grade_captured(captured, judge)
    record = build_record(
        captured, grades, run_id=run_id, agent=agent_id, condition=condition, agent_config=config_of_agent,
        agent_result={"steps": outcome.steps, "tokens": outcome.tokens, "stopped_by": outcome.stopped_by,
                      "notes": outcome.notes, "final_message": outcome.final_message[:2000]},
        package_summary=package.summary(),
    )  # fmt: skip
    record = record.model_copy(update={"log_anchor": log_anchor, "inputs": {  # what the staged package was checked against
        **record.inputs, "staged_reference": staged_check.counts.get("reference"),
        "trusted_staged": bool(staged_check.counts.get("trusted_staged")), "seat_files": seat_files,
    }})
    _keep(record, paths.record, store_url)
    return RunResult(run_dir=run_dir, record=record)


def _answer_key(agent: Any, overlay: Overlay, candidate: Path, config: ToolConfig, store: Store, run_id: str) -> Any:
    """The answer key gated by evidence, for an agent that declares `uses_answer_key` (else None).
    It reads the run's events as stored, so it sees exactly the calls the servers logged."""
    if not getattr(agent, "uses_answer_key", False):
        return None
    from worldkit.run.answer_key import EvidenceGatedKey
    from worldkit.store.eventlog import read_events

    def events() -> list[dict[str, Any]]:
        return [e.model_dump(mode="json") for e in read_events(store, run_id)]

    return EvidenceGatedKey(overlay, candidate, config, events)


def _keep(record: ExecutionRecord, path: Path, store_url: str | None) -> None:
    """Write the record into the run folder and into the store that holds the run's log."""
    write_record(record, path)
    with Store.open(store_url) as store:
        store_record(store, record)


def _failed_record(
    overlay: Overlay,
    package: Any,
    run_id: str,
    agent_id: str,
    condition: str,
    config_of_agent: dict[str, Any],
    events: list[dict[str, Any]],
    failure: str,
    paths: run_folder.RunPaths,
) -> ExecutionRecord:
    from worldkit.mcp.state import scan_workspace

    summary_ = package.summary()
    return ExecutionRecord(
        schema_version=RECORD_SCHEMA_VERSION,
        run_id=run_id,
        task=overlay.id,
        agent=agent_id,
        condition=condition,
        criteria=[],
        stats=RunStats(inspections=None, tool_calls=None, tool_calls_before_first_access=None),
        inputs=record_inputs(overlay, paths.candidate),
        digests={
            "fingerprint": summary_["fingerprint"], "candidate_sha256": summary_["candidate_sha256"],
            "verifier_sha256": summary_["verifier_sha256"], "event_log_head": events[-1]["hash"] if events else "",
        },  # fmt: skip
        workspace_before=scan_workspace(paths.candidate / "workspace"),
        workspace_after=scan_workspace(paths.workspace),
        trajectory=events,
        status="failed",
        error=failure[:2000],
        agent_config=config_of_agent,
    )
