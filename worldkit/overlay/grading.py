"""Run a rubric's deterministic checks, and replay an oracle's actions into a grading context.

`evaluate_rubric` is what a grader calls on a captured run. `replay_actions` applies tool calls
the way the servers would (refusing what the tool configuration does not permit) to a copy of
the pre-task state; `overlay check` uses it to prove the reference solution passes and that an
untouched workspace fails every criterion.

Nothing done passes nothing: a check that passes because something did not happen
(`credits_absence`: no prohibited change, no mail sent, a text absent) is credited only when the
deliverable exists — its file is in the workspace and not blank, or, for a deliverable that is
only a state change, that change was made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from worldkit.errors import PathRefused
from worldkit.overlay._paths import confined
from worldkit.overlay.changes import BaselineRecords, observed_changes
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.models import Criterion, Overlay, OracleAction
from worldkit.overlay.toolconfig import ToolConfig


def deliverable_missing(overlay: Overlay, ctx: GradingContext) -> str | None:
    """Why the deliverable does not exist in this final state, or None when it does."""
    deliverable = overlay.deliverable
    if deliverable.path is not None:
        try:
            file = confined(ctx.workspace, deliverable.path)
        except PathRefused as error:
            return error.message
        if not file.is_file() or not file.read_bytes().strip():
            return f"the deliverable workspace/{deliverable.path} does not exist or is empty"
        return None
    assert deliverable.state_change is not None
    for change in observed_changes(ctx):
        if change.outcome == "ok" and deliverable.state_change.matches(change.tool, change.arguments):
            return None
    return f"the deliverable change ({deliverable.state_change.label()}) was not made"


def evaluate_check(overlay: Overlay, criterion: Criterion, ctx: GradingContext) -> CheckResult | None:
    """The result of one criterion's check (None for a semantic criterion), with the rule that
    an absence is credited only when the deliverable exists."""
    if criterion.check is None:
        return None
    if criterion.check.credits_absence:
        if overlay.deliverable.path is None and not ctx.state_known:
            return CheckResult(None, "unknown: the deliverable is a change, which needs the run's event log")
        missing = deliverable_missing(overlay, ctx)
        if missing:
            return CheckResult(False, f"not credited: {missing} (nothing done passes nothing)")
    return criterion.check.evaluate(ctx)


def evaluate_rubric(overlay: Overlay, ctx: GradingContext) -> dict[str, CheckResult | None]:
    """Criterion id → result of its check; None for semantic criteria (a judge decides those)."""
    return {c.id: evaluate_check(overlay, c, ctx) for c in overlay.rubric}


def tool_config_for(overlay: Overlay, person: str) -> ToolConfig:
    return ToolConfig(
        world=overlay.world, rev=overlay.rev, date=overlay.date.isoformat(), seat=overlay.seat, person=person,
        surfaces=list(overlay.surfaces), permitted=list(overlay.permitted),
    )  # fmt: skip


def _refusal(config: ToolConfig, action: OracleAction, records: dict[str, Any]) -> str | None:
    """Why the servers would refuse this state-changing call, or None if it is permitted."""
    args = action.args
    if action.tool == "write_file":
        return None if config.may_write(args["path"]) else f"writing {args['path']} is not permitted"
    if action.tool == "update_record":
        if args["id"] not in records:
            return f"record {args['id']} is not in the projection"
        status = args.get("text") if args["action"] == "status" else None
        ok = config.may_update(args["id"], args["action"], status)
        return None if ok else f"{args['action']} on {args['id']} is not permitted"
    if action.tool == "send_message":
        refused = [to for to in args["to"] if not config.may_send(to)]
        return f"sending to {', '.join(refused)} is not permitted" if refused else None
    return None


def replay_actions(
    overlay: Overlay,
    projection: Path,
    workspace: Path,
    actions: Iterable[OracleAction],
) -> tuple[GradingContext, list[str]]:
    """Apply `actions` to the pre-task state and return the grading context plus the refusals
    (as `actions[i]: why`). `workspace` must exist (seed it first); it is written in place."""
    seat = json.loads((projection / "seat.json").read_text(encoding="utf-8"))
    config = tool_config_for(overlay, seat["person"])
    records = BaselineRecords(projection)  # this replay's own; a record it updates is copied first
    sent: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    refusals: list[str] = []
    for index, action in enumerate(actions):
        why = None if _read_only(action) else _refusal(config, action, records)
        events.append({"seq": index + 1, "tool": action.tool, "arguments": dict(action.args),
                       "outcome": "denied" if why else "ok"})  # fmt: skip
        if why:
            refusals.append(f"actions[{index}] {action.tool}: {why}")
            continue
        args = action.args
        if action.tool == "write_file":
            try:
                target = confined(workspace, args["path"])
            except PathRefused as error:
                refusals.append(f"actions[{index}] write_file: {error.message}")
                events[-1]["outcome"] = "denied"
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(args["content"], encoding="utf-8")
        elif action.tool == "update_record":
            record = records.writable(args["id"])
            entry: dict[str, Any] = {"kind": args["action"], "by": seat["person"], "date": overlay.date.isoformat()}
            if args["action"] == "status":
                record["status"] = args.get("text", "")
                entry["status"] = args.get("text", "")
            else:
                entry["note"] = args.get("text", "")
            record.setdefault("history", []).append(entry)
        elif action.tool == "send_message":
            sent.append({k: args[k] for k in ("to", "subject", "body", "reply_to") if k in args})
    ctx = GradingContext(workspace=workspace, records=records, sent=sent, events=events, projection=projection,
                         request=overlay.request)  # fmt: skip
    return ctx, refusals


def _read_only(action: OracleAction) -> bool:
    return action.tool not in ("write_file", "update_record", "send_message")


def seed_workspace(overlay: Overlay, workspace: Path) -> None:
    """Write the overlay's seed files into a workspace folder."""
    workspace.mkdir(parents=True, exist_ok=True)
    for seed in overlay.workspace_seed:
        target = confined(workspace, seed.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(seed.text, encoding="utf-8")
