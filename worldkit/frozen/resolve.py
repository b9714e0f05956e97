"""What a run folder or staged package names — world, overlay, seat, condition — resolved by id on
worldkit's own search path and checked by digest.

A folder names, worldkit resolves (DESIGN §9). A folder being graded, served or checked is
evidence, never configuration: it may name its world and overlay only by id. The overlay is found
by that id on the configured path (`worldkit.locate`: --worlds, $WORLDKIT_PATH,
$WORLDKIT_OVERLAYS / $WORLDKIT_WORLDS, the current project, the shipped worlds), its world is the
one that overlay names, and every digest the folder carries must equal the one recomputed from
what was found — and the frozen lock's, where the overlay is frozen. A mismatch is refused with
one line naming what differs.

This module must never open a path a checked folder supplies, nor use a world or overlay found
inside the checked folder itself: so no code the folder brings (a world's `generator.py`) runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldkit.errors import CheckFailed, WorldkitError
from worldkit.locate import overlay_dirs, world_dirs

__all__ = ["ResolvedTask", "find_overlay", "find_world", "plain_id", "resolve_or_none", "resolve_task"]

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
OVERLAY_FILENAME = "overlay.yaml"


def plain_id(value: object, what: str, where: Path | str) -> str:
    """`value` if it is an id (letters, digits, `_ . -`; no separator, no `..`), else refused."""
    text = value if isinstance(value, str) else ""
    if not _ID.fullmatch(text) or ".." in text or text.endswith("."):
        raise CheckFailed(
            f"{where}: {what} {value!r} is not an id — a folder names its {what} by id only, never by path; "
            "stage the run afresh with worldkit"
        )
    return text


def _inside(path: Path, folder: Path | None) -> bool:
    if folder is None:
        return False
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def _path_text() -> str:
    return ", ".join(str(p) for p in overlay_dirs()) or "(nothing configured)"


def _declared_id(spec: Path) -> str | None:
    """The `id:` a world.yaml declares (read as YAML data only; nothing of the world is run)."""
    import yaml

    try:
        body = yaml.safe_load(spec.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return body.get("id") if isinstance(body, dict) and isinstance(body.get("id"), str) else None


def find_world(world_id: str, where: Path | str, *, inside: Path | None = None) -> Path:
    """The folder of world `world_id` on the configured world path (never a path the folder gives)."""
    world_id = plain_id(world_id, "world", where)
    for folder in world_dirs():
        candidate = folder / world_id
        if (candidate / "world.yaml").is_file() and not _inside(candidate, inside):
            return candidate.resolve()
    for folder in world_dirs():  # a world folder named otherwise than its id (`id:` in its world.yaml)
        for spec in sorted(folder.glob("*/world.yaml")) if folder.is_dir() else []:
            if _declared_id(spec) == world_id and not _inside(spec.parent, inside):
                return spec.parent.resolve()
    raise CheckFailed(
        f"{where} names world {world_id}, which is not on the configured path "
        f"({', '.join(str(p) for p in world_dirs())}); add the folder holding it with --worlds DIR or $WORLDKIT_PATH"
    )


def _overlay_files(world_id: str, overlay_id: str, inside: Path | None) -> list[Path]:
    """Overlay files named `overlay_id` on the path: under `<world_id>/` first, then any other folder."""
    found: list[Path] = []
    for root in overlay_dirs():
        if not root.is_dir():
            continue
        folders = [root / world_id] + sorted(p for p in root.iterdir() if p.is_dir() and p.name != world_id)
        for folder in folders:
            for candidate in (folder / f"{overlay_id}.yaml", folder / overlay_id / OVERLAY_FILENAME):
                if candidate.is_file() and not _inside(candidate, inside):
                    found.append(candidate.resolve())
    return found


def find_overlay(world_id: str, overlay_id: str, where: Path | str, *, inside: Path | None = None) -> Path:
    """The file of overlay `overlay_id` (of world `world_id` first) on the configured path."""
    found = _overlay_files(plain_id(world_id, "world", where), plain_id(overlay_id, "overlay", where), inside)
    if not found:
        raise CheckFailed(f"{where} names overlay {world_id}/{overlay_id}, which is not on the configured path "
                          f"({_path_text()}); add the folder holding it with --worlds DIR or $WORLDKIT_PATH")  # fmt: skip
    return found[0]


@dataclass(frozen=True)
class ResolvedTask:
    """The task a folder names, as worldkit found it on its own path."""

    overlay: Any
    """The `Overlay`, loaded from the configured path."""
    world: Any
    """Its `WorldPackage` (loaded through the overlay, so from the configured path too)."""
    lock: Any
    """The frozen `OverlayLock`, or None where the overlay is not frozen."""

    @property
    def source(self) -> Path:
        return Path(self.overlay.source)

    def describe(self) -> str:
        """One line saying what was resolved and which generator (if any) it ran."""
        spec = getattr(self.world, "spec", None)
        generator = getattr(spec, "generator", None) if spec is not None else None
        ran = f"; generator {Path(self.world.root) / generator.module}" if generator is not None else ""
        frozen = "frozen" if self.lock is not None else "not frozen"
        return f"overlay {self.overlay.id} from {self.source} ({frozen}), world {self.world.id} from {self.world.root}{ran}"


def _lock(world: Any, overlay_id: str) -> Any:
    from worldkit.frozen.index import default_manifest_dir
    from worldkit.overlay.author import read_lock

    path = default_manifest_dir(world) / "overlays" / f"{overlay_id}.json"
    if not path.is_file():
        return None
    try:
        return read_lock(path)
    except ValueError as error:
        raise CheckFailed(f"frozen overlay lock {path} is unreadable ({str(error).splitlines()[0]}); re-freeze it "
                          "(`worldkit overlay freeze`)") from None  # fmt: skip


def resolve_task(
    where: Path | str,
    *,
    world: object,
    overlay: object,
    overlay_sha256: object,
    seat: object = None,
    condition: object = None,
    inside: Path | None = None,
) -> ResolvedTask:
    """Find the overlay `world`/`overlay` names on the configured path and check the folder's
    claims against it: the overlay digest (and the frozen lock's), the seat and the condition.

    `where`: what made the claims (for messages); `inside`: the folder being checked — nothing
    found under it is used. Raises `CheckFailed` (exit 1) with one line naming what differs."""
    from worldkit.overlay import load_overlay, overlay_digest
    from worldkit.overlay.load import overlay_world

    world_id = plain_id(world, "world", where)
    overlay_id = plain_id(overlay, "overlay", where)
    candidates = _overlay_files(world_id, overlay_id, inside)
    if not candidates:
        raise CheckFailed(
            f"{where} names overlay {world_id}/{overlay_id}, which is not on the configured path ({_path_text()}); "
            "add the folder holding it with --worlds DIR or $WORLDKIT_PATH (a path the folder names is never used)"
        )
    resolved: ResolvedTask | None = None
    others: list[str] = []
    for path in candidates:
        model = load_overlay(path)
        package = overlay_world(model)
        if model.id == overlay_id and package.id == world_id:
            resolved = ResolvedTask(overlay=model, world=package, lock=_lock(package, overlay_id))
            break
        others.append(f"{path} (world {package.id})")
    if resolved is None:
        raise CheckFailed(f"{where} names overlay {overlay_id} of world {world_id}, but the overlays of that id on the "
                          f"configured path are of other worlds: {', '.join(others)}")  # fmt: skip
    actual = overlay_digest(resolved.overlay)
    lock = resolved.lock
    if lock is not None and lock.overlay_sha256 != actual:
        raise CheckFailed(
            f"overlay {world_id}/{overlay_id} at {resolved.source} digests to {actual[:12]}…, but its frozen lock says "
            f"{lock.overlay_sha256[:12]}…; restore the overlay or re-freeze it (`worldkit overlay freeze`)"
        )
    named = overlay_sha256 if isinstance(overlay_sha256, str) else ""
    if named != actual:
        raise CheckFailed(
            f"{where} names overlay {world_id}/{overlay_id} with digest {named[:12] or '(none)'}…, but the overlay "
            f"on the configured path ({resolved.source}) digests to {actual[:12]}…; the folder was altered or staged "
            "from another version — put that version on --worlds DIR / $WORLDKIT_PATH"
        )
    if seat is not None and seat != resolved.overlay.seat:
        raise CheckFailed(f"{where} names seat {seat!r}, but overlay {overlay_id} is for seat {resolved.overlay.seat}; "
                          "the folder was altered — stage it afresh")  # fmt: skip
    if condition is not None:
        wanted = set(resolved.overlay.conditions)
        if condition not in wanted:
            raise CheckFailed(f"{where} names condition {condition!r}, which overlay {overlay_id} does not have "
                              f"({', '.join(sorted(wanted))})")  # fmt: skip
    return resolved


def resolve_or_none(where: Path | str, **claims: Any) -> ResolvedTask | None:
    """`resolve_task`, or None when the folder's claims cannot be resolved (callers that only
    need the overlay to re-derive, and refuse on the frozen check anyway)."""
    try:
        return resolve_task(where, **claims)
    except WorldkitError:
        return None
