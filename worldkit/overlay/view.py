"""The candidate view of a projection: resolve evidence locators and text inside projection files.

`ProjectionView` wraps a materialized projection folder and its manifest. It maps an evidence
`{surface, locator}` to the projection file that holds it, and checks anchors and record fields
against the bytes on disk. It reads; it never writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from worldkit.render.office import extract_text
from worldkit.materialize.manifest import Entry, Manifest, read_manifest
from worldkit.overlay.models import EvidenceItem


@dataclass(frozen=True)
class ResolvedItem:
    """An evidence item located in the projection."""

    item: EvidenceItem
    path: str
    """Projection path of the file holding the item."""
    sha256: str
    """Digest of that file."""
    message: str | None = None
    """chat only: the message id inside the channel log."""

    def as_json(self) -> dict[str, Any]:
        body = {**self.item.model_dump(mode="json"), "path": self.path, "sha256": self.sha256}
        if self.message:
            body["message"] = self.message
        return body


def json_strings(value: Any) -> list[str]:
    """Every string leaf of a JSON value, in document order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in json_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    return []


def readable_text(path: str, data: bytes) -> str:
    """Text of a projection file as a reader sees it: raw text, plus the string values of JSON
    and JSONL files (so text escaped inside JSON is found too); an office file's extracted text."""
    office = extract_text(path, data)
    if office is not None:
        return office
    text = data.decode("utf-8", errors="replace")
    if path.endswith(".json"):
        try:
            return text + "\n" + "\n".join(json_strings(json.loads(text)))
        except json.JSONDecodeError:
            return text
    if path.endswith(".jsonl"):
        strings = []
        for line in text.splitlines():
            try:
                strings += json_strings(json.loads(line))
            except json.JSONDecodeError:
                continue
        return text + "\n" + "\n".join(strings)
    return text


class ProjectionView:
    """A materialized projection (or curated subset) with its manifest."""

    def __init__(self, root: Path, manifest: Manifest | None = None) -> None:
        self.root = root
        self.manifest = manifest or read_manifest(root)

    @cached_property
    def entries(self) -> dict[str, Entry]:
        return self.manifest.by_path()

    @cached_property
    def _by_source(self) -> dict[tuple[str, str], Entry]:
        return {(e.surface, e.source): e for e in self.manifest.files}

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()

    def path_of(self, item: EvidenceItem) -> tuple[str | None, str | None]:
        """(projection path, chat message id) for an item, or (None, None) if not in the view."""
        if item.surface == "files":
            entry = self.entries.get(item.locator)
            return (entry.path, None) if entry and entry.surface == "files" else (None, None)
        if item.surface == "records":
            entry = self._by_source.get(("records", item.locator))
            return (entry.path, None) if entry else (None, None)
        if item.surface == "mail":
            path = f"mail/{item.locator}.json"
            return (path, None) if path in self.entries else (None, None)
        channel, _, message = item.locator.partition("#")
        path = f"chat/{channel}.jsonl"
        if path not in self.entries:
            return None, None
        if message and message not in {m.get("id") for m in self.chat_messages(path)}:
            return None, None
        return path, message or None

    def chat_messages(self, path: str) -> list[dict[str, Any]]:
        lines = self.read(path).decode("utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def item_text(self, path: str, message: str | None = None) -> str:
        """The readable text of an item: a file, or one chat message."""
        if message is not None:
            chosen = [m for m in self.chat_messages(path) if m.get("id") == message]
            return "\n".join(json_strings(chosen))
        return readable_text(path, self.read(path))

    def resolve(self, item: EvidenceItem) -> tuple[ResolvedItem | None, list[tuple[str, str]]]:
        """The located item and its problems as (code, message): `evidence-missing`,
        `evidence-anchor-missing`, `evidence-field-missing`."""
        path, message = self.path_of(item)
        if path is None:
            return None, [("evidence-missing", _missing(item))]
        problems = []
        if item.anchor is not None and " ".join(item.anchor.split()) not in " ".join(self.item_text(path, message).split()):
            where = path + (f"#{message}" if message else "")
            problems.append(("evidence-anchor-missing", f"anchor {item.anchor!r} does not occur in {where}"))
        if item.fields:
            record = json.loads(self.read(path))
            absent = [f for f in item.fields if f not in record.get("fields", {}) and f not in record]
            if absent:
                problems.append(
                    ("evidence-field-missing", f"record {item.locator} has no field {', '.join(absent)} in {path}")
                )
        return ResolvedItem(item, path, self.entries[path].sha256, message), problems


def _missing(item: EvidenceItem) -> str:
    where = {
        "files": f"{item.locator} is not in the candidate view",
        "records": f"record {item.locator} is not in the candidate view",
        "mail": f"mail message {item.locator} is not in the candidate view (no mail/{item.locator}.json)",
        "chat": f"chat {item.locator} is not in the candidate view",
    }
    return where[item.surface]
