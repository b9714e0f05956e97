"""Re-pinning after a world edit in one step: freeze the world, re-pin its overlays, freeze them.

`worldkit freeze --world W --overlays` calls `refreeze`. It freezes every revision and projection
(as `freeze` does), sets each overlay's `pinned_fingerprint` to its projection's new fingerprint,
checks each overlay in full (the overlay's own checks, the reference solution's evidence
access and the rubric's mutation campaign) and writes its lock, then reports what changed
against what was frozen before: revision digests, projection fingerprints (added, changed,
removed), overlay pins and overlay locks.

An overlay that fails its check keeps its old lock (so `verify` reports it as stale) and is listed
with its problems; nothing is repaired. Re-pinning is not reviewing: the report names every
overlay whose projection changed, so the author can read what changed under it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from worldkit.errors import InvalidWorld, UsageError, WorldkitError
from worldkit.frozen.index import default_manifest_dir, read_index
from worldkit.verify.frozen import freeze_world
from worldkit.world.load import WorldPackage, load_world


@dataclass(frozen=True)
class Change:
    """One thing that differs from what was frozen before."""

    kind: str
    """`revision`, `projection`, `pin` or `lock`."""
    name: str
    """The revision, `rev date seat`, or overlay id."""
    before: str | None
    """Digest or fingerprint before (None: new)."""
    after: str | None
    """After (None: removed)."""

    def line(self) -> str:
        before = self.before[:12] if self.before else "(new)"
        after = self.after[:12] if self.after else "(removed)"
        return f"{self.kind:<10} {self.name:<32} {before} → {after}"


@dataclass
class RefreezeResult:
    world: str
    folder: Path
    overlays: list[str] = field(default_factory=list)
    """Overlay ids frozen (their locks written)."""
    changes: list[Change] = field(default_factory=list)
    failed: dict[str, list[str]] = field(default_factory=dict)
    """Overlay id (or file) → the problems that kept its lock from being written."""

    @property
    def ok(self) -> bool:
        return not self.failed

    def as_json(self) -> dict:
        return {
            "world": self.world, "manifests": str(self.folder), "overlays": self.overlays, "ok": self.ok,
            "changes": [{"kind": c.kind, "name": c.name, "before": c.before, "after": c.after} for c in self.changes],
            "failed": self.failed,
        }  # fmt: skip


def _frozen_before(folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    try:
        index = read_index(folder)
    except InvalidWorld:
        return {}, {}
    revisions = {r.name: r.digest for r in index.revisions}
    projections = {" ".join(p.key): p.fingerprint for p in index.projections}
    return revisions, projections


def _diff(kind: str, before: dict[str, str], after: dict[str, str]) -> list[Change]:
    return [Change(kind, name, before.get(name), after.get(name))
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]  # fmt: skip


def refreeze(
    world: str | Path | WorldPackage,
    dates: list[str | dt.date] | None = None,
    *,
    manifests: Path | None = None,
    overlays: Path | None = None,
) -> RefreezeResult:
    """Freeze the world, then re-pin and freeze each of its overlays; report what changed."""
    from worldkit.grade.reference_access import check_overlay_fully
    from worldkit.mutate.gate import freeze_overlay_gated
    from worldkit.overlay.author import lock_path, pin_overlay, read_lock
    from worldkit.overlay.load import load_overlay, overlay_world
    from worldkit.verify.tasks import bound_root, overlay_files, overlay_folder

    package = world if isinstance(world, WorldPackage) else load_world(world)
    folder = Path(manifests) if manifests is not None else default_manifest_dir(package)
    old_revisions, old_projections = _frozen_before(folder)
    frozen = freeze_world(package, dates, manifests=folder)
    result = RefreezeResult(world=package.id, folder=folder)
    result.changes += _diff("revision", old_revisions, {r.name: r.digest for r in frozen.index.revisions})
    new_projections = {" ".join(p.key): p.fingerprint for p in frozen.index.projections}
    result.changes += _diff("projection", old_projections, new_projections)
    source = overlay_folder(package.id, overlays, package.root)
    for path in overlay_files(source) if source is not None else []:
        try:
            with bound_root(package.root):  # an overlay naming its world by id means this very world
                model = load_overlay(path)
                named = overlay_world(model).root
                if Path(named).resolve() != Path(package.root).resolve():
                    raise UsageError(f"overlay {model.id} names world {model.world!r}, which is {named}, not the world "
                                     f"being frozen ({package.root}); name the world by id or by its path")
                lock = lock_path(folder.parent, package.id, model.id)
                old_lock = read_lock(lock).overlay_sha256 if lock.is_file() else None
                pinned = pin_overlay(path)
                if pinned.changed:
                    result.changes.append(Change("pin", model.id, pinned.previous, pinned.fingerprint))
                written = freeze_overlay_gated(path, folder.parent, check=check_overlay_fully)
        except WorldkitError as error:
            result.failed[path.parent.name if path.name == "overlay.yaml" else path.stem] = error.message.splitlines()
            continue
        result.overlays.append(model.id)
        if written.lock.overlay_sha256 != old_lock:
            result.changes.append(Change("lock", model.id, old_lock, written.lock.overlay_sha256))
    return result
