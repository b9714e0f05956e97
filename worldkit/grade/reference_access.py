"""Reference access: the reference solution's own reads must access every criterion's evidence.

An overlay whose oracle passes every criterion while leaving their evidence `not_accessed` (it
listed records with `query_records` but never opened one with `get_record`, say) tells authors
nothing about whether the evidence map can be met, and every access label of a real run would be
measured against a map nobody ever satisfied. So the reference actions are labelled exactly as a
run is (`evidence_access`, over the full projection) and each criterion left `not_accessed` is
an error naming the criterion, the evidence locator no action returned, and the tool call that
would return it.

`overlay check`, `overlay freeze`, `world new` and `verify` run this beside the overlay's own
checks (`worldkit.overlay.problems`), which sit below grading and cannot call it; `overlay check`
and `overlay freeze` then run the rubric's mutation campaign on the same projection.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path

from worldkit.canon import sha256_json
from worldkit.grade.access import EVIDENCE_TOOLS, _satisfies, evidence_access, exposures_of, plain
from worldkit.overlay.load import load_overlay, overlay_world
from worldkit.overlay.models import EvidenceItem, Overlay
from worldkit.overlay.problems import CheckReport, Problem, check_materialized
from worldkit.overlay.toolconfig import ToolConfig

CODE = "reference-evidence-not-accessed"


def _result_digest(view: object, tool: str, arguments: dict) -> str | None:
    """The digest a server would log for a read the reference makes (access counts only answered
    calls, known by their logged result digest); None for a change, which is never re-run here."""
    if tool not in EVIDENCE_TOOLS:
        return None
    try:
        return sha256_json(getattr(view, tool)(**arguments).model_dump(mode="json"))
    except Exception:  # noqa: BLE001 - a read the view refuses answers nothing
        return None


def reference_access_problems(model: Overlay, projection: Path) -> list[Problem]:
    """An error for each criterion whose evidence the reference actions leave `not_accessed` on
    `projection` (the overlay's full projection, as materialized)."""
    from worldkit.materialize.manifest import read_manifest
    from worldkit.mcp.seat import SeatView

    if not model.reference.actions or not model.evidence:
        return []  # no oracle (`reference-missing`) or no evidence (`evidence-…`) is reported elsewhere
    inputs = read_manifest(projection).inputs
    config = ToolConfig(world=inputs.world, rev=inputs.rev, date=inputs.date, seat=inputs.seat, person=inputs.person,
                        surfaces=list(model.surfaces), permitted=list(model.permitted))  # fmt: skip
    view = SeatView(projection, config)
    events = [{"seq": n + 1, "tool": a.tool, "arguments": dict(a.args), "outcome": "ok",
               "result_digest": _result_digest(view, a.tool, dict(a.args))}
              for n, a in enumerate(model.reference.actions)]  # fmt: skip
    labels = evidence_access(model, view, events).labels
    reads = [e for e in events if e["tool"] in EVIDENCE_TOOLS]  # never re-run a change on the view
    returned = [e for event in reads for e in exposures_of(view, event["tool"], event["arguments"], None) or []]
    problems: list[Problem] = []
    for criterion in model.rubric:
        sets = model.evidence.get(criterion.id)
        if not sets or labels.get(criterion.id) != "not_accessed":
            continue
        missing = min(([m for m in members if not any(_satisfies(m, e) for e in returned)] for members in sets), key=len)
        item = missing[0] if missing else sets[0][0]
        call = suggested_call(item, projection)
        problems.append(Problem(
            CODE, "error", f"evidence[{criterion.id}]",
            f"the reference actions leave criterion {criterion.id}'s evidence not_accessed under the full projection: "
            f"no action returns {item.surface} {item.locator}"
            + (f" with {item.anchor!r}" if item.anchor else "")
            + (f" (fields {', '.join(item.fields)})" if item.fields else ""),
            f"add `{call}` to reference.actions (a listing such as query_records, list_files or list_messages "
            "is not an access; the call must return the evidence itself)",
        ))  # fmt: skip
    return problems


def suggested_call(item: EvidenceItem, projection: Path) -> str:
    """The tool call (as a `reference.actions` entry) that returns an evidence item."""
    if item.surface == "files":
        return f"{{tool: read_file, args: {{path: {item.locator.removeprefix('files/')}}}}}"
    if item.surface == "records":
        return f"{{tool: get_record, args: {{id: {item.locator}}}}}"
    if item.surface == "mail":
        return f"{{tool: read_message, args: {{id: {item.locator}}}}}"
    channel, _, message = item.locator.partition("#")
    if not message:
        message = _chat_message(projection / "chat" / f"{channel}.jsonl", item.anchor) or "<a message of the channel>"
    return f"{{tool: read_message, args: {{id: {message}}}}}"


def _chat_message(log: Path, anchor: str | None) -> str | None:
    """The id of the first message in a channel log holding `anchor` (any message without one)."""
    if not log.is_file():
        return None
    for line in log.read_text(encoding="utf-8").splitlines():
        message = json.loads(line)
        if anchor is None or plain(anchor) in plain(str(message.get("body", ""))):
            return str(message.get("id"))
    return None


def check_overlay_fully(overlay: Overlay | str | Path) -> CheckReport:
    """`overlay check`: the overlay's own checks, the reference-access check and, once neither
    finds an error, the rubric's mutation campaign (`worldkit.mutate.gate`), on one fresh projection."""
    from worldkit.materialize import materialize
    from worldkit.mutate.gate import campaign_problems

    model = overlay if isinstance(overlay, Overlay) else load_overlay(overlay)
    with tempfile.TemporaryDirectory(prefix="worldkit-overlay-check-") as scratch:
        root = Path(scratch)
        result = materialize(overlay_world(model), model.rev, model.date, model.seat, root / "projection")
        report = check_materialized(model, result, root)
        if result.fingerprint != model.pinned_fingerprint:
            return report  # a stale pin is reported; labels on another projection would mislead
        extra = reference_access_problems(model, result.out)
        if not report.errors and not any(p.severity == "error" for p in extra):
            extra += campaign_problems(model, result.out)  # the campaign varies a sound reference
    return dataclasses.replace(report, problems=[*report.problems, *extra])
