"""A rendered document's intended date: the last day on or before D on which its content changed.

A template reads the world through `world`; while one document renders, `world` is a read-only
view that notes what the template looked at. The days it could have changed on are:

- its own `visible_from` (and its successor's, when the superseding document is shown);
- for each record whose state it read (status, fields, dates, history, links): the record's last
  event on or before D (and the creation of any linked record it can see); for a record it only
  listed or filtered by `id`, `type` or `system` (which never change): nothing;
- for each record it printed something else static of (title, owner, …): the record's creation;
- for a document of `world.documents` it read: that document's `visible_from`; for iterating the
  whole collection: the latest `visible_from` / `visible_until` on or before D (membership);
- `world.as_of` itself: D (a page that prints the projection date changes every day).

People, departments, products and the company carry no dates (a revision, not a day, changes
them). `Renderer.document_dated` then walks these days from the latest down and keeps the first
whose eve renders different bytes (a page that filtered a new record out did not change). So a
page that shows one equipment record is dated by that record's last change, an org chart by its
own `visible_from`, and nothing re-stamps itself daily unless it prints `world.as_of`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from worldkit.timeline import Snapshot

_FILTER_KEYS = frozenset({"id", "type", "system"})
"""Record keys that never change and only select: reading them dates nothing."""
_STATIC_KEYS = frozenset({"title", "owner", "department", "classification", "created"})
"""Record keys fixed at creation: reading them dates the record's creation."""


class DateLog:
    """The days after `start` on which what a render read could have changed."""

    __slots__ = ("start", "days")

    def __init__(self, start: dt.date) -> None:
        self.start = start
        self.days: set[dt.date] = set()

    def note(self, day: dt.date) -> None:
        if day > self.start:
            self.days.add(day)


class _RecordView(Mapping[str, Any]):
    """One record's JSON as a template sees it, noting which keys are read."""

    __slots__ = ("_data", "_dynamic", "_created", "_log")

    def __init__(self, data: dict[str, Any], dynamic: dt.date, created: dt.date, log: DateLog) -> None:
        self._data, self._dynamic, self._created, self._log = data, dynamic, created, log

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        if key not in _FILTER_KEYS:
            self._log.note(self._created if key in _STATIC_KEYS else self._dynamic)
        return value

    def __iter__(self) -> Iterator[str]:
        self._log.note(self._dynamic)
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


class _Collection(Mapping[str, Any]):
    """A keyed collection whose values are wrapped (records) or dated on read (documents)."""

    __slots__ = ("_data", "_wrap", "_membership", "_log")

    def __init__(self, data: Mapping[str, Any], wrap: Any, membership: dt.date | None, log: DateLog) -> None:
        self._data, self._wrap, self._membership, self._log = data, wrap, membership, log

    def __getitem__(self, key: str) -> Any:
        return self._wrap(key, self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        if self._membership is not None:
            self._log.note(self._membership)
        return iter(self._data)

    def __len__(self) -> int:
        if self._membership is not None:
            self._log.note(self._membership)
        return len(self._data)


class _World(Mapping[str, Any]):
    """`world` for one render: `as_of`, `records` and `documents` note what they give out."""

    __slots__ = ("_data", "_snapshot", "_log", "_records", "_documents")

    def __init__(self, data: dict[str, Any], snapshot: Snapshot, log: DateLog) -> None:
        self._data, self._snapshot, self._log = data, snapshot, log
        self._records: _Collection | None = None
        self._documents: _Collection | None = None

    def _record(self, key: str, value: dict[str, Any]) -> _RecordView:
        snap = self._snapshot
        view = snap.records[key]
        dynamic = max([view.updated, *(snap.records[x].created for x in value.get("links", ()) if x in snap.records)])
        return _RecordView(value, dynamic, view.created, self._log)

    def _document(self, key: str, value: dict[str, Any]) -> dict[str, Any]:
        self._log.note(self._snapshot.documents[key].visible_from)
        return value

    def __getitem__(self, key: str) -> Any:
        value = self._data[key]
        snap = self._snapshot
        if key == "as_of":
            self._log.note(snap.date)
        elif key == "records":
            if self._records is None:
                # Listing every record: the set changes only when one is created (never by filtering).
                self._records = _Collection(value, self._record, None, self._log)
            return self._records
        elif key == "documents":
            if self._documents is None:
                days = [d.visible_from for d in snap.documents.values()]
                days += [d.visible_until for d in snap.state.documents.values()
                         if d.visible_until is not None and d.visible_until <= snap.date]
                self._documents = _Collection(value, self._document, max(days, default=None), self._log)
            return self._documents
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


ITEM_FIRST = (_RecordView, _Collection, _World)
"""The mappings a render hands templates: slotted, so an instance has no attribute but its type's
(`obj.name` for any other name is the sandbox's item lookup, `worldkit.render.env._BoundedSandbox.getattr`)."""


def watched_world(data: dict[str, Any], snapshot: Snapshot, log: DateLog) -> _World:
    return _World(data, snapshot, log)
