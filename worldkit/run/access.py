"""Evidence access: which criteria had one sufficient evidence set returned to the agent.

Decided from the event log and the frozen pre-task projection: every successful read, search,
record get or message read is re-executed read-only against the same projection (those calls are
pure functions of it) and must reproduce the logged result digest; what it returned is then
matched against the overlay's evidence map. A listing or a file name alone never counts. If a
call cannot be reproduced, access is `unknown` rather than guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from worldkit.canon import sha256_json
from worldkit.overlay.models import EvidenceItem, Overlay

AccessLabel = Literal["accessed", "not_accessed", "unknown"]
EVIDENCE_TOOLS = frozenset({"read_file", "search_files", "get_record", "read_message"})
INSPECTION_TOOLS = frozenset({"read_file", "get_record", "read_message"})


@dataclass(frozen=True)
class Exposure:
    """Content of one item returned by a call."""

    surface: str
    locator: str
    text: str
    fields: frozenset[str] = frozenset()


@dataclass(frozen=True)
class AccessReport:
    labels: dict[str, AccessLabel]
    inspections: int
    tool_calls: int
    tool_calls_before_first_access: int | None
    undecidable_calls: int


def _flatten(value: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(value, Mapping):
        for key, inner in value.items():
            name = f"{prefix}{key}"
            keys.add(name)
            keys |= _flatten(inner, f"{name}.")
    return keys


def exposures_of(view: Any, tool: str, arguments: Mapping[str, Any], logged_digest: str | None) -> list[Exposure] | None:
    """What a successful call returned, by re-running it on the pre-task view; None if it cannot be
    reproduced (its digest differs, e.g. it read something the run itself wrote)."""
    try:
        result = getattr(view, tool)(**arguments)
    except Exception:  # noqa: BLE001 - a call that no longer reproduces is undecidable, not fatal
        return None
    # The servers log sha256 of the structured result, i.e. of the model's JSON dump.
    if logged_digest is not None and logged_digest != sha256_json(result.model_dump(mode="json")):
        return None
    if tool == "read_file":
        return [Exposure("files", f"files/{result.path}", result.text)]
    if tool == "search_files":
        return [Exposure("files", f"files/{m.path}", m.snippet) for m in result.matches]
    if tool == "get_record":
        record = result.record
        return [Exposure("records", result.id, str(record), frozenset(_flatten(record)))]
    if tool == "read_message":
        if result.kind == "chat" and result.channel:
            text = result.body
            return [Exposure("chat", f"{result.channel}#{result.id}", text), Exposure("chat", result.channel, text)]
        return [Exposure("mail", result.id, f"{result.subject or ''}\n{result.body}")]
    return []


def _satisfies(item: EvidenceItem, exposure: Exposure) -> bool:
    if item.surface != exposure.surface or item.locator != exposure.locator:
        return False
    if item.anchor and item.anchor not in exposure.text:
        return False
    # A field is named bare (`assay_pct`, `status`) or dotted (`fields.assay_pct`).
    return all(f in exposure.fields or f"fields.{f}" in exposure.fields for f in item.fields)


def evidence_access(overlay: Overlay, view: Any, events: Iterable[Mapping[str, Any]]) -> AccessReport:
    """Label every criterion `accessed` / `not_accessed` / `unknown` from a run's events."""
    seen: list[Exposure] = []
    labels: dict[str, AccessLabel] = {c.id: "not_accessed" for c in overlay.rubric}
    first_access: int | None = None
    undecidable = 0
    calls = inspections = 0
    for event in events:
        calls += 1
        tool = event["tool"]
        if event["outcome"] != "ok" or tool not in EVIDENCE_TOOLS:
            continue
        if tool in INSPECTION_TOOLS:
            inspections += 1
        found = exposures_of(view, tool, event.get("arguments") or {}, event.get("result_digest"))
        if found is None:
            undecidable += 1
            continue
        seen.extend(found)
        for criterion, sets in overlay.evidence.items():
            if labels.get(criterion) == "accessed":
                continue
            if any(all(any(_satisfies(item, e) for e in seen) for item in members) for members in sets):
                labels[criterion] = "accessed"
                if first_access is None:
                    first_access = calls - 1
    if undecidable:
        labels = {k: ("unknown" if v == "not_accessed" else v) for k, v in labels.items()}
    return AccessReport(
        labels=labels,
        inspections=inspections,
        tool_calls=calls,
        tool_calls_before_first_access=first_access,
        undecidable_calls=undecidable,
    )
