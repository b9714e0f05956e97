"""A resolved revision of a world: every entity by id, the templates, and the canonical digest.

Pure data; never reads files (the loader builds it) and never renders.
"""

from __future__ import annotations

import datetime as dt

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from worldkit.canon import canonical_json, sha256_bytes
from worldkit.world.models import (
    COLLECTIONS,
    Company,
    Department,
    Document,
    Group,
    Message,
    PermissionRule,
    Person,
    Record,
    Role,
    Seat,
    System,
)


@dataclass(frozen=True)
class WorldState:
    """The whole canonical state of one revision."""

    world_id: str
    revision: str
    parent: str | None
    company: Company
    people: dict[str, Person]
    roles: dict[str, Role]
    groups: dict[str, Group]
    seats: dict[str, Seat]
    permissions: dict[str, PermissionRule]
    documents: dict[str, Document]
    records: dict[str, Record]
    messages: dict[str, Message]
    templates: dict[str, str] = field(repr=False)

    @cached_property
    def departments(self) -> dict[str, Department]:
        return {d.id: d for d in self.company.departments}

    @cached_property
    def systems(self) -> dict[str, System]:
        return {s.id: s for s in self.company.systems}

    @cached_property
    def template_digests(self) -> dict[str, str]:
        return {name: sha256_bytes(src.encode("utf-8")) for name, src in sorted(self.templates.items())}

    @cached_property
    def history_end(self) -> dt.date | None:
        """The last date anything in this revision happens: a document appears, a record event, a message."""
        dates = [d.visible_from for d in self.documents.values()]
        dates += [e.date for r in self.records.values() for e in r.events]
        dates += [m.date for m in self.messages.values()]
        return max(dates, default=None)

    def collection(self, name: str) -> dict[str, Any]:
        return getattr(self, name)

    def canonical(self) -> dict[str, Any]:
        """The JSON-able canonical form: collections sorted by id, templates by digest."""
        body: dict[str, Any] = {
            "world": self.world_id,
            "company": self.company.model_dump(mode="json"),
            "templates": self.template_digests,
        }
        for name in COLLECTIONS:
            items = self.collection(name)
            body[name] = [items[key].model_dump(mode="json") for key in sorted(items)]
        return body

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the whole state (the revision digest).

        Streamed entity by entity: the bytes hashed are exactly `canonical_json(self.canonical())`
        without ever holding that string (or the dict) for a large world.
        """
        head = {"world": self.world_id, "company": self.company.model_dump(mode="json"), "templates": self.template_digests}
        digest = hashlib.sha256()
        keys = sorted([*head, *COLLECTIONS])
        digest.update(b"{")
        for index, key in enumerate(keys):
            digest.update(("," if index else "").encode() + json.dumps(key).encode() + b":")
            if key in head:
                digest.update(canonical_json(head[key]).rstrip("\n").encode("utf-8"))
                continue
            items = self.collection(key)
            digest.update(b"[")
            for n, item_id in enumerate(sorted(items)):
                if n:
                    digest.update(b",")
                digest.update(canonical_json(items[item_id].model_dump(mode="json")).rstrip("\n").encode("utf-8"))
            digest.update(b"]")
        digest.update(b"}\n")
        return digest.hexdigest()

    def date_span(self) -> tuple[Any, Any] | None:
        dates = [d.visible_from for d in self.documents.values()]
        dates += [e.date for r in self.records.values() for e in r.events]
        dates += [m.date for m in self.messages.values()]
        return (min(dates), max(dates)) if dates else None
