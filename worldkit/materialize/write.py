"""Write a projection to disk atomically and digest it.

The tree is built in a hidden sibling temp directory and renamed into place, so an interrupted
run never leaves a partial DIR (stale temp dirs of dead processes are swept on the next run).
"""

from __future__ import annotations

import datetime as dt
import gc
import hashlib
import multiprocessing
import os
import platform
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import jinja2

from worldkit import __version__
from worldkit._fs import atomic_directory
from worldkit.errors import UsageError
from worldkit.materialize import pack
from worldkit.materialize.manifest import MANIFEST_NAME, Environment, Inputs, Manifest, ManifestBuilder
from worldkit.materialize.project import PlannedFile, PlannedFiles, Projection, plan_projection, stamp, stamp_seconds
from worldkit.render import Renderer
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


_PARALLEL_MIN_FILES = 4000
_PARALLEL_MIN_OFFICE = 40
"""Office documents to render (milliseconds each, in the format libraries) that make workers pay below
`_PARALLEL_MIN_FILES` files, for a process that ends after the projection (`materialize(office_workers=True)`)."""
_RUNS_PER_JOB = 8
"""Contiguous runs of the plan handed to each worker, in turn."""
# Set just before forking workers; a forked worker reads its share of the plan from here.
_FORK_PLAN: PlannedFiles | None = None

Written = tuple[str, int, str]
"""(sha256, size, mtime) of one written file: the rest of its manifest entry is in the plan."""


class _Tree:
    """Writes planned files under `root`: each file is created, written, dated and closed (four
    syscalls); each folder is made once, with one `mkdir` (its parents were made before it). With a
    pack (`worldkit.materialize.pack`) a file's bytes are read from it instead of rendered, or added
    to the segment being written."""

    __slots__ = ("root", "made", "stamps", "reader", "segment")

    def __init__(self, root: str, reader: pack.PackReader | None = None, segment: pack.Segment | None = None) -> None:
        self.root = root
        self.made: set[str] = {""}
        self.stamps: dict[str, str] = {}  # one string per distinct date: entries share them
        self.reader = reader
        self.segment = segment

    def folder(self, rel: str) -> None:
        parent = rel.rpartition("/")[0]
        if parent not in self.made:
            self.folder(parent)
        try:
            os.mkdir(self.root + "/" + rel)
        except FileExistsError:  # made by another worker meanwhile
            pass
        self.made.add(rel)

    def write(self, item: PlannedFile, index: int = -1) -> Written:
        found = self.reader.get(index) if self.reader is not None else None
        if found is not None:
            data, mtime, expected = found
            sha = hashlib.sha256(data).hexdigest()
            if sha != expected:  # a damaged pack: this file is rendered, the pack deleted after the run
                self.reader.bad = True
                found = None
        if found is None:
            data, mtime = item.render()
            sha = hashlib.sha256(data).hexdigest()
            if self.segment is not None:
                self.segment.add(data)
        path = item.path
        parent = path.rpartition("/")[0]
        if parent not in self.made:
            self.folder(parent)
        _write_new(self.root + "/" + path, data, stamp_seconds(mtime))
        return sha, len(data), self.stamps.setdefault(mtime, mtime)


def _worker_start() -> None:
    """A forked worker leaves what it inherited out of its collector's sight (`gc.freeze`: its
    collections then walk only what it allocates itself, not the loaded world, whose pages they would
    also copy), and dies with its parent."""
    gc.freeze()
    _die_with_parent()


def _die_with_parent() -> None:
    """A worker must not outlive a killed materialize (it would keep writing into the temp dir)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:
            os._exit(1)


def _write_share(job: tuple[str, int, int]) -> list[Written]:
    """A contiguous run of the plan, so workers seldom create files in the same directory at once (ext4
    serializes that) and their results come back in path order."""
    global _WORKER_TREE
    root, start, stop = job
    assert _FORK_PLAN is not None
    if _WORKER_TREE is None or _WORKER_TREE.root != root:
        _WORKER_TREE = _Tree(root, _FORK_PACK[0])  # kept across a worker's runs: it knows the folders it made
    tree = _WORKER_TREE
    writer = _FORK_PACK[1]
    tree.segment = writer.segment(start) if writer is not None and stop > start else None
    try:
        return [tree.write(item, i) for i, item in enumerate(_FORK_PLAN.part(start, stop), start)]
    finally:
        if tree.segment is not None:
            tree.segment.close()
            tree.segment = None
        if tree.reader is not None and tree.reader.bad:
            shutil.rmtree(tree.reader.root, ignore_errors=True)


_FORK_PACK: tuple[pack.PackReader | None, pack.PackWriter | None] = (None, None)


_WORKER_TREE: _Tree | None = None


def _jobs(n_files: int, office_renders: Callable[[], int] | None = None) -> int:
    """Worker processes for rendering: the output is identical whatever this returns.

    Forked workers pay from `_PARALLEL_MIN_FILES` files on; below that, given `office_renders` (the
    caller's process ends after this projection: what workers render fills their in-process caches,
    not its), from `_PARALLEL_MIN_OFFICE` office documents to render (counted only then)."""
    wanted = os.environ.get("WORLDKIT_JOBS")
    if wanted:
        return max(1, int(wanted))
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if n_files < _PARALLEL_MIN_FILES and (office_renders is None or office_renders() < _PARALLEL_MIN_OFFICE):
        return 1
    return min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


class _DirectoryDates:
    """No wall clock on disk: each directory gets the latest mtime beneath it (`manifest.json`, written
    last, has the projection date; the root at least the projection date, as its seat card has)."""

    def __init__(self, today: str) -> None:
        self.latest: dict[str, str] = {"": today}

    def note(self, path: str, mtime: str) -> None:
        latest = self.latest
        parent = path.rpartition("/")[0]
        while latest.get(parent, "") < mtime:
            # A folder is always at least as late as any folder beneath it: stop at the first that is.
            latest[parent] = mtime
            if not parent:
                break
            parent = parent.rpartition("/")[0]

    def apply(self, root: str) -> None:
        for rel, mtime in self.latest.items():
            seconds = stamp_seconds(mtime)
            os.utime(root + "/" + rel if rel else root, (seconds, seconds))


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _pack_for(
    projection: Projection, planned: PlannedFiles, inputs: Inputs
) -> tuple[pack.PackReader | None, pack.PackWriter | None]:
    """(the pack to read this projection's bytes from, or the one to write them to), when the render
    cache is on and the projection renders with the plain `Renderer` (a tracing one must see every render)."""
    if type(projection.renderer) is not Renderer or not hasattr(os, "pread"):
        return None, None
    base = pack.folder()
    if base is None:
        return None, None
    key = pack.pack_key(inputs.revision_digest, inputs.date, inputs.seat, planned.digest())
    reader = pack.open_pack(key, len(planned))
    if reader is not None:
        return reader, None
    try:
        return None, pack.PackWriter(base, key, len(planned))
    except OSError:  # a read-only or full disk only costs time
        return None, None


def write_projection(projection: Projection, tmp: Path, *, office_workers: bool = False) -> Manifest:
    """Render every planned file into `tmp` and return the manifest (also written there).

    The plan is streamed: each file is rendered, written and digested in turn, and its manifest
    entry is added (and its line written to `manifest.json`) as it comes, so no list of bytes, rows
    or lines is held. Large projections are rendered by forked workers, each taking contiguous
    runs of the planned files (in path order); the entries are joined in that order, so the manifest
    does not depend on the number of jobs (each worker takes the next run when it is done with one).
    """
    global _FORK_PLAN
    root = str(tmp)
    planned = projection.files()
    bundle_sha = projection.bundle()["sha256"]
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
    today = stamp(projection.date)
    dates = _DirectoryDates(today)
    reader, writer = _pack_for(projection, planned, inputs)
    jobs = _jobs(len(planned), projection.office_renders if office_workers and reader is None else None)
    manifest_path = os.path.join(root, MANIFEST_NAME)
    fd = os.open(manifest_path, _CREATE, 0o644)
    try:
        builder = ManifestBuilder(inputs, environment, bundle_sha, partial(_write_all, fd))
        if jobs == 1:
            tree = _Tree(root, reader, writer.segment(0) if writer is not None else None)
            try:
                for i, item in enumerate(planned):
                    sha, size, mtime = tree.write(item, i)
                    builder.add(item.path, sha, size, item.surface, item.source, mtime)
                    dates.note(item.path, mtime)
                    if writer is not None:
                        writer.note(size, sha, mtime)
            finally:
                if tree.segment is not None:
                    tree.segment.close()
        else:
            global _FORK_PACK
            _FORK_PLAN, _FORK_PACK = planned, (reader, writer)
            try:
                with multiprocessing.get_context("fork").Pool(jobs, initializer=_worker_start) as pool:
                    runs = jobs * _RUNS_PER_JOB
                    cuts = [len(planned) * i // runs for i in range(runs + 1)]
                    # Results come back in plan order while later runs are still being written, so the
                    # entries are built (and the manifest written) alongside, not all after the last file.
                    shares = pool.imap(_write_share, [(root, cuts[i], cuts[i + 1]) for i in range(runs)])
                    for i, share in enumerate(shares):
                        for (path, surface, source), (sha, size, mtime) in zip(
                            planned.meta(cuts[i], cuts[i + 1]), share, strict=True
                        ):
                            builder.add(path, sha, size, surface, source, mtime)
                            dates.note(path, mtime)
                            if writer is not None:
                                writer.note(size, sha, mtime)
                        del share
                    if writer is not None:
                        writer.starts = cuts[:-1]
            finally:
                _FORK_PLAN, _FORK_PACK = None, (None, None)
        manifest = builder.finish()
        if writer is not None:
            writer.finish()
            writer = None
        if reader is not None:
            reader.close()
            if reader.bad:
                shutil.rmtree(reader.root, ignore_errors=True)
        os.pwrite(fd, manifest.fingerprint.encode("ascii"), builder.fingerprint_at)
        seconds = stamp_seconds(today)
        if _UTIME_FD:
            os.utime(fd, (seconds, seconds))
    finally:
        os.close(fd)
        if writer is not None:  # not finished: the run failed
            writer.abandon()
    if not _UTIME_FD:
        os.utime(manifest_path, (seconds, seconds))
    dates.apply(root)
    return manifest


def materialize(
    world: str | Path | WorldPackage,
    rev: str,
    date: str | dt.date,
    seat: str,
    out: str | Path,
    *,
    force: bool = False,
    office_workers: bool = False,
) -> ProjectionResult:
    """Materialize (world, rev, date, seat) into `out`; a pure function of its inputs.

    `office_workers`: this process ends after the projection (the CLI's `materialize`), so its office
    documents may be rendered by forked workers even below the file count where workers pay by
    default; a process that goes on (verify, run) keeps them in its own caches, for what follows."""
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
        manifest = write_projection(projection, tmp, office_workers=office_workers)
    return ProjectionResult(out=out, manifest=manifest)
