"""Fault injection into a scratch copy: edit the world source, the frozen manifests, staged packages.

Used by the seeded violations and the mutation campaign. Every function here takes a
`ScratchCopy` (or a staged task inside one) and never touches anything else.
"""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from worldkit.canon import pretty_json, sha256_bytes
from worldkit.frozen.index import INDEX_NAME, FrozenIndex, FrozenProjection, read_index
from worldkit.materialize.manifest import Entry, Manifest, manifest_bytes
from worldkit.render import Renderer
from worldkit.timeline import as_of
from worldkit.timeline.asof import fold_record
from worldkit.verify.scratch import ScratchCopy
from worldkit.world.models import Document, Message, Record
from worldkit.world.state import WorldState

Key = tuple[str, str, str]


@dataclass
class Injection:
    """What was injected, and the hooks a verify run over the scratch copy must use."""

    description: str
    server_factory: Callable[..., Any] | None = None
    tamper_staged: Callable[[list[Any]], None] | None = None
    touches: set[str] = field(default_factory=set)
    """Which artifacts are changed: `world`, `manifests`, `staged-candidate`, `staged-verifier`, `server`, `log`."""
    store: str | None = None
    """A store URL whose run logs the event-log check verifies (log cases build one)."""
    runs: Path | None = None
    """Run folders holding those runs' log anchors."""
    notes: list[str] = field(default_factory=list)
    """What the staging hook actually changed (filled while verify stages the tasks)."""
    tamper_targets: Callable[[list[Any]], list[Any]] | None = None
    """Of the staged tasks `tamper_staged` is given, those it may change (None: any of them). The
    campaign hands the others over as hard links to the untouched copy's packages."""


class NotApplicable(Exception):
    """The fault cannot be injected into this world (e.g. it has no overlays); the message says why."""


# -- world source ------------------------------------------------------------------------------


def edit_changeset(
    world: Path,
    rev: str,
    *,
    update: dict[str, list[dict[str, Any]]] | None = None,
    remove: dict[str, list[str]] | None = None,
) -> None:
    """Add field updates / removals to revision `rev`'s changeset in `world.yaml`.

    A changeset applies to its revision and every descendant, so editing the base revision is
    the same as editing the entity where it is defined (YAML file or generator).
    """
    path = world / "world.yaml"
    body = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec = next(r for r in body["revisions"] if r["name"] == rev)
    for collection, updates in (update or {}).items():
        spec.setdefault("update", {}).setdefault(collection, []).extend(updates)
    for collection, ids in (remove or {}).items():
        spec.setdefault("remove", {}).setdefault(collection, []).extend(ids)
    path.write_text(yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")


def detach(state: WorldState, collection: str, entity: str) -> dict[str, list[dict[str, Any]]]:
    """Updates that drop every reference to `entity`, so removing it leaves a valid world."""
    updates: dict[str, list[dict[str, Any]]] = {}
    if collection == "documents":
        updates["documents"] = [
            {"id": d.id, "set": {"superseded_by": None}} for d in state.documents.values() if d.superseded_by == entity
        ]
    if collection == "records":
        updates["records"] = [
            {"id": r.id, "set": {"links": [x for x in r.links if x != entity]}}
            for r in state.records.values()
            if entity in r.links
        ]
    return {k: v for k, v in updates.items() if v}


# -- bytes of world items ----------------------------------------------------------------------


def item_bytes(state: WorldState, item: Document | Record | Message, day: dt.date) -> bytes:
    """The bytes an item would have in a projection on `day` (best effort, for believable entries)."""
    if isinstance(item, Document):
        return Renderer(as_of(state, max(day, item.visible_from))).document(item)
    if isinstance(item, Record):
        last = max(e.date for e in item.events)
        view = fold_record(item, max(day, last))
        return pretty_json(view.as_json([])).encode() if view else b"{}\n"
    return pretty_json({"id": item.id, "date": item.date.isoformat(), "subject": item.subject, "body": item.body}).encode()


# -- frozen manifests --------------------------------------------------------------------------


def _write_index(scratch: ScratchCopy, index: FrozenIndex) -> None:
    (scratch.manifests / INDEX_NAME).write_text(pretty_json(index.model_dump(mode="json")), encoding="utf-8")


def rewrite_frozen(
    scratch: ScratchCopy, key: Key, change: Callable[[Manifest], Manifest], *, consistent: bool = True
) -> Manifest:
    """Rewrite one frozen projection manifest; `consistent` recomputes its fingerprint and the index
    entry, as a careful attacker (or a stale freeze) would."""
    index = read_index(scratch.manifests)
    entry = next(p for p in index.projections if p.key == key)
    path = scratch.manifests / entry.relpath
    manifest = change(Manifest.model_validate_json(path.read_bytes()))
    if consistent:
        manifest = manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()})
    path.write_bytes(manifest_bytes(manifest))
    if consistent:
        projections = [
            FrozenProjection(rev=p.rev, date=p.date, seat=p.seat, fingerprint=manifest.fingerprint, files=len(manifest.files))
            if p.key == key else p
            for p in index.projections
        ]
        _write_index(scratch, index.model_copy(update={"projections": projections}))
    return manifest


def add_entry(scratch: ScratchCopy, key: Key, entry: Entry) -> None:
    """Put one more file entry into a frozen projection (kept sorted, fingerprint recomputed)."""

    def change(manifest: Manifest) -> Manifest:
        files = sorted([*(e for e in manifest.files if e.path != entry.path), entry], key=lambda e: e.path)
        return manifest.model_copy(update={"files": files})

    rewrite_frozen(scratch, key, change)


def entry_for(path: str, data: bytes, surface: str, source: str, mtime: str = "2000-01-01T12:00:00Z") -> Entry:
    return Entry(path=path, sha256=sha256_bytes(data), size=len(data), surface=surface, source=source, mtime=mtime)


# -- staged packages ---------------------------------------------------------------------------


def rename(path: Path, new_name: str) -> Path:
    target = path.with_name(new_name)
    path.rename(target)
    return target


def copy_into(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def rehash_package(package: Path, rel: str, data: bytes) -> None:
    """The re-hashed package attack: add `candidate/<rel>` to an applied package and re-digest every
    manifest consistently with worldkit's own functions (projection fingerprint, candidate and
    package digests), so the package agrees with itself everywhere. Only a comparison with what was
    frozen can tell it from a real one."""
    import json

    from worldkit.canon import sha256_json
    from worldkit.materialize.manifest import MANIFEST_NAME, read_manifest, scan_tree

    candidate = package / "candidate"
    target = candidate / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    projection = candidate / "projection"
    manifest = read_manifest(projection)
    if rel.startswith("projection/"):
        inner = rel[len("projection/"):]
        entry = entry_for(inner, data, inner.split("/", 1)[0], "smuggled")
        files = sorted([*(e for e in manifest.files if e.path != inner), entry], key=lambda e: e.path)
        manifest = manifest.model_copy(update={"files": files})
        manifest = manifest.model_copy(update={"fingerprint": manifest.expected_fingerprint()})
        (projection / MANIFEST_NAME).write_bytes(manifest_bytes(manifest))
    body = json.loads((candidate / MANIFEST_NAME).read_bytes())
    digests = scan_tree(candidate, frozenset({MANIFEST_NAME, f"projection/{MANIFEST_NAME}"}))
    body["files"] = [{"path": p, "sha256": d, "size": (candidate / p).stat().st_size} for p, d in sorted(digests.items())]
    body["fingerprint"] = manifest.fingerprint
    body.pop("candidate_sha256", None)
    body["candidate_sha256"] = sha256_json(body)
    (candidate / MANIFEST_NAME).write_text(pretty_json(body), encoding="utf-8")
    summary_file = package / "package.json"
    if summary_file.is_file():
        summary = json.loads(summary_file.read_bytes())
        summary.update(fingerprint=manifest.fingerprint, candidate_sha256=body["candidate_sha256"])
        summary_file.write_text(pretty_json(summary), encoding="utf-8")
