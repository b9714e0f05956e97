"""The paper's human audit, step 1: a stratified, blinded sample of a campaign's gradings.

From the execution records under RUNS it draws `criteria` criterion executions (strata: task,
condition, route, automated verdict) and `access` evidence-access labels (strata: task,
condition, route, automated label). Within each stratum items are shuffled with the seed; the
strata are then visited in a seeded order, one item at a time, until the count is reached — so a
small sample still covers the rare cells (a fail under curation, an `unknown` label). Only
decided verdicts are audited (`ungraded`/`grader_error` have no automated verdict to compare).

Blinding: a coding sheet shows the task, the criterion, its guidance, the deliverable excerpt
(the run's deliverable files and the mail it sent), the evidence locators and, for an access
item, the run's tool calls — never the agent, the condition, the run id or the automated
verdict. Item ids are opaque and ordered by a seeded shuffle. The **key** (`key.json`) maps each
item back (run, agent, condition, automated verdict) and digests every blank sheet; it is sealed
by its own sha256, which `audit score` checks. Writes only into the output folder.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.audit.sheets import write_sheets
from worldkit.canon import pretty_json, sha256_json
from worldkit.errors import OutputExists, UsageError
from worldkit.grade.access import EVIDENCE_TOOLS, LISTING_TOOLS, tool_events
from worldkit.record.execution import LoadedRecord, load_records
from worldkit.run.regrade import load_run_overlay, record_claims

__all__ = ["AUDIT_SCHEMA_VERSION", "KEY_FILE", "AuditSample", "draw_sample"]

AUDIT_SCHEMA_VERSION = 1
KEY_FILE = "key.json"
EXCERPT_CHARS = 6000
TRAJECTORY_CHARS = 8000
_DECIDED = {"pass", "fail"}


@dataclass(frozen=True)
class _Candidate:
    kind: str
    stratum: tuple[str, ...]
    loaded: LoadedRecord
    criterion: str
    automated: str


@dataclass(frozen=True)
class AuditSample:
    """What `draw_sample` wrote."""

    folder: Path
    items: int
    criteria: int
    access: int
    coders: list[str]
    available: dict[str, int]
    strata: dict[str, int]

    def as_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "items": self.items, "criteria": self.criteria, "access": self.access,
                "coders": self.coders, "available": self.available, "strata": self.strata}  # fmt: skip


def _candidates(records: Iterable[LoadedRecord]) -> list[_Candidate]:
    found = []
    for loaded in records:
        record = loaded.record
        if record.status != "completed":
            continue
        condition = record.condition.split(":", 1)[0]
        for outcome in record.criteria:
            if outcome.result in _DECIDED:
                stratum = (record.task, condition, outcome.route, outcome.result)
                found.append(_Candidate("criterion", stratum, loaded, outcome.id, outcome.result))
            if record.stats.tool_calls is not None:  # decided from a log (without one, every label is `unknown`)
                stratum = (record.task, condition, outcome.route, outcome.access)
                found.append(_Candidate("access", stratum, loaded, outcome.id, outcome.access))
    return found


def _stratified(candidates: list[_Candidate], count: int, rng: random.Random) -> list[_Candidate]:
    strata: dict[tuple[str, ...], list[_Candidate]] = {}
    for candidate in sorted(candidates, key=lambda c: (c.stratum, c.loaded.record.run_id, c.criterion)):
        strata.setdefault(candidate.stratum, []).append(candidate)
    for members in strata.values():
        rng.shuffle(members)
    order = sorted(strata)
    rng.shuffle(order)
    picked: list[_Candidate] = []
    while len(picked) < count and any(strata[s] for s in order):
        for stratum in order:
            if strata[stratum] and len(picked) < count:
                picked.append(strata[stratum].pop())
    return picked


def _deliverable_excerpt(loaded: LoadedRecord) -> str:
    run_dir = loaded.path.parent if loaded.path is not None else None
    parts: list[str] = []
    for path in sorted(loaded.record.deliverables):
        text = "(not produced)"
        if loaded.record.deliverables[path] is not None and run_dir is not None:
            try:
                text = (run_dir / "workspace" / path).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                text = "(not found in the run folder)"
        parts.append(f"### {path}\n{text}")
    for event in tool_events(loaded.record.trajectory):
        if event.get("tool") == "send_message" and event.get("outcome") == "ok":
            args = event.get("arguments") or {}
            parts.append(f"### mail sent to {', '.join(args.get('to') or [])}: {args.get('subject', '')}\n"
                         f"{args.get('body', '')}")  # fmt: skip
    text = "\n\n".join(parts)
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS] + "\n[… cut; the full files are in the run]"


def _evidence(overlay: Any, criterion: str) -> str:
    sets = []
    for members in overlay.evidence.get(criterion, []):
        items = []
        for item in members:
            extra = f" [anchor: {item.anchor}]" if item.anchor else ""
            extra += f" [fields: {', '.join(item.fields)}]" if item.fields else ""
            items.append(f"{item.surface}:{item.locator}{extra}")
        sets.append(" + ".join(items))
    return "\n OR \n".join(sets) or "(no evidence declared)"


def _trajectory(loaded: LoadedRecord) -> str:
    lines = []
    for number, event in enumerate(tool_events(loaded.record.trajectory), 1):
        tool = str(event.get("tool", ""))
        if tool not in EVIDENCE_TOOLS | LISTING_TOOLS | {"list_files"}:
            continue
        args = json.dumps(event.get("arguments") or {}, sort_keys=True, ensure_ascii=False)
        lines.append(f"{number}. {tool} {args} → {event.get('outcome')}")
    text = "\n".join(lines) or "(no reads, searches or listings)"
    return text if len(text) <= TRAJECTORY_CHARS else text[:TRAJECTORY_CHARS] + "\n[… cut]"


def draw_sample(
    runs: Sequence[Path],
    out: Path,
    *,
    criteria: int,
    access: int,
    seed: int,
    coders: Sequence[str] = ("A", "B"),
) -> AuditSample:
    """Draw the sample, write one coding sheet per coder (CSV and .xlsx) and the sealed key."""
    if criteria < 0 or access < 0 or criteria + access == 0:
        raise UsageError("ask for some items: --criteria N and/or --access M (non-negative, not both 0)")
    if len(set(coders)) < 2:
        raise UsageError("an audit needs at least two different coders (--coders A,B)")
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise OutputExists(f"{out} exists and is not empty; pass a new folder for the audit")
    candidates = _candidates(load_records(list(runs)))
    rng = random.Random(seed)
    chosen = [*_stratified([c for c in candidates if c.kind == "criterion"], criteria, rng),
              *_stratified([c for c in candidates if c.kind == "access"], access, rng)]  # fmt: skip
    if not chosen:
        raise UsageError(f"no graded criteria in the completed runs under {', '.join(map(str, runs))}; grade them first")
    rng.shuffle(chosen)
    overlays: dict[str, Any] = {}
    rows: list[dict[str, str]] = []
    key_items: dict[str, dict[str, str]] = {}
    for number, candidate in enumerate(chosen, 1):
        record = candidate.loaded.record
        if record.run_id not in overlays:
            where = candidate.loaded.path.parent if candidate.loaded.path is not None else Path(candidate.loaded.origin)
            overlays[record.run_id] = load_run_overlay(where, record_claims(record), candidate.loaded.path)
        overlay = overlays[record.run_id]
        criterion = next(c for c in overlay.rubric if c.id == candidate.criterion)
        item = f"I{number:04d}"
        rows.append({
            "item": item, "kind": candidate.kind, "task": record.task, "criterion": criterion.id,
            "criterion_text": criterion.text, "guidance": criterion.guidance,
            "deliverable_excerpt": _deliverable_excerpt(candidate.loaded) if candidate.kind == "criterion" else "",
            "evidence": _evidence(overlay, criterion.id),
            "trajectory": _trajectory(candidate.loaded) if candidate.kind == "access" else "",
        })  # fmt: skip
        key_items[item] = {"kind": candidate.kind, "run_id": record.run_id, "agent": record.agent,
                           "condition": record.condition, "task": record.task, "criterion": criterion.id,
                           "route": criterion.route, "automated": candidate.automated}  # fmt: skip
    out.mkdir(parents=True, exist_ok=True)
    sheets = {coder: sha256_json(write_sheets(out, coder, rows)) for coder in coders}
    key: dict[str, Any] = {
        "schema_version": AUDIT_SCHEMA_VERSION, "kind": "worldkit-audit-key", "seed": seed, "coders": list(coders),
        "requested": {"criteria": criteria, "access": access}, "items": key_items, "rows": {r["item"]: r for r in rows},
        "sheets_sha256": sheets,
    }  # fmt: skip
    key["sha256"] = sha256_json(key)
    (out / KEY_FILE).write_text(pretty_json(key), encoding="utf-8")
    (out / "README.txt").write_text(_INSTRUCTIONS.format(coders=", ".join(coders)), encoding="utf-8")
    strata = sorted({"/".join(c.stratum) for c in chosen})
    return AuditSample(
        folder=out, items=len(chosen), criteria=sum(c.kind == "criterion" for c in chosen),
        access=sum(c.kind == "access" for c in chosen), coders=list(coders),
        available={"criteria": sum(c.kind == "criterion" for c in candidates),
                   "access": sum(c.kind == "access" for c in candidates)},
        strata={s: sum("/".join(c.stratum) == s for c in chosen) for s in strata},
    )  # fmt: skip


_INSTRUCTIONS = """\
Blinded audit — coding sheets for coders {coders}

Each coder fills their own sheet (coder-X.csv or coder-X.xlsx, not both), alone, without
seeing the other sheets or key.json (the sealed key: do not open or edit it).

kind = criterion: does the deliverable meet the criterion? answer pass or fail.
kind = access: did the run's tool calls return one complete evidence set (every member, with
its anchor text or fields)? answer accessed, not_accessed or unknown. A listing (file names,
message subjects) is not access.

Fill only `answer` (and `note` if you wish); leave every other column as it is.
Then: worldkit audit score <this folder>
"""
