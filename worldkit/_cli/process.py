"""Whether a command owns its process: `worldkit` run as a program (`main`), which ends after the
command, or `run()` called inside another program (a test, a notebook), which goes on after it.

What only pays in a process that is about to end — freezing the heap for good, forking office
renderers that take their caches with them — is done only in the first."""

from __future__ import annotations

_owned = {"process": False}


def claim_process() -> None:
    """Record that the running command is the program (`worldkit._cli.main.main` calls this)."""
    _owned["process"] = True


def owns_process() -> bool:
    """Whether the process ends when this command does."""
    return _owned["process"]
