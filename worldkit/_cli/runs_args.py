"""RUNS arguments of `worldkit report` and `worldkit export ledgers`: run folders, campaign
folders, record files, and stores (a database URL, or a SQLite store file)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

_SQLITE_MAGIC = b"SQLite format 3\x00"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def store_url(arg: str) -> str | None:
    """The store a RUNS argument names (a URL, or a SQLite database file), else None."""
    if _URL.match(arg):
        return arg
    try:
        with Path(arg).open("rb") as handle:
            return arg if handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC else None
    except OSError:
        return None


def split_runs(runs: Sequence[str] | None, store: str | None = None) -> tuple[list[Path], list[str]]:
    """The folders (or record files) and the stores among `runs`, plus `--store` if given.

    RUNS are taken as typed (strings, not paths): a path would fold a URL's `//`."""
    folders: list[Path] = []
    stores: list[str] = [store] if store else []
    for arg in runs or []:
        url = store_url(arg)
        if url is None:
            folders.append(Path(arg))
        else:
            stores.append(url)
    return folders, stores
