"""Fold a revision to a date. Nothing dated after D may survive this module.

Pure: no I/O, no clock. A record seen at D shows only its events dated ≤ D.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from worldkit.world.models import Document, Message, Record
from worldkit.world.state import WorldState


def document_exists(doc: Document, date: dt.date) -> bool:
    return doc.visible_from <= date and (doc.visible_until is None or date < doc.visible_until)


@dataclass(frozen=True)
class RecordView:
    """A record's state as of a date."""

    record: Record
    status: str | None
    fields: dict[str, Any]
    events: tuple[dict[str, Any], ...]
    created: dt.date
    updated: dt.date

    @property
    def id(self) -> str:
        return self.record.id

    def as_json(self, visible_links: list[str]) -> dict[str, Any]:
        rec = self.record
        return {
            "id": rec.id,
            "system": rec.system,
            "type": rec.type,
            "title": rec.title,
            "status": self.status,
            "owner": rec.owner,
            "department": rec.department,
            "classification": rec.classification.value,
            "created": self.created.isoformat(),
            "updated": self.updated.isoformat(),
            "fields": self.fields,
            "links": visible_links,
            "history": list(self.events),
        }


def fold_record(record: Record, date: dt.date) -> RecordView | None:
    """The record's state on `date`, or None if it does not exist yet."""
    events = [event for event in record.events if event.date <= date]
    if not events:
        return None
    events.sort(key=_event_date)  # stable: events of one day keep the record's order
    if events[0].kind != "created":
        return None
    status: str | None = None
    fields: dict[str, Any] = {}
    history: list[dict[str, Any]] = []
    for event in events:
        entry: dict[str, Any] = {"date": event.date.isoformat(), "kind": event.kind}
        if event.by:
            entry["by"] = event.by
        if event.status is not None:
            status = entry["status"] = event.status
        if event.fields:
            if event.kind in _SETS_FIELDS:
                fields.update(event.fields)
            entry["fields"] = event.fields
        if event.note:
            entry["note"] = event.note
        history.append(entry)
    return RecordView(
        record=record,
        status=status,
        fields=dict(sorted(fields.items())),
        events=tuple(history),
        created=events[0].date,
        updated=events[-1].date,
    )


_event_date = attrgetter("date")
_SETS_FIELDS = frozenset({"created", "update", "correction"})


@dataclass(frozen=True)
class Snapshot:
    """Everything that exists on `date` in one revision (before any access decision)."""

    state: WorldState
    date: dt.date
    documents: dict[str, Document]
    records: dict[str, RecordView]
    messages: dict[str, Message]


_SHARED: list[dict[tuple[int, dt.date], tuple[WorldState, Snapshot]]] = []
"""The snapshot memos in force (`shared_snapshots`); the innermost one is used."""


@contextmanager
def shared_snapshots() -> Iterator[None]:
    """Within the block, `as_of` of one state object on one date is folded once and the snapshot
    shared (by the seats of one date, say). Snapshots are only read; the memo holds each state, so
    its id is not reused while the block lasts."""
    _SHARED.append({})
    try:
        yield
    finally:
        _SHARED.pop()


def as_of(state: WorldState, date: dt.date) -> Snapshot:
    memo = _SHARED[-1] if _SHARED else None
    if memo is not None:
        known = memo.get((id(state), date))
        if known is not None and known[0] is state:
            return known[1]
    snapshot = _fold(state, date)
    if memo is not None:
        memo[(id(state), date)] = (state, snapshot)
    return snapshot


def _fold(state: WorldState, date: dt.date) -> Snapshot:
    documents = {k: d for k, d in state.documents.items() if document_exists(d, date)}
    records: dict[str, RecordView] = {}
    for key, rec in state.records.items():
        view = fold_record(rec, date)
        if view is not None:
            records[key] = view
    messages = {k: m for k, m in state.messages.items() if m.date <= date}
    return Snapshot(state=state, date=date, documents=documents, records=records, messages=messages)
