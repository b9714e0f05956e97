"""Rendered bytes of shared sources kept across processes, for the files that are slow to render.

A document, record, mail or chat log of a projection is a function of (revision digest, date, path,
source) and of the code that renders it (`worldkit.materialize.memo`). The in-process memo reuses
such bytes within one process; this store reuses them across processes — each `worldkit
materialize`, test worker and verify worker would otherwise render PharmaCo's documents again
(their templates, the eves that date them, their office formats). An entry lives under
`<cache>/rendered/<k[:2]>/<k>` (the world cache's folder, `worldkit.world.cache.cache_root`),
keyed by the SHA-256 of those four inputs, the source of every worldkit package that decides the
bytes (world, timeline, render, materialize, canon) and the versions of Python, jinja2 and the
office format libraries. An entry names its key and the digest of its payload and time and is
used only when both match; anything else is ignored and rendered again. Nothing here is needed for
correctness: deleting the folder only costs time.

Only files that took at least `STORE_MIN_SECONDS` to render are stored: reading an entry back costs
an open and a read, so a file cheaper than that to render (a record's JSON, a generated note) is
rendered again, and a projection of 100,000 such files writes no second tree into the cache.

Each (revision, date) materialized adds its slow documents (about 5 MB for a PharmaCo date, and again
for every mutated revision of a mutation campaign), so the folder is bounded: after every
`SWEEP_EVERY` bytes it stored, a process deletes the oldest entries beyond `BUDGET`.

Never used where rendering must happen anew: inside `fresh_renders()` or a `new_memo()` block (the
reproducibility checks), or with `WORLDKIT_RENDER_CACHE=off` (verify's fresh-process rebuilds).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from worldkit import __version__
from worldkit._fs import replace_file
from worldkit.canon import sha256_parts

Rendered = tuple[bytes, str]
"""A file's bytes and its intended modification time (a `stamp`)."""

MAGIC = b"worldkit-rendered-1"
STORE_MIN_SECONDS = 0.0003
"""A file that renders faster than this is not stored (reading it back would cost about as much)."""
BUDGET = 256 * 1024 * 1024
"""Bytes the folder keeps at most: a sweep deletes the oldest entries beyond it."""
SWEEP_EVERY = 32 * 1024 * 1024
"""A process sweeps the folder after each this many bytes it stored (a mutation campaign stores a
world's slow documents again for every mutated revision)."""
_WRITTEN = [0]
_PACKAGES = ("world", "timeline", "render", "materialize")
_MODULES = ("canon.py", "__init__.py")
_CODE: dict[str, str] = {}


def _code() -> str:
    """The renderers' source and the libraries' versions, digested once per process."""
    if "code" not in _CODE:
        import jinja2

        from worldkit.render.office.cache import code_digest as office_code

        base = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(f"{__version__}\0{sys.version}\0jinja2={jinja2.__version__}\0{office_code()}\0".encode())
        paths = [p for package in _PACKAGES for p in sorted((base / package).rglob("*.py"))]
        for path in [*paths, *(base / name for name in _MODULES)]:
            body = path.read_bytes()
            rel = path.relative_to(base).as_posix().encode()
            digest.update(len(rel).to_bytes(8, "big") + rel + len(body).to_bytes(8, "big") + body)
        _CODE["code"] = digest.hexdigest()
    return _CODE["code"]


def folder() -> Path | None:
    """Where entries live, or None when the render cache is off (the office cache's switches)."""
    from worldkit.render.office.cache import cache_folder

    return cache_folder("rendered")


def entry_key(parts: tuple[str, str, str, str]) -> str:
    """The entry name of (revision digest, date, path, source) under the running code."""
    return sha256_parts(_code(), *parts)


class RenderedStore:
    """Entries of one cache folder: `through(parts, produce)` reads one or renders and maybe stores it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def holds(self, parts: tuple[str, str, str, str]) -> bool:
        """Whether an entry for `parts` is there (not read: `through` still checks it when it reads it)."""
        name = entry_key(parts)
        return os.path.exists(os.path.join(self.root, name[:2], name))

    def through(self, parts: tuple[str, str, str, str], produce: Callable[[], Rendered]) -> Rendered:
        name = entry_key(parts)
        path = os.path.join(self.root, name[:2], name)
        found = read(path, name)
        if found is not None:
            return found
        started = time.perf_counter()
        data = produce()
        if time.perf_counter() - started >= STORE_MIN_SECONDS:
            write(path, name, data)
            _WRITTEN[0] += len(data[0])
            if _WRITTEN[0] >= SWEEP_EVERY:
                _WRITTEN[0] = 0
                sweep(self.root)
        return data


def sweep(root: Path, budget: int | None = None) -> None:
    """Delete the oldest entries (by modification time: when written) until the folder holds at most
    `budget` bytes; entries another process is writing or deleting at the same time are skipped."""
    budget = BUDGET if budget is None else budget
    entries: list[tuple[int, int, str]] = []
    try:
        shards = [e.path for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for shard in shards:
        try:
            with os.scandir(shard) as listing:
                for entry in listing:
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    entries.append((st.st_mtime_ns, st.st_size, entry.path))
        except OSError:
            continue
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= budget:
            break
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size


def store() -> RenderedStore | None:
    """The store in force, or None (cache off, or inside `fresh_renders()` / `new_memo()`)."""
    from worldkit.materialize.memo import current_memo, process_memo

    if current_memo() is not process_memo():
        return None
    root = folder()
    return None if root is None else RenderedStore(root)


def _digest(payload: bytes, stamp: bytes) -> str:
    """What an entry's header vouches for: its payload and its modification time."""
    return hashlib.sha256(stamp + b"\n" + payload).hexdigest()


def read(path: str, name: str) -> Rendered | None:
    """The entry at `path` if it is exactly one written under `name`, else None."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        parts, total = [], 0
        while total < size and (chunk := os.read(fd, size - total)):
            parts.append(chunk)
            total += len(chunk)
        raw = b"".join(parts)
    except OSError:
        return None
    finally:
        os.close(fd)
    head, sep, payload = raw.partition(b"\n")
    fields = head.split(b" ")
    if not sep or len(fields) != 4 or fields[0] != MAGIC or fields[1] != name.encode("ascii"):
        return None
    if fields[2] != _digest(payload, fields[3]).encode("ascii"):
        return None
    return payload, fields[3].decode("ascii")


def write(path: str, name: str, data: Rendered) -> None:
    """Store an entry atomically (temp file + rename); a read-only or full disk only costs time."""
    payload, mtime = data
    stamp = mtime.encode("ascii")
    head = b" ".join((MAGIC, name.encode("ascii"), _digest(payload, stamp).encode("ascii"), stamp))
    replace_file(Path(path), head + b"\n", payload)
