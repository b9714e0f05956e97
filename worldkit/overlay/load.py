"""Find, load and digest overlays.

Layout: `overlays/<world>/<id>.yaml`, or `overlays/<world>/<id>/overlay.yaml` when the overlay
carries reference files beside it. Overlays are searched on the path of `worldkit.locate`
($WORLDKIT_OVERLAYS, --worlds/$WORLDKIT_PATH, the current project, the shipped worlds). A YAML or validation error is an `InvalidOverlay` (exit 3)
naming the file, the entity and the field; every validation error is listed, not just the first.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from worldkit.world.yamlsafe import StrictLoader, problem_text
from worldkit.canon import sha256_bytes, sha256_json
from worldkit.errors import InvalidOverlay, UsageError
from worldkit.locate import overlay_dirs
from worldkit.overlay._paths import confined
from worldkit.overlay.models import Overlay
from worldkit.world.load import WorldPackage, load_world, resolve_world

OVERLAY_FILENAME = "overlay.yaml"
_Loader = StrictLoader


@contextmanager
def overlay_fields(model: Overlay) -> Iterator[None]:
    """A `UsageError` raised while the overlay's own projection (world, rev, date, seat) is materialized is
    the overlay's fault: an `InvalidOverlay` (exit 3) naming its file, not bad command-line usage."""
    try:
        yield
    except UsageError as error:
        raise InvalidOverlay(f"{error.message} (the overlay's world, rev, date or seat); fix the overlay",
                             file=model.source) from None  # fmt: skip


def overlay_search_path(world_root: Path | None = None) -> list[Path]:
    """Folders holding `<world>/` overlay folders (see `worldkit.locate`); with `world_root`, the
    `overlays/` beside that world folder comes right after $WORLDKIT_OVERLAYS."""
    return overlay_dirs(world_root)


def _overlays_in(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    found = [p for p in folder.glob("*.yaml") if p.is_file()]
    found += [p for p in folder.glob(f"*/{OVERLAY_FILENAME}") if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def find_overlays(world: str | Path) -> list[Path]:
    """Overlay files of a world given by name or path, from the first search folder that has any
    (for a world folder, the `overlays/<id>/` beside it comes first)."""
    world_id, world_root = str(world), None
    try:
        world_root = resolve_world(world)
    except UsageError:
        pass  # a name with no world folder on the path: its overlays may still be found by name
    else:
        world_id = load_world(world_root).id
    return find_world_overlays(world_id, world_root)


def find_world_overlays(world_id: str, world_root: Path | None) -> list[Path]:
    """Overlay files of the world `world_id` whose folder is `world_root` (None: by name only)."""
    for root in overlay_search_path(world_root):
        found = _overlays_in(root / world_id)
        if found:
            return found
    return []


def resolve_overlay(name_or_path: str | Path) -> Path:
    """An overlay file from a path (file, or folder with `overlay.yaml`) or an id (`id` or `world/id`)."""
    path = Path(name_or_path)
    if path.is_file():
        return path.resolve()
    if (path / OVERLAY_FILENAME).is_file():
        return (path / OVERLAY_FILENAME).resolve()
    text = str(name_or_path)
    world, _, task = text.rpartition("/")
    for root in overlay_search_path():
        folders = [root / world] if world else sorted(p for p in root.glob("*") if p.is_dir())
        for folder in folders:
            for candidate in (folder / f"{task}.yaml", folder / task / OVERLAY_FILENAME):
                if candidate.is_file():
                    return candidate.resolve()
    raise UsageError(
        f"no overlay {text!r}: not a file, not a folder with {OVERLAY_FILENAME}, and no id of that name under "
        f"{', '.join(str(p) for p in overlay_search_path())}. Pass the path to the overlay YAML."
    )


def _locate(loc: tuple[Any, ...], raw: Any) -> tuple[str | None, str]:
    entity: str | None = None
    node = raw
    parts: list[str] = []
    for part in loc:
        if isinstance(node, Mapping) and isinstance(node.get("id"), str):
            entity = node["id"]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            node = None
        parts.append(str(part))
    if isinstance(node, Mapping) and isinstance(node.get("id"), str):
        entity = node["id"]
    return entity, ".".join(parts)


def _explain(error: ValidationError, raw: Any, file: Path) -> InvalidOverlay:
    found = []
    for item in error.errors():
        entity, field = _locate(tuple(item["loc"]), raw)
        if item["type"] == "extra_forbidden":
            from worldkit._model import unknown_key_message

            message = unknown_key_message(Overlay, tuple(item["loc"]))
        elif item["type"] == "missing":
            message = "required field is missing; add it"
        else:
            message = f"{item['msg'].removeprefix('Value error, ')}; fix the value"
        found.append((entity, field, message))
    if len(found) == 1:
        entity, field, message = found[0]
        return InvalidOverlay(message, file=file, entity=entity, field=field or None)
    lines = [
        ", ".join(x for x in (f"entity {e}" if e else "", f"field {f}" if f else "") if x) + f": {m}"
        for e, f, m in found
    ]
    return InvalidOverlay(f"{len(found)} problems: " + " | ".join(lines), file=file)


def parse_overlay(raw: Any, file: Path | None = None) -> Overlay:
    """Validate raw YAML data into an `Overlay` (errors name `file` if given)."""
    where = file or Path("<overlay>")
    if not isinstance(raw, dict):
        raise InvalidOverlay("an overlay is a mapping (id, title, world, rev, date, seat, request, …)", file=where)
    try:
        overlay = Overlay.model_validate(raw)
    except ValidationError as error:
        raise _explain(error, raw, where) from None
    if file is not None:
        overlay._source = file.resolve()
    return overlay


_LOADED: dict[tuple[Path, bytes], Overlay] = {}
"""Overlays loaded in this process, by file and the SHA-256 of its bytes (an `Overlay` is frozen)."""


def load_overlay(path: str | Path) -> Overlay:
    """Load and validate an overlay from a YAML path, a folder holding `overlay.yaml`, or an id.

    A file whose bytes were loaded before in this process gives the same (immutable) `Overlay`."""
    file = resolve_overlay(path)
    data = file.read_bytes()
    key = (file.resolve(), hashlib.sha256(data).digest())
    found = _LOADED.get(key)
    if found is not None:
        return found
    try:
        stream = _Named(data.decode("utf-8"))
        stream.name = str(file)  # as an open file names itself in YAML's error marks
        raw = yaml.load(stream, Loader=_Loader)
    except yaml.YAMLError as error:
        raise InvalidOverlay(f"not valid YAML{problem_text(error)}. Fix the file.", file=file) from None
    except UnicodeDecodeError:
        raise InvalidOverlay("not UTF-8 text; save the file as UTF-8.", file=file) from None
    overlay = parse_overlay(raw, file)
    if len(_LOADED) >= 256:
        _LOADED.clear()
    _LOADED[key] = overlay
    return overlay


class _Named(io.StringIO):
    name = "<overlay>"


def overlay_world(overlay: Overlay) -> WorldPackage:
    """The overlay's world: a folder relative to the overlay file if there is one, else by name."""
    if overlay.source is not None:
        local = Path(overlay.source).parent / overlay.world
        if (local / "world.yaml").is_file():
            return load_world(local)
        if overlay.world.startswith((".", "/")):
            raise InvalidOverlay(
                f"world {overlay.world!r} is not a world folder (no world.yaml at {local}); "
                "give a world name or a path relative to the overlay file",
                file=overlay.source,
                field="world",
            )
    return load_world(overlay.world)


def _world_document_bytes(overlay: Overlay, name: str, doc_id: str) -> bytes:
    """A world verifier-only document rendered for a reference file (see `ReferenceFile.document`)."""
    from worldkit.render import Renderer
    from worldkit.timeline import as_of

    where = {"file": overlay.source, "entity": name, "field": "reference_files.document"}
    state = overlay_world(overlay).revision(overlay.rev)
    doc = state.documents.get(doc_id)
    if doc is None:
        hidden = sorted(k for k, d in state.documents.items() if d.verifier_only)
        raise InvalidOverlay(
            f"reference file {name!r}: world {state.world_id} revision {overlay.rev} has no document {doc_id!r}; "
            f"its verifier-only documents are: {', '.join(hidden) or '(none)'}",
            **where,
        )
    if not doc.verifier_only:
        raise InvalidOverlay(
            f"reference file {name!r}: document {doc_id} is not verifier_only, so seats may read it; cite it as "
            "evidence or a truth source instead, or mark it `verifier_only: true` in the world",
            **where,
        )
    date = max(overlay.date, doc.visible_from)
    if doc.visible_until is not None and doc.visible_until <= date:
        date = doc.visible_from
    return Renderer(as_of(state, date)).document(doc)


def reference_bytes(overlay: Overlay) -> dict[str, bytes]:
    """Reference file name → bytes (inline text as UTF-8, the file beside the overlay, or a world
    verifier-only document as the world renders it)."""
    found: dict[str, bytes] = {}
    for ref in overlay.reference_files:
        if ref.text is not None:
            found[ref.name] = ref.text.encode("utf-8")
            continue
        if ref.document is not None:
            found[ref.name] = _world_document_bytes(overlay, ref.name, ref.document)
            continue
        assert ref.path is not None
        if overlay.source is None:
            raise InvalidOverlay(
                f"reference file {ref.name!r} names path {ref.path!r}, but the overlay was not loaded from a file; "
                "load it with load_overlay(path) or give the file inline as `text`",
                entity=overlay.id,
                field="reference_files",
            )
        folder = Path(overlay.source).parent
        file = confined(folder, ref.path)
        if not file.is_file():
            raise InvalidOverlay(
                f"reference file {ref.name!r}: {ref.path} does not exist beside the overlay; add it or fix the path",
                file=overlay.source,
                entity=ref.name,
                field="reference_files",
            )
        found[ref.name] = file.read_bytes()
    return found


def overlay_digest(overlay: Overlay, references: dict[str, bytes] | None = None) -> str:
    """SHA-256 of the overlay's canonical content (independent of YAML layout, key order and
    comments) and of its reference files' bytes."""
    refs = reference_bytes(overlay) if references is None else references
    content = overlay.model_dump(mode="json")
    if not content.get("curation"):  # added after overlays were frozen: an overlay without it keeps its digest
        content.pop("curation", None)
    return sha256_json(
        {
            "overlay": content,
            "reference_files": {name: sha256_bytes(data) for name, data in sorted(refs.items())},
        }
    )
