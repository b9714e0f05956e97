"""A whole projection's rendered bytes, kept across processes: materializing it again renders nothing.

Every file of a projection is a function of the revision (its digest), the date, the seat and the
code that plans and renders it (`worldkit.materialize.rendered`: the world, timeline, render and
materialize packages, canon, the library versions; here also access and tools, which decide what a
seat sees and its `tools.json`). A materialization with the render cache on writes, beside the
tree, a pack: each run of the plan's files (in plan order) as one segment file of their bytes, and an
index of every file's size, SHA-256 and date. The next materialization of the same projection (the
same key, and the same plan: the key covers the digest of every planned path and source) reads each
file's bytes from its segment with one `pread` instead of rendering it.

A pack lives in `<cache>/packs/<key>/`, built in a temp folder and renamed into place whole, so a
reader never sees half of one. It is trusted only as far as the key and the digests go: each file
read is digested while it is written (as every file is, for the manifest) and a file whose digest
is not the index's is rendered instead (and the pack deleted). Nothing here is needed for correctness:
deleting the folder only costs time. Never used where rendering must happen anew (`fresh_renders()`,
`new_memo()`, `WORLDKIT_RENDER_CACHE=off`: the reproducibility checks, the benchmark's cold runs).
The folder keeps the `KEEP` most recently used packs within `BUDGET` bytes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
from array import array
from bisect import bisect_right
from pathlib import Path

from worldkit.canon import sha256_parts

MAGIC = b"worldkit-pack-1"
KEEP = 8
"""Packs kept at most (the least recently used beyond this are deleted after a write)."""
BUDGET = 512 * 1024 * 1024
"""Bytes the packs together keep at most."""
_EXTRA_PACKAGES = ("access", "tools")
_CODE: dict[str, str] = {}


def _code() -> str:
    if "code" not in _CODE:
        from worldkit.materialize.rendered import _code as render_code

        base = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(render_code().encode())
        for path in (p for package in _EXTRA_PACKAGES for p in sorted((base / package).rglob("*.py"))):
            rel, body = path.relative_to(base).as_posix().encode(), path.read_bytes()
            digest.update(len(rel).to_bytes(8, "big") + rel + len(body).to_bytes(8, "big") + body)
        _CODE["code"] = digest.hexdigest()
    return _CODE["code"]


def folder() -> Path | None:
    """`<cache>/packs`, or None when the render cache is off (or inside `fresh_renders()`/`new_memo()`)."""
    from worldkit.materialize.memo import current_memo, process_memo
    from worldkit.materialize.rendered import folder as rendered_folder

    if current_memo() is not process_memo():
        return None
    root = rendered_folder()
    return None if root is None else root.parent / "packs"


def pack_key(revision_digest: str, date: str, seat: str, plan_digest: str) -> str:
    return sha256_parts(MAGIC, _code(), revision_digest, date, seat, plan_digest)


class PackReader:
    """A complete pack: `get(i)` is the bytes of the plan's file `i` (None if its segment is unreadable)."""

    def __init__(self, root: Path, starts: list[int], sizes: array, digests: bytes, mtimes: list[str]) -> None:
        self.root = root
        self.starts = starts
        self.sizes = sizes
        self.digests = digests
        self.mtimes = mtimes
        self.offsets = array("q", bytes(8 * len(sizes)))
        run_starts = set(starts)
        at = 0
        for i, size in enumerate(sizes):
            if i in run_starts:
                at = 0
            self.offsets[i] = at
            at += size
        self._fds: dict[int, int] = {}
        self._pid = os.getpid()
        self.bad = False

    def __len__(self) -> int:
        return len(self.sizes)

    def _fd(self, start: int) -> int:
        if self._pid != os.getpid():  # a forked worker opens its own (the parent's may be closed meanwhile)
            self._fds, self._pid = {}, os.getpid()
        fd = self._fds.get(start)
        if fd is None:
            fd = self._fds[start] = os.open(self.root / f"seg-{start}", os.O_RDONLY | getattr(os, "O_BINARY", 0))
        return fd

    def get(self, i: int) -> tuple[bytes, str, str] | None:
        """(bytes, date, hex SHA-256 the index gives) of file `i`, or None."""
        start = self.starts[bisect_right(self.starts, i) - 1]
        size = self.sizes[i]
        try:
            data = os.pread(self._fd(start), size, self.offsets[i]) if size else b""
        except OSError:
            return None
        if len(data) != size:
            return None
        return data, self.mtimes[i], self.digests[32 * i : 32 * i + 32].hex()

    def close(self) -> None:
        if self._pid == os.getpid():
            for fd in self._fds.values():
                os.close(fd)
        self._fds = {}


def open_pack(key: str, n_files: int) -> PackReader | None:
    base = folder()
    if base is None or not hasattr(os, "pread"):
        return None
    root = base / key
    try:
        raw = (root / "index").read_bytes()
    except OSError:
        return None
    try:
        head, _, body = raw.partition(b"\n")
        fields = head.split(b" ")
        if len(fields) != 4 or fields[0] != MAGIC or fields[1] != key.encode() or int(fields[2]) != n_files:
            return None
        if fields[3] != hashlib.sha256(body).hexdigest().encode():
            return None
        (n_runs,) = struct.unpack_from(">Q", body, 0)
        at = 8
        starts = list(struct.unpack_from(f">{n_runs}Q", body, at))
        at += 8 * n_runs
        sizes = array("q")
        sizes.frombytes(body[at : at + 8 * n_files])
        if sizes.itemsize != 8:
            return None
        if struct.pack(">q", 1) != struct.pack("=q", 1):
            sizes.byteswap()  # written big-endian
        at += 8 * n_files
        digests = body[at : at + 32 * n_files]
        at += 32 * n_files
        ids = array("I")
        ids.frombytes(body[at : at + 4 * n_files])
        if struct.pack(">I", 1) != struct.pack("=I", 1):
            ids.byteswap()
        at += 4 * n_files
        names = body[at:].decode("ascii").split("\n")
        mtimes = [names[k] for k in ids]
    except (ValueError, IndexError, struct.error, UnicodeDecodeError):
        return None
    if len(digests) != 32 * n_files or not starts or starts[0] != 0:
        return None
    try:
        os.utime(root)  # recently used: kept by the sweep
    except OSError:
        pass
    return PackReader(root, starts, sizes, digests, mtimes)


def discard(key: str) -> None:
    base = folder()
    if base is not None:
        shutil.rmtree(base / key, ignore_errors=True)


class PackWriter:
    """Builds a pack in a temp folder: segments written by whoever renders a run (`segment`), the index by
    the parent (`note` for every file, in plan order), the whole renamed into place by `finish`."""

    def __init__(self, base: Path, key: str, n_files: int) -> None:
        self.base = base
        self.key = key
        self.n_files = n_files
        self.tmp = base / f".tmp-{key[:16]}-{os.getpid()}"
        self.starts: list[int] = []
        self.sizes = array("q")
        self.digests = bytearray()
        self.ids = array("I")
        self._names: dict[str, int] = {}
        self.total = 0
        self.ok = True
        shutil.rmtree(self.tmp, ignore_errors=True)
        self.tmp.mkdir(parents=True)

    def segment(self, start: int) -> Segment:
        self.starts.append(start)
        return Segment(self.tmp / f"seg-{start}")

    def note(self, size: int, sha256: str, mtime: str) -> None:
        self.sizes.append(size)
        self.digests += bytes.fromhex(sha256)
        self.ids.append(self._names.setdefault(mtime, len(self._names)))
        self.total += size
        if self.total > BUDGET // 2:
            self.ok = False

    def finish(self) -> None:
        """Write the index and move the pack into place (or drop it, if a segment failed or it is too big)."""
        try:
            if not self.ok or len(self.sizes) != self.n_files:
                return
            starts = sorted(set(self.starts))
            sizes = array("q", self.sizes)
            ids = array("I", self.ids)
            if struct.pack(">q", 1) != struct.pack("=q", 1):
                sizes.byteswap()
                ids.byteswap()
            body = b"".join((
                struct.pack(">Q", len(starts)), struct.pack(f">{len(starts)}Q", *starts), sizes.tobytes(),
                bytes(self.digests), ids.tobytes(), "\n".join(self._names).encode("ascii"),
            ))
            head = b" ".join((MAGIC, self.key.encode(), str(self.n_files).encode(), hashlib.sha256(body).hexdigest().encode()))
            with open(self.tmp / "index", "wb") as handle:
                handle.write(head + b"\n" + body)
            target = self.base / self.key
            shutil.rmtree(target, ignore_errors=True)
            os.rename(self.tmp, target)
        except OSError:
            pass
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
        sweep(self.base)

    def abandon(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


class Segment:
    """The bytes of one run of files, appended in order, written in large chunks."""

    __slots__ = ("path", "fd", "buffer")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        self.buffer = bytearray()

    def add(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= 1 << 20:
            self._flush()

    def _flush(self) -> None:
        with memoryview(self.buffer) as whole:
            view = whole
            while view:
                view = view[os.write(self.fd, view) :]
            view.release()
        self.buffer.clear()

    def close(self) -> None:
        try:
            self._flush()
        finally:
            os.close(self.fd)


def sweep(base: Path) -> None:
    """Keep the `KEEP` most recently used packs, within `BUDGET` bytes."""
    try:
        packs = []
        for entry in os.scandir(base):
            if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                size = sum(e.stat().st_size for e in os.scandir(entry.path))
                packs.append((entry.stat().st_mtime_ns, size, entry.path))
    except OSError:
        return
    total = 0
    for n, (_, size, path) in enumerate(sorted(packs, reverse=True)):
        total += size
        if n >= KEEP or total > BUDGET:
            shutil.rmtree(path, ignore_errors=True)
