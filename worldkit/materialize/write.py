"""Write a projection to disk atomically and digest it.

The tree is built in a hidden sibling temp directory and renamed into place, so an interrupted
run never leaves a partial DIR (stale temp dirs of dead processes are swept on the next run).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import jinja2

from worldkit import __version__
from worldkit.errors import OutputExists, UsageError
from worldkit.materialize.manifest import Entry, Environment, Inputs, Manifest, write_manifest
from worldkit.materialize.project import Projection, plan_projection
from worldkit.world.load import WorldPackage, load_world


def parse_date(value: str | dt.date) -> dt.date:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"malformed date {value!r}; use YYYY-MM-DD, e.g. 2026-03-02") from None


@dataclass(frozen=True)
class ProjectionResult:
    out: Path
    manifest: Manifest

    @property
    def fingerprint(self) -> str:
        return self.manifest.fingerprint

    def summary(self) -> dict:
        inputs = self.manifest.inputs
        surfaces: dict[str, int] = {}
        for entry in self.manifest.files:
            surfaces[entry.surface] = surfaces.get(entry.surface, 0) + 1
        return {
            "fingerprint": self.manifest.fingerprint,
            "files": len(self.manifest.files),
            "surfaces": dict(sorted(surfaces.items())),
            "revision_digest": inputs.revision_digest,
            "tool_bundle_sha256": self.manifest.tool_bundle_sha256,
            "world": inputs.world,
            "rev": inputs.rev,
            "date": inputs.date,
            "seat": inputs.seat,
            "out": str(self.out),
        }


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale(out: Path) -> None:
    for stale in out.parent.glob(f".{out.name}.tmp-*"):
        try:
            pid = int(stale.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if not _pid_alive(pid):
            shutil.rmtree(stale, ignore_errors=True)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def _write_new(path: str, data: bytes) -> None:
    fd = os.open(path, _CREATE, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def write_projection(projection: Projection, tmp: Path) -> Manifest:
    """Render every planned file into `tmp` and return the manifest (also written there)."""
    entries: list[Entry] = []
    made: set[str] = set()
    root = str(tmp)
    bundle_sha = projection.bundle()["sha256"]
    for planned in projection.files():
        data = planned.produce()
        parent = planned.path.rpartition("/")[0]
        if parent not in made:
            os.makedirs(os.path.join(root, parent), exist_ok=True)
            made.add(parent)
        _write_new(os.path.join(root, planned.path), data)
        entries.append(
            Entry.model_construct(
                path=planned.path,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
                surface=planned.surface,
                source=planned.source,
            )
        )
    state = projection.state
    inputs = Inputs(
        world=state.world_id,
        rev=state.revision,
        revision_digest=state.digest,
        date=projection.date.isoformat(),
        seat=projection.seat.id,
        person=projection.seat.person,
    )
    environment = Environment(
        worldkit=__version__, python=platform.python_version(), jinja2=jinja2.__version__, templates=state.template_digests
    )
    manifest = Manifest(
        inputs=inputs,
        environment=environment,
        tool_bundle_sha256=bundle_sha,
        files=entries,
        fingerprint=Manifest.compute_fingerprint(inputs, entries, bundle_sha),
    )
    write_manifest(tmp, manifest)
    return manifest


def materialize(
    world: str | Path | WorldPackage,
    rev: str,
    date: str | dt.date,
    seat: str,
    out: str | Path,
    *,
    force: bool = False,
) -> ProjectionResult:
    """Materialize (world, rev, date, seat) into `out`; a pure function of its inputs."""
    package = world if isinstance(world, WorldPackage) else load_world(world)
    day = parse_date(date)
    state = package.revision(rev)
    projection = plan_projection(state, day, seat)
    out = Path(out).absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise OutputExists(f"output directory {out} exists and is not empty; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    _sweep_stale(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        manifest = write_projection(projection, tmp)
        if out.exists():
            trash = out.parent / f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            os.rename(out, trash)
            os.rename(tmp, out)
            shutil.rmtree(trash, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ProjectionResult(out=out, manifest=manifest)
