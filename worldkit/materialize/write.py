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
import shutil
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import jinja2

from worldkit import __version__
from worldkit._fs import atomic_directory
from worldkit._process import start_forked_worker
from worldkit.errors import UsageError
from worldkit.materialize import pack
from worldkit.materialize.manifest import (
    MANIFEST_NAME,
    Environment,
    Inputs,
    Manifest,
    ManifestBuilder,
    entry_line,
    run_lines,
)
from worldkit.materialize.project import (
    PlannedFile,
    PlannedFiles,
    Projection,
    plan_projection,
    stamp,
    stamp_seconds,
)
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
"""Contiguous runs of the plan handed to each worker, in turn (at least)."""
_MAX_RUN = 2500
"""Files in one run at most: rendered runs wait in this process to be written (`_render_apart`), a
bounded number of them, so what they hold does not grow with the projection."""
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
        self.put(item.path, data, mtime)
        return sha, len(data), self.stamps.setdefault(mtime, mtime)

    def put(self, path: str, data: bytes, mtime: str) -> None:
        """Write `data` at `path` (under the root), dated `mtime`, making its folder first if needed."""
        self.put_run((path,), (data,), (mtime,))

    def put_run(self, paths: Sequence[str], datas: Sequence[bytes], mtimes: Sequence[str]) -> None:
        """`put` of each file of a run, in order (the loop of the process that writes every file)."""
        made, base, seconds = self.made, self.root + "/", stamp_seconds
        for path, data, mtime in zip(paths, datas, mtimes, strict=True):
            parent = path.rpartition("/")[0]
            if parent not in made:
                self.folder(parent)
            _write_new(base + path, data, seconds(mtime))


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


class _RenderedRun(NamedTuple):
    """One run of the plan rendered and digested by a forked worker, with what its manifest entries
    need besides the plan's (path, surface, source), so the process that writes it does per file only
    the writing: for the rest it adds the run's entries and folder dates at once."""

    datas: list[bytes]
    mtimes: list[str]
    digests: bytes
    """The SHA-256 of each file, raw (32 bytes a file)."""
    lines: bytes
    """The files' manifest entries (`entry_line`), as the manifest joins them (`run_lines`)."""
    folders: dict[str, str]
    """Each folder holding files of the run → the latest of their mtimes."""


def _render_share(job: tuple[int, int]) -> _RenderedRun:
    """A contiguous run of the plan rendered and digested (by a forked worker: the parent writes it)."""
    assert _FORK_PLAN is not None
    sha256 = hashlib.sha256
    datas: list[bytes] = []
    mtimes: list[str] = []
    lines: list[bytes] = []
    digests = bytearray()
    folders: dict[str, str] = {}
    for item in _FORK_PLAN.part(*job):
        data, mtime = item.render()
        digest = sha256(data)
        digests += digest.digest()
        path = item.path
        lines.append(entry_line(path, digest.hexdigest(), len(data), item.surface, item.source, mtime).encode())
        folder = path.rpartition("/")[0]
        if folders.get(folder, "") < mtime:
            folders[folder] = mtime
        datas.append(data)
        mtimes.append(mtime)
    return _RenderedRun(datas, mtimes, bytes(digests), run_lines(lines), folders)


_FIRST_RUN = 128
"""Files in the first and the last run: runs double from it to the steady size and halve back to it."""


def _cuts(n: int, jobs: int) -> list[int]:
    """Where the plan's `n` files are cut into runs (`cuts[i]:cuts[i + 1]`, in order), each of at most
    `_MAX_RUN` files and at least `_RUNS_PER_JOB` per worker. The runs grow from `_FIRST_RUN` at the start
    (the writing process waits for the first run only that long) and shrink back to it at the end (no
    long last run to write after the workers are done, nor one worker left with it alone)."""
    runs = max(jobs * _RUNS_PER_JOB, -(-n // _MAX_RUN))
    steady = n // runs
    ramp: list[int] = []
    size = _FIRST_RUN
    while size < steady:
        ramp.append(size)
        size *= 2
    middle = n - 2 * sum(ramp)
    if not ramp or middle < steady * runs // 2:  # too few files for a ramp: even runs
        return [n * i // runs for i in range(runs + 1)]
    count = -(-middle // steady)
    sizes = ramp + [middle * (i + 1) // count - middle * i // count for i in range(count)] + ramp[::-1]
    cuts = [0]
    for size in sizes:
        cuts.append(cuts[-1] + size)
    return cuts


def _in_order(pool: Any, fn: Callable[[Any], Any], jobs: list[Any], window: int) -> Iterator[Any]:
    """`pool.imap(fn, jobs)` with at most `window` results computed ahead of the one consumed, so a
    consumer slower than the workers never holds more than `window` results."""
    pending: deque[Any] = deque()
    for job in jobs:
        pending.append(pool.apply_async(fn, (job,)))
        if len(pending) > window:
            yield pending.popleft().get()
    while pending:
        yield pending.popleft().get()


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
        """A file at `path` dated `mtime`."""
        self.note_folder(path.rpartition("/")[0], mtime)

    def note_folder(self, parent: str, mtime: str) -> None:
        """A file dated `mtime` in the folder `parent`."""
        latest = self.latest
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


Record = Callable[[str, str, int, str, str, str], None]
"""Takes note of one written file: (path, sha256, size, surface, source, mtime)."""


def _recorder(builder: ManifestBuilder, dates: _DirectoryDates, writer: pack.PackWriter | None) -> Record:
    """What each written file adds, in plan order: its manifest entry, its folders' dates and, when a
    pack is being written, its line of the pack's index."""

    def record(path: str, sha: str, size: int, surface: str, source: str, mtime: str) -> None:
        builder.add(path, sha, size, surface, source, mtime)
        dates.note(path, mtime)
        if writer is not None:
            writer.note(size, sha, mtime)

    return record


def _render_apart(
    pool: Any, planned: PlannedFiles, cuts: list[int], tree: _Tree, builder: ManifestBuilder,
    dates: _DirectoryDates, writer: pack.PackWriter | None, window: int,
) -> None:
    """Workers render and digest runs of the plan; this process writes each file as its run comes back,
    then adds the run's manifest entries and folder dates at once (`ManifestBuilder.add_run`)."""
    rendered = _in_order(pool, _render_share, [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)], window)
    stamps = tree.stamps
    for i, run in enumerate(rendered):
        paths, surfaces, sources = planned.columns(cuts[i], cuts[i + 1])
        mtimes = [stamps.setdefault(m, m) for m in run.mtimes]  # one string per distinct date, as one process
        tree.put_run(paths, run.datas, mtimes)
        sizes = [len(data) for data in run.datas]
        builder.add_run(run.lines, paths, run.digests, sizes, surfaces, sources, mtimes)
        for folder, mtime in run.folders.items():
            dates.note_folder(folder, mtime)
        if writer is not None and paths:
            segment = writer.segment(cuts[i])
            try:
                for k, data in enumerate(run.datas):
                    segment.add(data)
                    writer.note(sizes[k], run.digests[32 * k : 32 * k + 32].hex(), mtimes[k])
            finally:
                segment.close()
        del run


def _write_apart(pool: Any, planned: PlannedFiles, cuts: list[int], root: str, record: Record) -> None:
    """Workers read (or render), digest and write runs of the plan; this process adds their entries."""
    # Results come back in plan order while later runs are still being written, so the
    # entries are built (and the manifest written) alongside, not all after the last file.
    shares = pool.imap(_write_share, [(root, cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1)])
    for i, share in enumerate(shares):
        for (path, surface, source), (sha, size, mtime) in zip(planned.meta(cuts[i], cuts[i + 1]), share, strict=True):
            record(path, sha, size, surface, source, mtime)
        del share


def write_projection(projection: Projection, tmp: Path, *, office_workers: bool = False) -> Manifest:
    """Render every planned file into `tmp` and return the manifest (also written there).

    The plan is streamed: each file is rendered, written and digested in turn, and its manifest
    entry is added (and its line written to `manifest.json`) as it comes, so no list of bytes, rows
    or lines is held. Large projections are rendered by forked workers, each taking contiguous
    runs of the planned files (in path order); the entries are joined in that order, so the manifest
    does not depend on the number of jobs (each worker takes the next run when it is done with one).
    The workers render and digest; this process alone creates the files, as each run comes back (a
    few runs ahead at most). Two processes creating files at once on one ext4 filesystem (allocating
    inodes in the same block groups) spent up to twice the kernel time of one, most when creating a
    file is dear (minutes after a mass delete, the allocator skips recently freed inodes): at 100,000
    files, 8.7–9.7 s of system time against 3.3–5.3 s with one writer, and 8.8–9.5 s against 5.7–7.8 s
    of wall time; where creating is cheap the one writer was up to 0.5 s slower. With a pack to read
    (nothing to render), the workers write their runs themselves.
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
        record = _recorder(builder, dates, writer)
        if jobs == 1:
            tree = _Tree(root, reader, writer.segment(0) if writer is not None else None)
            try:
                for i, item in enumerate(planned):
                    sha, size, mtime = tree.write(item, i)
                    record(item.path, sha, size, item.surface, item.source, mtime)
            finally:
                if tree.segment is not None:
                    tree.segment.close()
        else:
            global _FORK_PACK
            _FORK_PLAN, _FORK_PACK = planned, (reader, writer)
            try:
                with multiprocessing.get_context("fork").Pool(jobs, initializer=start_forked_worker) as pool:
                    cuts = _cuts(len(planned), jobs)
                    if reader is None:  # render there, write here: one process creates the files
                        _render_apart(pool, planned, cuts, _Tree(root), builder, dates, writer, window=2 * jobs)
                    else:  # nothing to render: each worker reads its runs from the pack and writes them
                        _write_apart(pool, planned, cuts, root, record)
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
    out = Path(out).absolute()
    projection = plan_projection(state, day, seat)
    with atomic_directory(out, force=force) as tmp:
        manifest = write_projection(projection, tmp, office_workers=office_workers)
    return ProjectionResult(out=out, manifest=manifest)
