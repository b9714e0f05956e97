"""Run independent jobs in forked child processes, a few jobs per child, and hand the results back in order.

The mutation campaign draws each mutation in this process (its random choices must follow one
another) and verifies it in a child forked right after the draw (of it and the others of its
batch), so the child inherits everything built before it — the loaded world, the baseline's
rebuilds and staged packages, the injected hooks — without pickling any of it. At most `jobs`
children run at once, and this process draws the next jobs while they run. A child runs its batch
one job after another and returns one JSON list; results are handed to `done` in the order the
jobs were drawn, so the outcome is the same as running them one after another (which is what
`jobs=1` does, in this process).

A child writes only what its job writes, never to this process's output streams (they are
replaced by /dev/null in the child: another thread, such as a progress bar's, may hold their locks
at fork time; and a `--json` report on stdout must stay exactly the report), and leaves with
`os._exit`, so no cleanup that belongs to this process runs twice.
"""

from __future__ import annotations

import json
import os
import pickle
import selectors
import signal
import sys
import traceback
from collections.abc import Callable, Iterable
from typing import Any, NoReturn, TypeVar

from worldkit._process import die_with_parent, freeze_for_forks, thaw_all
from worldkit.errors import ExitCode, WorldkitError

T = TypeVar("T")


class ChildFailed(WorldkitError):
    """A forked child crashed or was killed before returning its job's result."""


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


def fork_map(items: Iterable[T], work: Callable[[T], dict[str, Any]], jobs: int,
             done: Callable[[int, dict[str, Any]], None], batch: int | Callable[[int], int] = 1) -> None:
    """`done(n, work(item_n))` for every item, in order; `work` runs in up to `jobs` forked children.

    `items` is iterated in this process, lazily: the next item is drawn while children run. Each
    child takes up to `batch` items, one after another (as `jobs=1` does here): fewer forks, and
    the pages a child copies on write are copied once per batch, not once per item (`batch` may be
    a function of the number of items started so far: smaller batches near the end). A
    WorldkitError raised by `work` in a child is raised here again (same message); any other
    exception becomes a `ChildFailed` carrying the child's traceback."""
    if jobs <= 1 or not can_fork():
        for n, item in enumerate(items):
            done(n, work(item))
        return
    size = batch if callable(batch) else (lambda _started: batch)
    started = 0
    source = iter(items)
    ahead: list[tuple[int, T]] = []
    running: dict[int, tuple[int, int, list[bytes]]] = {}  # fd → (first n, pid, chunks)
    finished: dict[int, dict[str, Any]] = {}
    selector = selectors.DefaultSelector()
    drawn = emitted = 0
    exhausted = False

    def draw() -> None:
        nonlocal drawn, exhausted
        try:
            ahead.append((drawn, next(source)))
            drawn += 1
        except StopIteration:
            exhausted = True

    try:
        while True:
            while len(running) < jobs and (ahead or not exhausted):
                wanted = max(1, size(started))
                if len(ahead) < wanted and not exhausted:
                    draw()
                    continue
                n = ahead[0][0]
                group = [item for _, item in ahead[:wanted]]
                del ahead[:wanted]
                started += len(group)
                fd, pid = _start(work, group, running)
                running[fd] = (n, pid, [])
                selector.register(fd, selectors.EVENT_READ)
            if len(ahead) < max(1, size(started)) and not exhausted:
                draw()  # the next job is ready when a child finishes
            if not running:
                break
            for key, _ in selector.select():
                fd = int(key.fd)
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    running[fd][2].append(chunk)
                    continue
                selector.unregister(fd)
                os.close(fd)
                n, pid, chunks = running.pop(fd)
                for offset, row in enumerate(_result(pid, b"".join(chunks))):
                    finished[n + offset] = row
            while emitted in finished:
                done(emitted, finished.pop(emitted))
                emitted += 1
    finally:
        for fd, (_, pid, _) in running.items():
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            os.close(fd)
        selector.close()


def _start(work: Callable[[T], dict[str, Any]], items: list[T], running: dict[int, Any]) -> tuple[int, int]:
    return _fork(lambda: json.dumps({"ok": [work(item) for item in items]}).encode(),
                 lambda failure: json.dumps(failure).encode(), close=list(running))


def _fork(run: Callable[[], bytes], failed: Callable[[dict[str, Any]], bytes],
          close: Iterable[int] = ()) -> tuple[int, int]:
    """(read end of a pipe, pid) of a forked child that writes `run()` — or `failed(_failure(error))`
    if it raises — into the pipe and leaves with `os._exit`, its output streams on /dev/null and the
    descriptors `close` (other children's pipes) closed."""
    read, write = os.pipe()
    freeze_for_forks()  # what exists now is shared with the child: its collector leaves those pages alone
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (its coverage is not collected)
        code = 1
        payload = b""
        try:
            os.close(read)
            for fd in close:
                os.close(fd)
            die_with_parent()
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives until os._exit
            os.dup2(sys.stdout.fileno(), 1)  # nor may anything it starts print into this process's output
            payload = run()
            code = 0
        except BaseException as error:  # noqa: BLE001 - every failure is reported to the parent
            payload = failed(_failure(error))
        finally:
            view = memoryview(payload)
            while view:
                view = view[os.write(write, view):]
            os._exit(code)
    thaw_all()
    os.close(write)
    return read, pid


def _result(pid: int, raw: bytes) -> list[dict[str, Any]]:
    _, status = os.waitpid(pid, 0)
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if isinstance(body, dict) and "ok" in body:
        return body["ok"]
    _raise(body, status)


def _raise(body: Any, status: int) -> NoReturn:
    """Raise here what a child reported (`body`: its error, or None if it left none)."""
    if isinstance(body, dict) and body.get("worldkit"):
        error = WorldkitError(body["message"])
        error.exit_code = ExitCode(body["exit_code"])
        raise error
    why = body["trace"] if isinstance(body, dict) else f"it exited with status {status} and no result"
    raise ChildFailed(f"a forked mutation worker failed: {why}; run with one job (WORLDKIT_VERIFY_JOBS=1) to see it here")


def _failure(error: BaseException) -> dict[str, Any]:
    return {
        "error": type(error).__name__,
        "worldkit": isinstance(error, WorldkitError),
        "exit_code": int(getattr(error, "exit_code", 4)),
        "message": getattr(error, "message", str(error)),
        "trace": traceback.format_exc(),
    }


def fork_call(work: Callable[[], T]) -> Callable[[], T]:
    """Start `work()` in a forked child now, and return what waits for its result (pickled back).

    For set-up work that runs beside this process's own: the child inherits everything built so
    far and shares nothing it builds. Errors come back as `fork_map`'s do."""
    read, pid = _fork(lambda: pickle.dumps(("ok", work())), lambda failure: pickle.dumps(("error", failure)))

    def result() -> T:
        chunks = []
        try:
            while chunk := os.read(read, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(read)
        _, status = os.waitpid(pid, 0)
        try:
            kind, body = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - a child that died before writing its result
            kind, body = "error", None
        if kind == "ok":
            return body  # type: ignore[no-any-return]
        _raise(body, status)

    return result
