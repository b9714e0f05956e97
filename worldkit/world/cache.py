"""A content-addressed, cross-process cache of loaded and validated world packages.

Loading PharmaCo (YAML, the generator, validation of every revision, the revision digests) costs
seconds; every command, test and verify worker used to pay it again. The cache keeps the loaded
`WorldPackage` (with every revision resolved and digested) under `.worldkit/cache/worlds/`, keyed by
`source_key`: a SHA-256 over the world folder's path and every file in it (world.yaml, data,
templates, the generator and its helpers), the worldkit code that turns those files into a state,
and the Python and worldkit versions. Edit any of them and the key changes, so a stale entry is
never found.

An entry is trusted only when its header names exactly the key asked for and the SHA-256 of its
payload matches; anything else (a truncated, corrupted or foreign file) is ignored, and the world is
loaded from source and the entry rewritten. Entries are written to a temp file in the same folder
and renamed into place, so concurrent processes (pytest-xdist workers, verify workers) only ever see
whole entries. `$WORLDKIT_CACHE` moves the cache (`off` disables it); nothing in it is needed for
correctness: deleting `.worldkit/cache` only costs time.
"""

from __future__ import annotations

import gc
import hashlib
import io
import os
import pickle
import platform
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldkit import __version__
from worldkit._fs import replace_file
from worldkit.world import table

if TYPE_CHECKING:
    from worldkit.world.load import WorldPackage

FORMAT = b"worldkit-world-cache 2"
"""First line of every entry; bump it when the entry layout changes."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The collector off while one entry is unpickled (unpickling makes no garbage for it to find,
    and a young collection every 700 new objects would walk the world as it grows), then on again
    if it was on: a scoped pause, not process tuning (that is `worldkit._process`'s, for the
    programs that own their process)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


_OFF = {"off", "0", "no", "false", "none"}
KEEP = 32
"""Entries kept per cache folder: the least recently used beyond this are deleted after a write."""
_CODE_PACKAGES = ("world", "timeline")
"""worldkit sub-packages whose source decides what a loaded (and validated) state is."""


def cache_root() -> Path | None:
    """Where entries live: $WORLDKIT_CACHE, else `.worldkit/cache` in the current folder; None when off."""
    configured = os.environ.get("WORLDKIT_CACHE")
    if configured is not None:
        if configured.strip().lower() in _OFF or not configured.strip():
            return None
        return Path(configured)
    return Path.cwd() / ".worldkit" / "cache"


def _code_digest() -> str:
    """One digest of the loader's own source (models, loading, validation, state, timeline)."""
    digest = hashlib.sha256()
    base = Path(__file__).resolve().parents[1]
    for package in _CODE_PACKAGES:
        for path in sorted((base / package).rglob("*.py")):
            digest.update(path.relative_to(base).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for name in ("canon.py", "errors.py"):
        path = base / name
        if path.is_file():
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


_CODE: dict[str, str] = {}


def source_files(root: Path) -> list[Path]:
    """Every file of the world folder that can change what loads (bytecode caches excepted)."""
    return sorted(
        p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")
    )


def source_key(root: Path) -> str:
    """The cache key of the world at `root`: changes whenever any input of loading changes."""
    return _keys(root)[0]


def _keys(root: Path) -> tuple[str, str]:
    """(`source_key`, the same digest without the folder's path): one pass over the files."""
    if "code" not in _CODE:
        _CODE["code"] = _code_digest()
    root = Path(root).resolve()
    digest, content = hashlib.sha256(), hashlib.sha256()
    for part in (FORMAT.decode(), __version__, platform.python_version(), pickle.format_version, _CODE["code"]):
        digest.update(str(part).encode("utf-8") + b"\0")
        content.update(str(part).encode("utf-8") + b"\0")
    digest.update(str(root).encode("utf-8") + b"\0")
    for path in source_files(root):
        rel = path.relative_to(root).as_posix().encode("utf-8")
        body = path.read_bytes()
        chunk = len(rel).to_bytes(8, "big") + rel + len(body).to_bytes(8, "big") + body
        digest.update(chunk)
        content.update(chunk)
    return digest.hexdigest(), content.hexdigest()


_BY_CONTENT: dict[str, WorldPackage] = {}
"""This process's loaded packages by their path-independent key: a byte-identical copy of a world
folder elsewhere (the scratch copies of verify's seeded faults and mutation campaign) is that
package rebased onto the copy's folder instead of a load from source."""
_BY_CONTENT_KEEP = 4


def entry_path(key: str, folder: Path | None = None, kind: str = "worlds") -> Path | None:
    """Where the entry `key` of `kind` (`worlds`: loaded packages; `templates`: compiled templates) lives."""
    folder = folder if folder is not None else cache_root()
    return None if folder is None else folder / kind / f"{key}.pickle"


def read_entry(key: str, folder: Path | None = None, kind: str = "worlds") -> Any | None:
    """The object stored under `key`, or None if there is none or it is not exactly what was written."""
    path = entry_path(key, folder, kind)
    if path is None:
        return None
    # The payload is hashed and unpickled through one open file, a chunk at a time, so a large
    # world is never held as bytes beside the objects it unpickles to (100k files: 72 MB twice).
    # Entries are replaced by rename, never rewritten, so the open file stays what was hashed; its
    # document table (`worldkit.world.table`) is read later through a duplicate of its descriptor.
    try:
        with path.open("rb") as handle:
            header = handle.readline(len(FORMAT) + len(key) + 80)
            fields = header.rstrip(b"\n").split(b" ")
            if not header.endswith(b"\n") or len(fields) != 4 or b" ".join(fields[:2]) != FORMAT:
                return None
            if fields[2].decode("ascii", "replace") != key:
                return None
            start = handle.tell()
            if fields[3] != hashlib.file_digest(handle, "sha256").hexdigest().encode():
                return None
            handle.seek(start)
            size = int.from_bytes(handle.read(8), "big")
            try:
                with _collector_paused():
                    if table.AVAILABLE:
                        rows = table.Table(os.dup(handle.fileno()), start + 8 + size)
                        loaded = table.TableUnpickler(handle, rows).load()
                    else:
                        loaded = pickle.load(handle)
                    return loaded
            except Exception:  # noqa: BLE001 - any unreadable entry is ignored and rebuilt
                return None
    except OSError:
        return None


def write_entry(key: str, value: Any, folder: Path | None = None, kind: str = "worlds", keep: int | None = None) -> Path | None:
    """Store `value` under `key` atomically (temp file + rename); failures to write are ignored."""
    path = entry_path(key, folder, kind)
    if path is None:
        return None
    rows = bytearray()
    buffer = io.BytesIO()
    if table.AVAILABLE:
        table.TablePickler(buffer, rows).dump(value)
    else:
        pickle.dump(value, buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickled = buffer.getbuffer()
    size = len(pickled).to_bytes(8, "big")
    digest = hashlib.sha256(size)
    digest.update(pickled)
    digest.update(rows)
    header = FORMAT + b" " + key.encode("ascii") + b" " + digest.hexdigest().encode() + b"\n"
    if not replace_file(path, header, size, pickled, rows):
        return None  # a read-only or full disk only costs time
    try:
        if keep is None:
            prune(path.parent)
        else:
            prune(path.parent, keep)
    except OSError:
        pass
    return path


def prune(folder: Path, keep: int = KEEP) -> None:
    """Delete all but the `keep` most recently used entries (a hit refreshes an entry's mtime)."""
    entries = []
    for path in folder.glob("*.pickle"):
        try:
            entries.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue  # removed by another process meanwhile
    for _, path in sorted(entries, reverse=True)[keep:]:
        path.unlink(missing_ok=True)


def cached_package(root: Path, load: Callable[[Path], WorldPackage], kind: type[WorldPackage]) -> WorldPackage:
    """`load(root)`, or the entry a previous load of the very same sources stored (an instance of
    `kind`, the loader's package class: this module never imports the loader)."""
    from worldkit.world.compact import compact

    folder = cache_root()
    if folder is None:
        return load(root)
    key, content = _keys(root)
    found = read_entry(key, folder)
    if isinstance(found, kind) and found.root == Path(root):
        try:
            os.utime(entry_path(key, folder))  # type: ignore[arg-type]
        except OSError:
            pass
        _remember(content, found)
        return found
    twin = _BY_CONTENT.get(content)
    if twin is not None:
        package = twin if twin.root == Path(root) else twin.rebased(Path(root))
        write_entry(key, compact(package), folder)
        return package
    package = load(root)
    for name in package.revision_names:
        package.revision(name).digest  # noqa: B018 - resolve and digest every revision before storing
    write_entry(key, compact(package), folder)
    _remember(content, package)
    return package


def _remember(content: str, package: WorldPackage) -> None:
    _BY_CONTENT.pop(content, None)
    _BY_CONTENT[content] = package
    while len(_BY_CONTENT) > _BY_CONTENT_KEEP:
        _BY_CONTENT.pop(next(iter(_BY_CONTENT)))
