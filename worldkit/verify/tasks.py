"""Stage every task overlay of the world (every condition) into scratch space for the task checks.

Staging is the real `apply_overlay`, so what verify inspects is what a run would be handed. An
overlay names its world by name; when the world under verification is a scratch copy, the copy
is put first on the world search path while staging so the overlay binds to it, not to the
original (the overlay itself, and so its digests, stay untouched).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldkit.errors import WorldkitError
from worldkit.materialize.manifest import Manifest, read_manifest
from worldkit.verify.result import ComponentMissing
from worldkit.verify.scratch import copy_tree

if TYPE_CHECKING:  # the context stages tasks through this module; only its type is needed here
    from worldkit.verify.context import VerifyContext

OVERLAY_FILENAME = "overlay.yaml"


@dataclass
class StagedTask:
    """One overlay applied under one condition (or the reason it could not be applied)."""

    overlay: Any
    """The `worldkit.overlay.models.Overlay`."""
    source: Path
    """The overlay file."""
    condition: str
    """`full` or `curated:<name>`."""
    out: Path | None = None
    """The applied package (`candidate/`, `verifier/`, `package.json`), None if staging failed."""
    error: str | None = None
    """Why staging failed."""
    summary: dict[str, Any] = field(default_factory=dict)
    """`package.json` as written by apply."""

    @property
    def label(self) -> str:
        return f"{self.overlay.id}[{self.condition}]"

    @property
    def curated(self) -> bool:
        return self.condition != "full"

    @property
    def rev(self) -> str:
        return str(self.overlay.rev or "")

    @property
    def date(self) -> str:
        return self.overlay.date.isoformat() if self.overlay.date else ""

    @property
    def seat(self) -> str:
        return str(self.overlay.seat or "")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rev, self.date, self.seat)

    @property
    def candidate(self) -> Path:
        assert self.out is not None
        return self.out / "candidate"

    @property
    def verifier(self) -> Path:
        assert self.out is not None
        return self.out / "verifier"

    @property
    def projection_root(self) -> Path:
        return self.candidate / "projection"

    @property
    def projection_manifest(self) -> Manifest | None:
        if self.out is None:
            return None
        try:
            return read_manifest(self.projection_root)
        except WorldkitError:
            return None


def overlay_files(folder: Path) -> list[Path]:
    """`<id>.yaml` and `<id>/overlay.yaml` under a world's overlay folder, in path order."""
    if not folder.is_dir():
        return []
    found = [p for p in folder.glob("*.yaml") if p.is_file()]
    found += [p for p in folder.glob(f"*/{OVERLAY_FILENAME}") if p.is_file()]
    return sorted(found, key=lambda p: p.relative_to(folder).as_posix())


def overlay_folder(world_id: str, given: Path | None = None, world_root: Path | None = None) -> Path | None:
    """The world's overlay folder: the one given, else the first on the overlay search path (for a
    world folder `world_root`, the `overlays/<id>/` beside it first)."""
    if given is not None:
        return given
    try:
        from worldkit.overlay.load import overlay_search_path
    except ImportError:
        return None
    for root in overlay_search_path(world_root):
        if overlay_files(root / world_id):
            return root / world_id
    return None


@contextmanager
def bound_world(ctx: VerifyContext) -> Iterator[None]:
    """While staging, names resolve to the world under verification (which may be a scratch copy)."""
    with bound_root(ctx.package.root):
        yield


@contextmanager
def bound_root(world_root: Path) -> Iterator[None]:
    """While the block runs, a world named by id resolves to the world folder `world_root` first."""
    previous = os.environ.get("WORLDKIT_WORLDS")
    parts = [str(Path(world_root).parent)] + ([previous] if previous else [])
    os.environ["WORLDKIT_WORLDS"] = os.pathsep.join(parts)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("WORLDKIT_WORLDS", None)
        else:
            os.environ["WORLDKIT_WORLDS"] = previous


def stage_tasks(ctx: VerifyContext) -> list[StagedTask]:
    """Apply every overlay of the world under every condition (errors are kept, not raised)."""
    try:
        from worldkit.overlay.apply import apply_overlay
        from worldkit.overlay.load import load_overlay
    except ImportError as error:
        raise ComponentMissing(f"task overlays are not installed ({error.name} missing)") from None
    folder = overlay_folder(ctx.package.id, ctx.overlays, ctx.package.root)
    files = overlay_files(folder) if folder else []
    if not files:
        raise ComponentMissing(f"world {ctx.package.id} has no task overlays (looked in overlays/{ctx.package.id}/)")
    staged: list[StagedTask] = []
    base = ctx.work / "staged"
    with bound_world(ctx):
        for number, path in enumerate(files):
            try:
                model = load_overlay(path)
            except WorldkitError as error:
                staged.append(StagedTask(overlay=_Unloadable(path), source=path, condition="full", error=error.message))
                continue
            for condition in model.conditions:
                task = StagedTask(overlay=model, source=path, condition=condition)
                out = base / f"{number:03d}-{model.id}-{condition.replace(':', '-')}"
                reused = (ctx.staged_from or {}).get(task.label)
                try:
                    if reused is not None:
                        task.out = (ctx.staged_copy or copy_tree)(reused, out)
                        task.summary = json.loads((out / "package.json").read_bytes())
                    else:
                        result = apply_overlay(model, out, condition, allow_stale=True, check=False,
                                               source=_rebuilt(ctx, model))
                        task.out = result.out
                        task.summary = result.summary_model.model_dump(mode="json")
                except WorldkitError as error:
                    task.error = error.message
                staged.append(task)
    if ctx.tamper_staged is not None:
        ctx.tamper_staged([t for t in staged if t.out is not None])
    return staged


def _rebuilt(ctx: VerifyContext, model: Any) -> Path | None:
    """The context's clean rebuild of the overlay's view, if one was made (curated packets copy from it)."""
    built = ctx._builds.get((model.rev, str(model.date), model.seat))
    return built.root if built is not None else None


class _Unloadable:
    """Stands in for an overlay that failed to load, so the failure is reported, not lost."""

    rev = date = seat = None
    conditions = ("full",)

    def __init__(self, path: Path) -> None:
        self.path = path
        self.curated: dict[str, Any] = {}
        self.id = path.parent.name if path.name == OVERLAY_FILENAME else path.stem
