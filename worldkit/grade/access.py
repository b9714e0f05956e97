"""Evidence access: which criteria had one sufficient evidence set returned to the agent.

Decided from the event log and the frozen pre-task candidate package. The run is replayed in
order: every logged state change is re-applied, and every successful read, search, record get or
message read is re-executed read-only against the state *as it was at that call* (those calls
are pure functions of it) and must reproduce the logged result digest; what it returned is then
matched against the overlay's evidence map. So a permitted write or comment followed by a
re-read reproduces exactly. A listing or a file name alone never counts.

Reading the seat's own workspace, or a message the seat sent, is not an inspection of company
evidence: it exposes nothing and never makes a label `unknown`. A call that cannot be reproduced
makes `unknown` only the criteria it could have decided: those not already accessed whose
evidence sets would be complete if that call had returned what it asked for.

Search snippets are compared as plain text: the ranked search's `**` match markers, ellipses and
runs of whitespace are removed from both the snippet and the anchor before matching.

Reads add up: what the run received of a file is the **union** of every range returned to it —
`read_file` pieces (offset and length), pages, and search snippets placed where they occur in the
file — and a file anchor is accessed when one contiguous received stretch covers it. A gap
between pieces is never bridged. A listing never counts, but a message subject or record title
in a listing that carries an anchor verbatim is reported as *seen in a listing*
(`AccessReport.seen_in_listing`) without changing the label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from worldkit.canon import sha256_json
from worldkit.overlay.models import EvidenceItem, Overlay

AccessLabel = Literal["accessed", "not_accessed", "unknown"]
EVIDENCE_TOOLS = frozenset({"read_file", "search_files", "get_record", "read_message"})
LISTING_TOOLS = frozenset({"list_messages", "query_records"})
INSPECTION_TOOLS = frozenset({"read_file", "get_record", "read_message"})
STATE_TOOLS = frozenset({"write_file", "update_record", "send_message"})
WORKSPACE_PREFIX = "workspace/"
LIFECYCLE_PREFIX = "worldkit:"
"""Events whose tool starts with this mark the run's life (e.g. `worldkit:run-failed`), not a call."""


@dataclass(frozen=True)
class Exposure:
    """Content of one item returned by a call."""

    surface: str
    locator: str
    text: str
    fields: frozenset[str] = frozenset()
    spans: tuple[tuple[int, int], ...] = ()
    """Where in the whole source (a file's text) the returned text lies; empty when unplaced."""
    whole: str = ""
    """The whole source text the spans index (files only)."""
    listing: bool = False
    """A listing line (message subject, record title): reported, never counted as accessed."""


class Received:
    """What a run received of each file: the union of the ranges returned to it."""

    def __init__(self) -> None:
        self._spans: dict[str, list[tuple[int, int]]] = {}
        self._whole: dict[str, str] = {}
        self._loose: dict[str, list[str]] = {}
        self._merged: dict[str, Exposure] = {}

    def add(self, exposure: Exposure) -> None:
        locator = exposure.locator
        if exposure.spans:
            self._whole[locator] = exposure.whole
            self._spans.setdefault(locator, []).extend(exposure.spans)
        else:
            self._loose.setdefault(locator, []).append(exposure.text)
        self._merged.pop(locator, None)

    def exposure(self, locator: str) -> Exposure:
        """One exposure per file: its received stretches (and unplaced snippets), never joined across a gap."""
        if locator not in self._merged:
            stretches: list[tuple[int, int]] = []
            for start, end in sorted(self._spans.get(locator, [])):
                if stretches and start <= stretches[-1][1]:
                    stretches[-1] = (stretches[-1][0], max(end, stretches[-1][1]))
                else:
                    stretches.append((start, end))
            whole = self._whole.get(locator, "")
            pieces = [plain(whole[a:b]) for a, b in stretches] + self._loose.get(locator, [])
            self._merged[locator] = Exposure("files", locator, "\x00".join(pieces))
        return self._merged[locator]

    def exposures(self) -> list[Exposure]:
        return [self.exposure(locator) for locator in sorted(set(self._spans) | set(self._loose))]


def _placed(whole: str, snippet: str) -> tuple[tuple[int, int], ...]:
    """Where a search snippet's pieces occur in the file (each piece placed only if it occurs once)."""
    spans = []
    for piece in snippet.replace("**", "").split("…"):
        piece = piece.strip()
        if piece and whole.count(piece) == 1:
            start = whole.index(piece)
            spans.append((start, start + len(piece)))
    return tuple(spans)


@dataclass(frozen=True)
class Possible:
    """What an undecidable call could have returned: one surface, one locator or any (None)."""

    surface: str
    locator: str | None


@dataclass(frozen=True)
class AccessReport:
    labels: dict[str, AccessLabel]
    inspections: int
    tool_calls: int
    tool_calls_before_first_access: int | None
    undecidable_calls: int
    seen_in_listing: dict[str, list[str]] = field(default_factory=dict)
    """Criterion → evidence (`surface:locator`) whose anchor a listing line carried verbatim; not access."""


def tool_events(events: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The events that are tool calls (lifecycle marks left out)."""
    return [e for e in events if not str(e.get("tool", "")).startswith(LIFECYCLE_PREFIX)]


def plain(text: str) -> str:
    """Text as compared with anchors: no `**` markup, no ellipses, single spaces."""
    return " ".join(text.replace("**", "").replace("…", " ").split())


def _flatten(value: Any, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    if isinstance(value, Mapping):
        for key, inner in value.items():
            name = f"{prefix}{key}"
            keys.add(name)
            keys |= _flatten(inner, f"{name}.")
    return keys


def _own(tool: str, arguments: Mapping[str, Any]) -> bool:
    """A read of the seat's own workspace (mail it sent is recognised when re-executed)."""
    if tool == "read_file":
        return str(arguments.get("path", "")).startswith(WORKSPACE_PREFIX)
    return False


def exposures_of(view: Any, tool: str, arguments: Mapping[str, Any], logged_digest: str | None) -> list[Exposure] | None:
    """What a successful call returned, by re-running it on `view` (the state at that call);
    None if it cannot be reproduced (its digest differs)."""
    try:
        result = getattr(view, tool)(**arguments)
    except Exception:  # noqa: BLE001 - a call that no longer reproduces is undecidable, not fatal
        return None
    # The servers log sha256 of the structured result, i.e. of the model's JSON dump.
    if logged_digest is not None and logged_digest != sha256_json(result.model_dump(mode="json")):
        return None
    if tool == "read_file":
        if result.path.startswith(WORKSPACE_PREFIX):
            return []
        whole = _whole_text(view, result.path, result.total_chars)
        span = ((result.offset, result.offset + len(result.text)),) if whole is not None else ()
        return [Exposure("files", f"files/{result.path}", plain(result.text), spans=span, whole=whole or "")]
    if tool == "search_files":
        found = []
        for m in result.matches:
            if m.path.startswith(WORKSPACE_PREFIX):
                continue
            whole = _whole_text(view, m.path, None)
            spans = _placed(whole, m.snippet) if whole is not None else ()
            found.append(Exposure("files", f"files/{m.path}", plain(m.snippet)))  # a snippet counts on its own
            if spans:
                found.append(Exposure("files", f"files/{m.path}", "", spans=spans, whole=whole or ""))
        return found
    if tool == "list_messages":
        return [Exposure("mail", m.id, plain(m.subject or ""), listing=True) for m in result.messages if m.subject]
    if tool == "query_records":
        return [Exposure("records", r.id, plain(r.title), listing=True) for r in result.records]
    if tool == "get_record":
        record = result.record
        return [Exposure("records", result.id, plain(str(record)), frozenset(_flatten(record)))]
    if tool == "read_message":
        if result.sent_by_you:
            return []
        if result.kind == "chat" and result.channel:
            text = plain(result.body)
            return [Exposure("chat", f"{result.channel}#{result.id}", text), Exposure("chat", result.channel, text)]
        return [Exposure("mail", result.id, plain(f"{result.subject or ''}\n{result.body}"))]
    return []


def _whole_text(view: Any, path: str, total: int | None) -> str | None:
    """A file's whole text as the seat's view serves it (None if it cannot be read again)."""
    try:
        if total is None:
            total = view.read_file(path, 0, 1).total_chars
        return str(view.read_file(path, 0, max(int(total), 1)).text)
    except Exception:  # noqa: BLE001 - an unplaceable piece still counts on its own
        return None


def _possible(tool: str, arguments: Mapping[str, Any]) -> list[Possible]:
    if tool == "read_file":
        return [Possible("files", f"files/{arguments.get('path', '')}")]
    if tool == "search_files":
        return [Possible("files", None)]
    if tool == "get_record":
        return [Possible("records", str(arguments.get("id", "")))]
    if tool == "read_message":
        message = str(arguments.get("id", ""))
        return [Possible("mail", message), Possible("chat", None)]
    return []


def _satisfies(item: EvidenceItem, exposure: Exposure) -> bool:
    if item.surface != exposure.surface or item.locator != exposure.locator:
        return False
    if item.anchor and plain(item.anchor) not in exposure.text:
        return False
    # A field is named bare (`assay_pct`, `status`) or dotted (`fields.assay_pct`).
    return all(f in exposure.fields or f"fields.{f}" in exposure.fields for f in item.fields)


def _could(item: EvidenceItem, possible: Iterable[Possible]) -> bool:
    return any(p.surface == item.surface and p.locator in (None, item.locator) for p in possible)


class _Replay:
    """The seat's state advanced event by event, with a view that answers reads at that point."""

    def __init__(self, candidate: Path, config: Any) -> None:
        from worldkit.mcp.seat import SeatView
        from worldkit.mcp.state import pre_task_state

        self.state = pre_task_state(candidate)
        self.view = SeatView(Path(candidate) / "projection", config, state=self.state)

    def apply(self, change: Mapping[str, Any]) -> bool:
        from worldkit.mcp.state import WriteFileChange, parse_change

        try:
            parsed = parse_change(change)
            self.state.apply(parsed)
        except Exception:  # noqa: BLE001 - a change that cannot be re-applied leaves the replay unsure
            return False
        if isinstance(parsed, WriteFileChange):
            self.view.index.put(WORKSPACE_PREFIX + parsed.path, parsed.content)
        return True


def evidence_access(
    overlay: Overlay,
    view: Any,
    events: Iterable[Mapping[str, Any]],
    *,
    candidate: Path | None = None,
    config: Any = None,
) -> AccessReport:
    """Label every criterion `accessed` / `not_accessed` / `unknown` from a run's events.

    With `candidate` (the staged candidate package) and its tool `config`, reads are re-executed
    against the state replayed up to each call (`view` may then be None); otherwise against `view`
    as given (the pre-task view)."""
    replay = _Replay(candidate, config if config is not None else view.config) if candidate is not None else None
    current = replay.view if replay is not None else view
    seen: list[Exposure] = []
    received = Received()
    seen_in_listing: dict[str, set[str]] = {}
    possible: list[Possible] = []
    labels: dict[str, AccessLabel] = {c.id: "not_accessed" for c in overlay.rubric}
    first_access: int | None = None
    undecidable = 0
    calls = inspections = 0
    diverged = False
    for event in tool_events(events):
        calls += 1
        tool = event["tool"]
        arguments = event.get("arguments") or {}
        if event["outcome"] != "ok":
            continue
        if tool in STATE_TOOLS:
            if event.get("state_change") and replay is not None and not replay.apply(event["state_change"]):
                diverged = True
            continue
        if tool in LISTING_TOOLS and isinstance(arguments, Mapping) and not diverged:
            listed = exposures_of(current, tool, arguments, event.get("result_digest")) or []
            _note_listed(overlay, listed, seen_in_listing)
            continue
        if tool not in EVIDENCE_TOOLS or not isinstance(arguments, Mapping) or _own(tool, arguments):
            continue
        if not event.get("result_digest"):
            continue  # no result digest logged: no answer is known to have reached the agent
        found = None if diverged else exposures_of(current, tool, arguments, event.get("result_digest"))
        if tool in INSPECTION_TOOLS and not (tool == "read_message" and found == []):  # [] : mail the seat sent
            inspections += 1
        if found is None:
            undecidable += 1
            possible.extend(_possible(tool, arguments))
            continue
        for exposure in found:
            if exposure.surface == "files":
                received.add(exposure)
            else:
                seen.append(exposure)
        seen_now = seen + received.exposures()
        for criterion, sets in overlay.evidence.items():
            if labels.get(criterion) == "accessed":
                continue
            if any(all(any(_satisfies(item, e) for e in seen_now) for item in members) for members in sets):
                labels[criterion] = "accessed"
                if first_access is None:
                    first_access = calls - 1
    seen = seen + received.exposures()
    if possible:
        for criterion, sets in overlay.evidence.items():
            if labels.get(criterion) != "not_accessed":
                continue
            if any(
                all(any(_satisfies(item, e) for e in seen) or _could(item, possible) for item in members)
                for members in sets
            ):
                labels[criterion] = "unknown"
    return AccessReport(
        labels=labels,
        inspections=inspections,
        tool_calls=calls,
        tool_calls_before_first_access=first_access,
        undecidable_calls=undecidable,
        seen_in_listing={c: sorted(found) for c, found in sorted(seen_in_listing.items())
                         if labels.get(c) != "accessed"},  # fmt: skip
    )


def _note_listed(overlay: Overlay, listed: list[Exposure], notes: dict[str, set[str]]) -> None:
    """Evidence whose anchor a listing line carries verbatim, per criterion (reported, not counted)."""
    for criterion, sets in overlay.evidence.items():
        for members in sets:
            for item in members:
                if not item.anchor:
                    continue
                for line in listed:
                    if line.surface == item.surface and line.locator == item.locator and plain(item.anchor) in line.text:
                        notes.setdefault(criterion, set()).add(f"{item.surface}:{item.locator}")


def unknown_access(overlay: Overlay) -> AccessReport:
    """Labels when there is no event log to decide from: every criterion `unknown`."""
    return AccessReport(
        labels={c.id: "unknown" for c in overlay.rubric},
        inspections=0,
        tool_calls=0,
        tool_calls_before_first_access=None,
        undecidable_calls=0,
    )

