"""Every task a user can run: the overlays found on worldkit's search path, shipped and local.

`list_tasks` walks `overlay_dirs()` (the order `resolve_overlay` searches: $WORLDKIT_OVERLAYS,
--worlds / $WORLDKIT_PATH, the current project, the shipped worlds), so a task listed is a task
`worldkit run --overlay WORLD/ID` resolves to the same file; an overlay shadowed by an earlier
folder's overlay of the same world and id is not listed twice. Each entry says where it was found
(`shipped` or `local`), its world, revision, date, seat, conditions and criteria counts, and the
inspect_ai task name under which `inspect eval` runs it. An overlay that does not load is listed
with its problem instead of hiding the rest. This module reads overlays only; it never stages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from worldkit.errors import WorldkitError
from worldkit.locate import overlay_dirs, shipped_root
from worldkit.overlay.load import _overlays_in

__all__ = ["TaskEntry", "inspect_name", "list_tasks", "shipped_task_ids"]


@dataclass(frozen=True)
class TaskEntry:
    """One task overlay as `worldkit tasks list` shows it."""

    world: str
    """The folder it is listed under (`overlays/<world>/`)."""
    id: str
    origin: str
    """`shipped` (comes with worldkit) or `local` (a folder on the search path)."""
    path: Path
    rev: str = ""
    date: str = ""
    seat: str = ""
    conditions: tuple[str, ...] = ()
    """`full` and one `curated:NAME` per curated packet."""
    deterministic: int = 0
    semantic: int = 0
    problem: str = ""
    """Why the overlay could not be loaded (then the fields above are empty)."""
    inspect: str = field(default="")
    """The inspect_ai task (`inspect eval NAME`); shipped tasks have their own, others run as `worldkit/task`."""

    def as_json(self) -> dict[str, object]:
        return {
            "world": self.world, "id": self.id, "origin": self.origin, "path": str(self.path), "rev": self.rev,
            "date": self.date, "seat": self.seat, "conditions": list(self.conditions),
            "criteria": {"deterministic": self.deterministic, "semantic": self.semantic},
            "inspect": self.inspect, "problem": self.problem or None,
        }  # fmt: skip


def inspect_name(task_id: str) -> str:
    """The inspect_ai registry name of a shipped task: `worldkit/<id with _ for ->`."""
    return "worldkit/" + task_id.replace("-", "_")


def _task_id(path: Path) -> str:
    return path.parent.name if path.name == "overlay.yaml" else path.stem


def shipped_task_ids() -> dict[str, str]:
    """Shipped task id → its world, from the shipped `overlays/` folders' names (no YAML is read)."""
    root = shipped_root()
    found: dict[str, str] = {}
    if root is None or not (root / "overlays").is_dir():
        return found
    for world in sorted(p for p in (root / "overlays").iterdir() if p.is_dir()):
        for path in _overlays_in(world):
            found.setdefault(_task_id(path), world.name)
    return found


def list_tasks(world: str | None = None) -> list[TaskEntry]:
    """Every overlay on the search path (of `world` only, if given), first found first, sorted by world and id."""
    from worldkit.overlay.load import load_overlay

    shipped = shipped_root()
    shipped_overlays = (shipped / "overlays").resolve() if shipped is not None else None
    entries: dict[tuple[str, str], TaskEntry] = {}
    for folder in overlay_dirs():
        if not folder.is_dir():
            continue
        origin = "shipped" if shipped_overlays is not None and folder.resolve() == shipped_overlays else "local"
        for world_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            if world is not None and world_dir.name != world:
                continue
            for path in _overlays_in(world_dir):
                key = (world_dir.name, _task_id(path))
                if key in entries:
                    continue
                name = inspect_name(key[1]) if origin == "shipped" else "worldkit/task"
                try:
                    overlay = load_overlay(path)
                except WorldkitError as error:
                    entries[key] = TaskEntry(key[0], key[1], origin, path, problem=error.message, inspect=name)
                    continue
                routes = [c.route for c in overlay.rubric]
                entries[key] = TaskEntry(
                    world=key[0], id=overlay.id, origin=origin, path=path, rev=overlay.rev,
                    date=overlay.date.isoformat(), seat=overlay.seat,
                    conditions=("full", *(f"curated:{name}" for name in sorted(overlay.curated))),
                    deterministic=routes.count("deterministic"), semantic=routes.count("semantic"), inspect=name,
                )  # fmt: skip
    return [entries[key] for key in sorted(entries)]
