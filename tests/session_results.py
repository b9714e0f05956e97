"""Expensive, read-only results made once per test session and shared by every xdist worker.

A module-scoped fixture is made once per worker that runs one of the module's tests; under
`--dist worksteal` a module's tests can land on both workers (and a stolen tail on a third
hand-out), so the same minute-long CLI run was made two or three times. `session_folder(name,
make)` makes it once: the first process to ask calls `make(folder)` under a file lock, the others
wait for it and read the same folder. The folders live under `$WORLDKIT_TEST_SESSION`, a fresh
directory per session (tests/conftest.py), so a result is never older than the session's code and
data; callers must treat the folder as read-only.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV = "WORLDKIT_TEST_SESSION"
_DONE = ".complete"


def session_folder(name: str, make: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `make` once per session (outside a session: a fresh one)."""
    base = os.environ.get(ENV)
    if not base:  # not under the suite's conftest: nothing to share with
        folder = Path(tempfile.mkdtemp(prefix=f"worldkit-{name}-"))
        make(folder)
        return folder
    folder = Path(base) / name
    with open(Path(base) / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / _DONE).is_file():
            shutil.rmtree(folder, ignore_errors=True)  # a failed attempt: make it again (and fail again)
            folder.mkdir()
            make(folder)
            (folder / _DONE).touch()
    return folder
