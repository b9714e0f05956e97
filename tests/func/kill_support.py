"""Drive a worldkit MCP server (a subprocess over stdio, real SDK client) and kill -9 it mid-work."""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

Call = tuple[str, dict[str, Any]]


def server_params(argv: list[str], pidfile: Path, cwd: Path) -> StdioServerParameters:
    """`python -m worldkit ARGV` whose pid lands in `pidfile` (sh execs it: same process)."""
    return StdioServerParameters(
        command="/bin/sh",
        args=["-c", 'echo $$ > "$0"; exec "$@"', str(pidfile), sys.executable, "-m", "worldkit", *argv],
        env={"PYTHONPATH": os.pathsep.join(sys.path), "PATH": os.environ.get("PATH", "")},
        cwd=str(cwd),
    )


def _pid(pidfile: Path) -> int:
    for _ in range(500):
        text = pidfile.read_text().strip() if pidfile.exists() else ""
        if text:
            return int(text)
        time.sleep(0.01)
    raise AssertionError(f"the server never wrote {pidfile}")


def drive_and_kill(
    params: StdioServerParameters,
    pidfile: Path,
    next_call: Callable[[int], Call],
    *,
    rng: random.Random,
    kill_after: tuple[float, float] = (0.05, 0.6),
    before: Callable[[Client], Awaitable[None]] | None = None,
) -> list[Call]:
    """Call tools one after another until the server is killed (SIGKILL, at a random moment
    after the first answer); return the calls that were answered, in order."""
    answered: list[Call] = []
    delay = rng.uniform(*kill_after)

    async def session() -> None:
        async with Client(params) as client:
            if before is not None:
                await before(client)
            pid = _pid(pidfile)
            async with anyio.create_task_group() as group:

                async def killer() -> None:
                    while not answered:
                        await anyio.sleep(0.005)
                    await anyio.sleep(delay)
                    os.kill(pid, signal.SIGKILL)

                group.start_soon(killer)
                n = 0
                try:
                    while True:
                        call = next_call(n)
                        result = await client.call_tool(*call)
                        if result.is_error:
                            raise AssertionError(f"call {call} failed: {result.content}")
                        answered.append(call)
                        n += 1
                except AssertionError:
                    raise
                except Exception:  # noqa: BLE001 - the server died under the call
                    pass

    try:
        anyio.run(session)
    except AssertionError:
        raise
    except BaseException as error:  # noqa: BLE001 - closing a client whose server was killed
        if isinstance(error, KeyboardInterrupt):
            raise
        if isinstance(error, BaseExceptionGroup):
            asserts = error.subgroup(AssertionError)
            if asserts is not None:
                raise asserts.exceptions[0] from error
    _wait_dead(_pid(pidfile))
    return answered


def _wait_dead(pid: int) -> None:
    for _ in range(500):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return
        if state in ("Z", "X"):
            return
        time.sleep(0.01)
    raise AssertionError(f"server {pid} survived SIGKILL")
