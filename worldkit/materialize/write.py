"""Write a projection to disk atomically and digest it.

The tree is built in a hidden sibling temp directory and renamed into place, so an interrupted
run never leaves a partial DIR (stale temp dirs of dead processes are swept on the next run).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import multiprocessing
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

import jinja2

from worldkit import __version__
from worldkit._fs import atomic_directory
from worldkit.errors import UsageError
from worldkit.materialize.manifest import MANIFEST_NAME, Environment, Inputs, Manifest, Row, assemble
from worldkit.materialize.project import PlannedFile, Projection, plan_projection, stamp, stamp_seconds
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


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


_UTIME_FD = os.utime in os.supports_fd


def _write_new(path: str, data: bytes, seconds: int) -> None:
    """Create `path` with `data` and modification time `seconds`: open, write, utime on the fd, close."""
    fd = os.open(path, _CREATE, 0o644)
    try:
        written = os.write(fd, data)
        if written < len(data):
            view = memoryview(data)[written:]
            while view:
                view = view[os.write(fd, view) :]
        if _UTIME_FD:
            os.utime(fd, (seconds, seconds))
    finally:
        os.close(fd)
    if not _UTIME_FD:
        os.utime(path, (seconds, seconds))


_Row = Row
_PARALLEL_MIN_FILES = 4000
# Set just before forking workers; a forked worker reads its share of the plan from here.
_FORK_PLAN: list[PlannedFile] = []


def _write_rows(root: str, planned: list[PlannedFile]) -> list[_Row]:
    rows: list[_Row] = []
    made: set[str] = set()
    for item in planned:
        data, mtime = item.render()
        parent = item.path.rpartition("/")[0]
        if parent not in made:
            os.makedirs(os.path.join(root, parent), exist_ok=True)
            made.add(parent)
        _write_new(os.path.join(root, item.path), data, stamp_seconds(mtime))
        rows.append((item.path, hashlib.sha256(data).hexdigest(), len(data), item.surface, item.source, mtime))
    return rows


def _die_with_parent() -> None:
    """A worker must not outlive a killed materialize (it would keep writing into the temp dir)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(1)


def _write_share(job: tuple[str, int, int]) -> list[_Row]:
    """One worker's share: a contiguous run of the plan, so workers seldom create files in the same
    directory at once (ext4 serializes that) and their rows come back in path order."""
    root, start, stop = job
    return _write_rows(root, _FORK_PLAN[start:stop])


def _jobs(n_files: int) -> int:
    """Worker processes for rendering: the output is identical whatever this returns."""
    wanted = os.environ.get("WORLDKIT_JOBS")
    if wanted:
        return max(1, int(wanted))
    if n_files < _PARALLEL_MIN_FILES or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def write_projection(projection: Projection, tmp: Path) -> Manifest:
    """Render every planned file into `tmp` and return the manifest (also written there).

    Large projections are rendered by forked workers, each taking a contiguous run of the planned
    files (in path order); their rows are joined in that order, so the manifest does not depend on
    the number of jobs.
    """
    global _FORK_PLAN
    root = str(tmp)
    planned = list(projection.files())
    jobs = _jobs(len(planned))
    bundle_sha = projection.bundle()["sha256"]
    if jobs == 1:
        rows = _write_rows(root, planned)
    else:
        _FORK_PLAN = planned
        try:
            with multiprocessing.get_context("fork").Pool(jobs, initializer=_die_with_parent) as pool:
                cuts = [len(planned) * i // jobs for i in range(jobs + 1)]
                shares = pool.map(_write_share, [(root, cuts[i], cuts[i + 1]) for i in range(jobs)])
        finally:
            _FORK_PLAN = []
        rows = [row for share in shares for row in share]
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
    manifest, data = assemble(inputs, environment, bundle_sha, rows)
    _write_new(os.path.join(root, MANIFEST_NAME), data, stamp_seconds(stamp(projection.date)))
    _date_directories(root, rows, stamp(projection.date))
    return manifest


def _date_directories(root: str, rows: list[_Row], today: str) -> None:
    """No wall clock on disk: each directory gets the latest mtime beneath it (`manifest.json`, written
    last, has the projection date) (the root at least the projection date, as its seat card has)."""
    latest: dict[str, str] = {"": today}
    for row in rows:
        path, mtime = row[0], row[5]
        parent = path.rpartition("/")[0]
        while True:
            if latest.get(parent, "") < mtime:
                latest[parent] = mtime
            if not parent:
                break
            parent = parent.rpartition("/")[0]
    for rel, mtime in latest.items():
        seconds = stamp_seconds(mtime)
        os.utime(os.path.join(root, rel) if rel else root, (seconds, seconds))


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
    span = state.date_span()
    if span is not None and day < span[0]:
        raise UsageError(
            f"date {day.isoformat()} is before world {state.world_id} starts: nothing in {rev} exists before "
            f"{span[0].isoformat()} (its first dated document, record event or message); "
            f"use a date from {span[0].isoformat()} on"
        )
    projection = plan_projection(state, day, seat)
    out = Path(out).absolute()
    with atomic_directory(out, force=force) as tmp:
        manifest = write_projection(projection, tmp)
    return ProjectionResult(out=out, manifest=manifest)
