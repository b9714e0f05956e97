"""Process tuning, in one place: the cyclic garbage collector and forked workers' set-up.

Called only by code that owns its process: the CLI's entry point and commands, the servers' entry
points, the first function a forked worker runs (`start_forked_worker`, `die_with_parent`), and
the code that forks them (`freeze_for_forks`, then `thaw_all`). Library functions never
tune the process they are called in: a Python user's own heap and collector are theirs.

A program that has loaded a world keeps a few million objects for as long as it runs; the
collector would walk them again at every full collection and at exit, finding no garbage. So the
program freezes them (`freeze_process`), and forking code freezes what its children inherit
(`freeze_for_forks`), so their collections do not copy the shared pages one by one.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time

__all__ = [
    "default_stop_signals",
    "die_with_parent",
    "freeze_for_forks",
    "freeze_process",
    "start_forked_worker",
    "thaw_all",
]


def freeze_process() -> None:
    """Freeze everything alive for as long as the process runs (`gc.freeze`): a program's start-up,
    a forked worker's inheritance, a test worker's collection."""
    gc.freeze()


def thaw_all() -> None:
    """Unfreeze everything (`gc.unfreeze`), the process's own frozen set included."""
    gc.unfreeze()


def freeze_for_forks() -> None:
    """Before forking workers: what exists now is frozen (`gc.freeze`), so the children's collections
    leave those shared pages alone (no copy-on-write of the whole heap). The forking code calls
    `thaw_all` once its workers are started or done."""
    gc.freeze()


def die_with_parent(parent: int | None = None) -> None:
    """Make this (forked) process die when its parent does, even by kill -9: Linux's
    PR_SET_PDEATHSIG, and where `parent` is given, a watcher thread as well (the signal is tied to
    the thread that forked, not the process)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    expected = parent
    if expected is None:
        if os.getppid() == 1:  # the parent died before we got here
            os._exit(1)
        return
    if os.getppid() != expected:
        os._exit(137)

    def watch() -> None:
        while True:
            if os.getppid() != expected:
                os._exit(137)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def start_forked_worker() -> None:
    """A forked pool worker's first step: what it inherited out of its collector's sight (its
    collections then walk only what it allocates itself, not the loaded world, whose pages they would
    also copy), dying with its parent, and dying when its pool terminates it."""
    freeze_process()
    die_with_parent()
    default_stop_signals()


def default_stop_signals() -> None:
    """Put SIGTERM and SIGINT back to their defaults in a forked worker, and detach it from its
    parent's event loop. A worker inherits its parent's Python handlers: under an asyncio loop's
    handler (which only wakes the loop through a descriptor the child shares) a worker that
    `Pool.terminate` signals while it waits for the pool's task lock would never end, and the
    parent would wait for it forever."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        signal.set_wakeup_fd(-1)
    except ValueError:  # not the main thread: nothing was set here
        pass
