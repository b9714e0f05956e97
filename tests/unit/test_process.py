"""`worldkit._process`: the collector and forked workers' set-up, for code that owns its process."""

from __future__ import annotations

import ast
import gc
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from worldkit._process import die_with_parent, freeze_for_forks, freeze_process, start_forked_worker, thaw_all
from worldkit.materialize import materialize
from worldkit.world.synthetic import write_synthetic_world

PACKAGE = Path(__file__).resolve().parents[2] / "worldkit"

# Code that owns its process, or forks workers and runs their first step: the only users of
# `worldkit._process`, each with the reason it may tune the process.
OWNERS = {
    "worldkit._cli": "the program's entry point and commands",
    "worldkit.mcp.stdio": "`run_stdio` serves on the process's own stdin/stdout until it ends",
    "worldkit.materialize.write": "forks the office-rendering workers (`start_forked_worker`)",
    "worldkit.verify.schedule": "forks the check workers",
    "worldkit.verify.fanout": "forks the rebuild children",
    "worldkit.campaign.executor": "a campaign worker process's main function",
}
GC_CALLS = {"freeze", "unfreeze", "disable", "enable", "set_threshold"}


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        found.append((name, ast.parse(path.read_text(), str(path))))
    return found


def _owner(module: str) -> bool:
    return any(module == o or module.startswith(o + ".") for o in OWNERS)


def test_only_the_process_owners_import_the_process_tuning() -> None:
    users = set()
    for name, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "worldkit._process":
                users.add(name)
            elif isinstance(node, ast.Import) and any(a.name == "worldkit._process" for a in node.names):
                users.add(name)
    assert users, "nothing uses worldkit._process: the test is looking in the wrong place"
    assert {u for u in users if not _owner(u)} == set()


def test_no_library_module_tunes_the_collector_itself() -> None:
    tuned = []
    for name, tree in _modules():
        if name == "worldkit._process" or _owner(name):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "gc"
                    and node.attr in GC_CALLS):
                tuned.append(f"{name}: gc.{node.attr}")
    # the world cache pauses the collector around one unpickle and restores it: scoped, not tuning
    assert sorted(tuned) == ["worldkit.world.cache: gc.disable", "worldkit.world.cache: gc.enable"]


def test_materialize_in_process_freezes_nothing_of_the_callers_heap(tmp_path: Path) -> None:
    world = write_synthetic_world(tmp_path / "w", 30)
    frozen = gc.get_freeze_count()
    thaw_all()
    try:
        materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / "out")
        assert gc.get_freeze_count() == 0
        assert gc.isenabled()
    finally:
        if frozen:
            freeze_process()


def test_freeze_for_forks_then_thaw_all() -> None:
    frozen = gc.get_freeze_count()
    try:
        freeze_for_forks()
        assert gc.get_freeze_count() > 0
        thaw_all()
        assert gc.get_freeze_count() == 0
    finally:
        if frozen:
            freeze_process()


def _in_child(work) -> int:  # noqa: ANN001 - a callable run in a forked child; its exit status back
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os._exit(work())
        except BaseException:  # noqa: BLE001
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_forked_worker_freezes_what_it_inherited() -> None:
    def work() -> int:
        thaw_all()
        start_forked_worker()
        return 0 if gc.get_freeze_count() > 0 else 1

    assert _in_child(work) == 0


def test_a_worker_whose_parent_is_gone_exits() -> None:
    def work() -> int:
        die_with_parent(os.getppid() + 100_000)  # not its parent: as if the coordinator had died
        return 0

    assert _in_child(work) == 137


@pytest.mark.skipif(not os.uname().sysname == "Linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_a_worker_dies_with_its_killed_parent(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"

    def parent() -> int:
        pid = os.fork()
        if pid == 0:  # the worker
            die_with_parent()
            marker.write_text(str(os.getpid()))
            time.sleep(60)
            os._exit(0)
        time.sleep(60)
        return 0

    pid = os.fork()
    if pid == 0:  # pragma: no cover
        os._exit(parent())
    for _ in range(200):
        if marker.exists() and marker.read_text():
            break
        time.sleep(0.02)
    worker = int(marker.read_text())
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for _ in range(250):
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    os.kill(worker, signal.SIGKILL)
    pytest.fail("the worker outlived its killed parent")


_TERMINATE_UNDER_A_LOOP_HANDLER = """
import asyncio, multiprocessing, signal, sys, time
from worldkit._process import start_forked_worker

def wait_forever(_):
    time.sleep(3600)

loop = asyncio.new_event_loop()
loop.add_signal_handler(signal.SIGTERM, lambda: None)  # what an event loop's owner leaves installed
pool = multiprocessing.get_context("fork").Pool(2, initializer=start_forked_worker)
pool.map_async(wait_forever, range(4))
time.sleep(0.5)
pool.terminate()  # holds the task lock, then SIGTERMs workers waiting for it
pool.join()
print("terminated")
"""


def test_a_forked_worker_ends_when_its_pool_terminates_it_under_an_event_loops_handler() -> None:
    # A worker inherits its parent's Python handlers; under an asyncio loop's SIGTERM handler a
    # worker waiting for the pool's task lock ignored Pool.terminate and its parent waited forever.
    done = subprocess.run([sys.executable, "-c", _TERMINATE_UNDER_A_LOOP_HANDLER], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "terminated"
