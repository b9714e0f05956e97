"""Run a rubric's deterministic checks, and replay an oracle's actions into a grading context.

`evaluate_rubric` is what a grader calls on a captured run. `replay_actions` applies tool calls
the way the servers would (refusing what the tool configuration does not permit) to a copy of
the pre-task state; `overlay check` uses it to prove the reference solution passes and that an
untouched workspace fails every criterion.

Doing nothing earns nothing. A criterion that only asserts an absence (`absence_only`: no
prohibited change, no mail sent, a text or row absent, forbidden claims only, a semantic
criterion whose truth declares unsafe claims and no required fact) is credited only when

1. the deliverable exists — its file is in the workspace and not blank, or, for a deliverable
   that is only a state change, that change was made (`evaluate_check`); and
2. the same final state passes at least one criterion that asks for content (`credit_absences`).

The second condition holds for a criterion that only asks for a file to exist
(`deliverable_exists`) too: a file holding the request's text is not work. Otherwise the
criterion fails, with a reason saying so. When no content criterion passes but some
could not be decided (`unknown` without the event log, `ungraded` without a judge, a judge's
`grader_error`), the absence is `unknown` too: it neither passes on content nobody saw nor fails
for content that may be there, and an unknown counts in no pass rate. A rubric without any
content criterion can never credit its absences. `credit_absences` is the one place the rule
lives; `worldkit grade`, `run`, `regrade`, `judge-batch`, `overlay check`, `verify` and the
mutation campaign all grade through it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
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
    """The result of one criterion's check (None for a semantic criterion), with the first half
    of the absence rule: an absence is credited only when the deliverable exists. The second half
    needs the whole rubric's verdicts (`credit_absences`); grade through `evaluate_rubric`."""
    if criterion.check is None:
        return None
    if criterion.check.asserts_only_absence():
        if overlay.deliverable.path is None and not ctx.state_known:
            return CheckResult(None, "unknown: the deliverable is a change, which needs the run's event log")
        missing = deliverable_missing(overlay, ctx)
        if missing:
            return CheckResult(False, f"not credited: {missing} (nothing done passes nothing)")
    return criterion.check.evaluate(ctx)


def absence_only(overlay: Overlay, criterion: Criterion) -> bool:
    """Whether the criterion only asserts that something is absent, decided structurally: its
    check's type and filled fields (`BaseCheck.asserts_only_absence`), or, for a semantic
    criterion, truth facts that declare unsafe claims and no required fact."""
    if criterion.check is not None:
        return criterion.check.asserts_only_absence()
    facts = overlay.truth.criteria.get(criterion.id)
    return facts is not None and not facts.required and bool(facts.unsafe)


def asks_content(overlay: Overlay, criterion: Criterion) -> bool:
    """Whether passing the criterion shows content was given (so it can credit an absence): not an
    absence, and not a mere file's existence (`deliverable_exists`)."""
    if absence_only(overlay, criterion):
        return False
    return criterion.check is None or criterion.check.asks_content


UNDECIDED = frozenset({"unknown", "ungraded", "grader_error"})
"""Results that say nothing about whether content was given."""


def credit_absences(overlay: Overlay, verdicts: Mapping[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """`verdicts` (criterion id → (result, detail), results as in an execution record) with the
    absence rule applied (module docstring): each passing criterion that asks for no content (an
    absence, or a bare file: `asks_content`) stays `pass` only when a content criterion passes;
    else it is `unknown` when some content criterion is undecided, else `fail`. A criterion
    missing from `verdicts` counts as `ungraded`."""
    content = [c.id for c in overlay.rubric if asks_content(overlay, c)]
    results = {cid: verdicts.get(cid, ("ungraded", ""))[0] for cid in content}
    passed = [cid for cid in content if results[cid] == "pass"]
    undecided = [cid for cid in content if results[cid] in UNDECIDED]
    credited = dict(verdicts)
    for criterion in overlay.rubric:
        if passed or criterion.id in content or verdicts.get(criterion.id, ("", ""))[0] != "pass":
            continue
        own = verdicts[criterion.id][1]
        if not content:
            credited[criterion.id] = ("fail", f"not credited: the rubric has no criterion asking for content, and an "
                                              f"absence or a bare file earns nothing alone ({own})")  # fmt: skip
        elif undecided:
            credited[criterion.id] = ("unknown", f"unknown: an absence or a bare file is credited only beside content, "
                                                 f"and content criteria {', '.join(undecided)} are not decided "
                                                 f"({own})")  # fmt: skip
        else:
            credited[criterion.id] = ("fail", f"not credited: this state passes no criterion asking for content "
                                              f"({', '.join(content)} fail), and an absence or a bare file earns "
                                              f"nothing alone ({own})")  # fmt: skip
    return credited


_RESULT = {True: "pass", False: "fail", None: "unknown"}


def evaluate_rubric(
    overlay: Overlay, ctx: GradingContext, only: Collection[str] | None = None
) -> dict[str, CheckResult | None]:
    """Criterion id → result of its check, with the absence rule (`credit_absences`) applied among
    the checks; None for semantic criteria (a judge decides those, so they count as undecided
    here: a caller that judges them applies `credit_absences` to every verdict instead, over
    `check_rubric`). `only`: the criteria wanted (plus every content criterion when one of them
    asks for none, which its credit depends on); the others are left out."""
    checked = check_rubric(overlay, ctx, only)
    verdicts = {cid: (_RESULT[r.passed], r.detail) for cid, r in checked.items() if r is not None}
    credited = credit_absences(overlay, verdicts)
    return {
        cid: r if r is None or credited[cid] == verdicts[cid]
        else CheckResult({"pass": True, "fail": False}.get(credited[cid][0]), credited[cid][1], r.grader)
        for cid, r in checked.items()
    }  # fmt: skip


def check_rubric(
    overlay: Overlay, ctx: GradingContext, only: Collection[str] | None = None
) -> dict[str, CheckResult | None]:
    """Criterion id → result of its check alone (`evaluate_check`), before `credit_absences`;
    `only` as in `evaluate_rubric`."""
    wanted = None if only is None else set(only)
    if wanted is not None and any(not asks_content(overlay, c) for c in overlay.rubric if c.id in wanted):
        wanted |= {c.id for c in overlay.rubric if asks_content(overlay, c)}
    return {c.id: evaluate_check(overlay, c, ctx) for c in overlay.rubric if wanted is None or c.id in wanted}


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
