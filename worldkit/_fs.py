"""Filesystem helpers shared by everything that writes a directory tree."""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from worldkit.errors import OutputExists, PathRefused


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_STALE = re.compile(r"\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>\d+)-[0-9a-f]{8}")


def sweep_stale(out: Path) -> list[Path]:
    """Remove the siblings `.NAME.tmp-<pid>-…` (a tree being built) and `.NAME.old-<pid>-…` (the
    tree a `--force` replaced) left in `out`'s folder by processes that were killed — for any
    NAME, so a killed apply into another folder there is swept too; returns what was removed."""
    removed: list[Path] = []
    if not out.parent.is_dir():
        return removed
    for stale in sorted(out.parent.glob(".*.*-*")):
        found = _STALE.fullmatch(stale.name)
        if found is None or _pid_alive(int(found.group("pid"))):
            continue
        if stale.is_symlink() or not stale.is_dir():
            continue
        _remove_tree(stale)
        removed.append(stale)
    return removed


def _remove_tree(path: Path) -> None:
    """`rmtree`, making read-only folders writable first (a tree left half-removed is retried)."""

    def retry(function: object, name: str, _info: object) -> None:
        parent = os.path.dirname(name)
        try:
            os.chmod(parent, 0o700)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, 0o700)
                shutil.rmtree(name, ignore_errors=True)
            else:
                os.unlink(name)
        except OSError:
            pass

    shutil.rmtree(path, onexc=retry) if sys.version_info >= (3, 12) else shutil.rmtree(path, onerror=retry)


def writable_folder(out: Path) -> Path:
    """`out`, created if missing; PathRefused (exit 2) naming it when it cannot be (under /proc, on a
    read-only or full disk, below a file)."""
    out = Path(out).absolute()
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".worldkit-probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        probe.mkdir()
        probe.rmdir()
    except OSError as error:
        raise PathRefused(f"cannot write the output directory {out}: {error.strerror or error}; "
                          "give --out a folder on a writable disk") from None  # fmt: skip
    return out


@contextmanager
def atomic_directory(out: Path, *, force: bool = False) -> Iterator[Path]:
    """Build a directory in a hidden temp sibling and rename it onto `out` when the block succeeds.

    A non-empty `out` is refused unless `force`; on any failure (or a kill) `out` is untouched and
    no partial tree takes its place.
    """
    out = Path(out).absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise OutputExists(f"output directory {out} exists and is not empty; pass --force to replace it")
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale(out)
        tmp.mkdir()
    except OSError as error:  # /proc, a read-only or full disk, a file where a folder is needed
        raise PathRefused(f"cannot write the output directory {out}: {error.strerror or error}; "
                          "give --out a folder on a writable disk") from None  # fmt: skip
    try:
        yield tmp
        if out.exists():
            trash = out.parent / f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            os.rename(out, trash)
            os.rename(tmp, out)
            _remove_tree(trash)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def replace_file(path: Path, *chunks: bytes) -> bool:
    """Write `chunks` to `path` atomically (a temp file beside it, then a rename), creating its
    folder. For caches: returns False instead of raising when the disk refuses (read-only, full)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name[:16]}-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return False
    return True
