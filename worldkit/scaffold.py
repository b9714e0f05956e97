"""`worldkit world new`: write a runnable starter world and its one task overlay.

The templates are package data under `worldkit/world/scaffold/` (`world/…` becomes
`<out>/worlds/<name>/…`, `overlay/…` becomes `<out>/overlays/<name>/…`). The overlay's
`pinned_fingerprint` is computed from the world just written, and the overlay is checked before
`new_world` returns: a scaffold that would not verify at once is a bug, reported, never written
half-way (everything is staged in a temporary folder and moved into place at the end).

Sits above the grading layer: it uses `worldkit.materialize` (the fingerprint) and
`worldkit.grade.reference_access` (the overlay check, with the reference solution's evidence access).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from worldkit.errors import OutputExists, UsageError
from worldkit.materialize import materialize, parse_date
from worldkit.world.load import load_world

TEMPLATE_SUFFIX = ".tmpl"
"""Scaffold template files end in this; the suffix is dropped when written."""

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,59}$")
TASK_ID = "first-task"
"""The id of the scaffold's task overlay."""


@dataclass(frozen=True)
class NewWorld:
    """What `new_world` wrote."""

    name: str
    world: Path
    """`<out>/worlds/<name>/`."""
    overlays: Path
    """`<out>/overlays/<name>/`."""
    manifests: Path
    """`<out>/manifests/` (where `freeze` and `overlay freeze` write; not written by `new_world`)."""
    files: list[Path] = field(default_factory=list)
    fingerprint: str = ""
    """The task seat's projection fingerprint the overlay is pinned to."""

    @property
    def overlay(self) -> Path:
        return self.overlays / f"{TASK_ID}.yaml"

    def next_steps(self) -> list[str]:
        """The commands that freeze and verify the new world, in order."""
        return [
            f"worldkit freeze --world {self.world} --overlays",
            f"worldkit verify --world {self.world} --overlays {self.overlays}",
            f"worldkit run --overlay {self.overlay} --agent oracle",
        ]


def _templates() -> Traversable:
    return resources.files("worldkit.world").joinpath("scaffold")


def _walk(node: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            found.extend(_walk(child, rel + "/"))
        elif child.name.endswith(TEMPLATE_SUFFIX):
            found.append((rel.removesuffix(TEMPLATE_SUFFIX), child))
    return found


def new_world(name: str, out: str | Path = ".", *, force: bool = False) -> NewWorld:
    """Write `<out>/worlds/<name>/` and `<out>/overlays/<name>/first-task.yaml`; return what was written.

    Refuses a bad name (usage error) and an existing world or overlay folder unless `force`.
    """
    if not _NAME.match(name):
        raise UsageError(
            f"world name {name!r} is not usable; use lower-case letters, digits and `_`, starting with a letter "
            "(e.g. `my_world`)"
        )
    root = Path(out)
    world_dir, overlay_dir = root / "worlds" / name, root / "overlays" / name
    for target in (world_dir, overlay_dir):
        if target.exists() and any(target.iterdir()) and not force:
            raise OutputExists(f"{target} exists and is not empty; pass --force to replace it")
    overlay_world = Path(os.path.relpath(world_dir.resolve(), overlay_dir.resolve())).as_posix()
    with tempfile.TemporaryDirectory(prefix="worldkit-world-new-") as scratch:
        stage = Path(scratch)
        staged_world, staged_overlays = stage / "worlds" / name, stage / "overlays" / name
        written: list[tuple[Path, Path]] = []
        for rel, template in _walk(_templates()):
            kind, _, inner = rel.partition("/")
            if kind not in ("world", "overlay"):
                continue
            base, final = (staged_world, world_dir) if kind == "world" else (staged_overlays, overlay_dir)
            text = template.read_text(encoding="utf-8")
            text = (
                text.replace("__NAME__", name)
                .replace("__WORLD_REF__", world_dir.as_posix())
                .replace("__OVERLAY_WORLD__", overlay_world)
                .replace("__OVERLAY_PATH__", (overlay_dir / f"{TASK_ID}.yaml").as_posix())
            )
            (base / inner).parent.mkdir(parents=True, exist_ok=True)
            (base / inner).write_text(text, encoding="utf-8")
            written.append((base / inner, final / inner))
        package = load_world(staged_world)
        overlay_file = staged_overlays / f"{TASK_ID}.yaml"
        from worldkit.overlay.load import load_overlay

        draft = overlay_file.read_text(encoding="utf-8")
        spec = load_overlay_spec(draft)
        fingerprint = materialize(package, spec["rev"], parse_date(spec["date"]), spec["seat"], stage / "projection").fingerprint
        overlay_file.write_text(draft.replace("__FINGERPRINT__", fingerprint), encoding="utf-8")
        # The staged overlay names the world by a path relative to its final place; check it there.
        for target in (world_dir, overlay_dir):
            if target.exists():
                shutil.rmtree(target)
        for source, final in written:
            final.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, final)
    from worldkit.grade.reference_access import check_overlay_fully

    report = check_overlay_fully(load_overlay(overlay_dir / f"{TASK_ID}.yaml"))
    if not report.ok:  # pragma: no cover - the shipped templates are tested to pass
        lines = "\n".join("  " + p.line() for p in report.errors)
        raise UsageError(f"the scaffold's overlay does not check (a worldkit bug; please report):\n{lines}")
    return NewWorld(
        name=name, world=world_dir, overlays=overlay_dir, manifests=root / "manifests",
        files=[final for _, final in written], fingerprint=fingerprint,
    )  # fmt: skip


def load_overlay_spec(text: str) -> dict[str, str]:
    """The (rev, date, seat) of a scaffold overlay draft (before its fingerprint is filled in)."""
    import yaml

    raw = yaml.safe_load(text)
    return {"rev": str(raw["rev"]), "date": str(raw["date"]), "seat": str(raw["seat"])}
