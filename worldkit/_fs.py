"""Filesystem helpers shared by everything that writes a directory tree."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from worldkit.errors import OutputExists


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(out: Path) -> None:
    """Remove temp siblings `.NAME.tmp-<pid>-…` left by processes that were killed."""
    for stale in out.parent.glob(f".{out.name}.tmp-*"):
        try:
            pid = int(stale.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if not _pid_alive(pid):
            shutil.rmtree(stale, ignore_errors=True)


@contextmanager
def atomic_directory(out: Path, *, force: bool = False) -> Iterator[Path]:
    """Build a directory in a hidden temp sibling and rename it onto `out` when the block succeeds.

    A non-empty `out` is refused unless `force`; on any failure (or a kill) `out` is untouched and
    no partial tree takes its place.
    """
    out = Path(out).absolute()
    if out.exists() and (not out.is_dir() or any(out.iterdir())) and not force:
        raise OutputExists(f"output directory {out} exists and is not empty; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    sweep_stale(out)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
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
