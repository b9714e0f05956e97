"""Freezing: what `worldkit freeze` writes under `manifests/<world>/` (read by `worldkit.frozen.index`).

    manifests/<world>/revisions.json                              the index (root of trust)
    manifests/<world>/projections/<rev>/<date>/<seat>.json        one projection manifest each

The index lists every revision with its canonical digest and every frozen projection with its
fingerprint, so a deleted or swapped projection manifest is noticed. Bytes are deterministic:
sorted keys, sorted entries, no timestamps. This module writes only inside `projections/` and
`revisions.json`; other files under `manifests/<world>/` (overlay freezes) belong to others.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from worldkit.canon import pretty_json
from worldkit.errors import InvalidWorld, UsageError
from worldkit.frozen.index import (
    INDEX_NAME,
    PROJECTIONS_DIR,
    FrozenIndex,
    FrozenProjection,
    FrozenRevision,
    default_manifest_dir,
    read_index,
)
from worldkit.materialize.manifest import Manifest, manifest_bytes
from worldkit.materialize.write import parse_date
from worldkit.world.load import WorldPackage, load_world

def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class FreezeResult:
    folder: Path
    index: FrozenIndex
    written: list[str]
    removed: list[str]

    def summary(self) -> dict:
        return {
            "world": self.index.world,
            "manifests": str(self.folder),
            "revisions": [r.model_dump() for r in self.index.revisions],
            "projections": [p.model_dump() for p in self.index.projections],
            "written": self.written,
            "removed": self.removed,
        }


def freeze_world(
    world: str | Path | WorldPackage,
    dates: list[str | dt.date] | None = None,
    *,
    manifests: Path | None = None,
    scratch: Path | None = None,
) -> FreezeResult:
    """Freeze every revision's digest and every (rev, date, seat) projection manifest.

    Dates: the ones given, else the dates frozen before, else the world's `default_date`.
    Projection manifests of dates no longer frozen are removed (nothing else is touched).
    """
    from worldkit.verify.build import build_projection  # local: build imports this module's siblings
    from worldkit.verify.scratch import scratch_dir

    package = world if isinstance(world, WorldPackage) else load_world(world)
    folder = Path(manifests) if manifests is not None else default_manifest_dir(package)
    days = sorted({parse_date(d).isoformat() for d in dates or []})
    if not days:
        try:
            days = read_index(folder).dates
        except InvalidWorld:
            days = []
    if not days and package.spec.default_date is not None:
        days = [package.spec.default_date.isoformat()]
    if not days:
        raise UsageError(f"world {package.id} has no default_date; pass --date YYYY-MM-DD")
    revisions = [
        FrozenRevision(name=name, parent=package.revision_spec(name).parent, digest=package.revision(name).digest)
        for name in package.revision_names
    ]
    projections: list[FrozenProjection] = []
    outputs: dict[str, bytes] = {}
    with scratch_dir(scratch) as work:
        for rev in package.revision_names:
            state = package.revision(rev)
            for day in days:
                for seat in sorted(state.seats):
                    built = build_projection(package, rev, day, seat, work)
                    manifest: Manifest = built.manifest
                    frozen = FrozenProjection(
                        rev=rev, date=day, seat=seat, fingerprint=manifest.fingerprint, files=len(manifest.files)
                    )
                    projections.append(frozen)
                    outputs[frozen.relpath] = manifest_bytes(manifest)
                    built.discard()
    projections.sort(key=lambda p: p.key)
    index = FrozenIndex(world=package.id, revisions=revisions, projections=projections)
    stale = sorted(
        p.relative_to(folder).as_posix()
        for p in (folder / PROJECTIONS_DIR).rglob("*.json")
        if p.relative_to(folder).as_posix() not in outputs
    ) if (folder / PROJECTIONS_DIR).is_dir() else []
    for rel, data in sorted(outputs.items()):
        _write_atomic(folder / rel, data)
    for rel in stale:
        (folder / rel).unlink()
    _prune_empty(folder / PROJECTIONS_DIR)
    _write_atomic(folder / INDEX_NAME, pretty_json(index.model_dump(mode="json")).encode("utf-8"))
    return FreezeResult(folder=folder, index=index, written=[INDEX_NAME, *sorted(outputs)], removed=stale)


def _prune_empty(root: Path) -> None:
    if not root.is_dir():
        return
    for path in sorted((p for p in root.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        if not any(path.iterdir()):
            shutil.rmtree(path)
