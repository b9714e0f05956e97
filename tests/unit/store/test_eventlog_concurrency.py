"""Concurrent writers (threads, processes; one run or many) lose no event and break no chain."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from worldkit.store import EventLog, Store, list_runs, read_events, verify_chain

SEAT = "EMP-QC-001"


def _run_threads(count: int, target) -> None:
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def body(index: int) -> None:
        try:
            barrier.wait()
            target(index)
        except BaseException as error:  # noqa: BLE001 - re-raised in the test thread below
            errors.append(error)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _assert_complete(store: Store, run_id: str, writers: int, per_writer: int) -> None:
    report = verify_chain(store, run_id)
    assert report.ok, report.message
    assert report.events == writers * per_writer
    events = list(read_events(store, run_id))
    assert [e.seq for e in events] == list(range(1, writers * per_writer + 1))
    seen = Counter((e.arguments["writer"], e.arguments["n"]) for e in events)
    assert set(seen.values()) == {1}
    assert len(seen) == writers * per_writer
    for writer in range(writers):  # each writer's own events keep their order
        mine = [e.arguments["n"] for e in events if e.arguments["writer"] == writer]
        assert mine == sorted(mine)


def test_threads_with_their_own_logs_share_one_run(store: Store) -> None:
    writers, per_writer = 8, 60

    def write(index: int) -> None:
        with EventLog(store, "shared", SEAT) as log:
            for n in range(per_writer):
                log.append("read_file", {"writer": index, "n": n}, "ok", None)

    _run_threads(writers, write)
    _assert_complete(store, "shared", writers, per_writer)


def test_threads_sharing_one_log_object(store: Store) -> None:
    writers, per_writer = 6, 50
    with EventLog(store, "shared", SEAT) as log:

        def write(index: int) -> None:
            for n in range(0, per_writer, 2):
                log.append("read_file", {"writer": index, "n": n}, "ok", None)
                second = {"writer": index, "n": n + 1}
                log.append_many([{"tool": "read_file", "arguments": second, "outcome": "ok"}])

        _run_threads(writers, write)
    _assert_complete(store, "shared", writers, per_writer)


def test_many_runs_interleaved_in_one_store(store: Store) -> None:
    runs, writers_per_run, per_writer = 5, 2, 40

    def write(index: int) -> None:
        run_id = f"run-{index % runs}"
        with EventLog(store, run_id, f"SEAT-{index % runs}") as log:
            for n in range(per_writer):
                log.append("search_files", {"writer": index // runs, "n": n}, "ok", None)

    _run_threads(runs * writers_per_run, write)
    summaries = {run.run_id: run for run in list_runs(store)}
    assert set(summaries) == {f"run-{i}" for i in range(runs)}
    for i in range(runs):
        assert summaries[f"run-{i}"].seat == f"SEAT-{i}"
        _assert_complete(store, f"run-{i}", writers_per_run, per_writer)


_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from worldkit.store import EventLog, Store

    url, writer, count, go = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    with Store.open(url) as store, EventLog(store, "multi", "EMP-QC-001") as log:
        while not go.exists():
            time.sleep(0.005)
        for n in range(0, count, 4):
            log.append("read_file", {"writer": writer, "n": n}, "ok", None)
            log.append_many(
                [{"tool": "read_file", "outcome": "ok",
                  "arguments": {"writer": writer, "n": n + k}} for k in (1, 2, 3)]
            )
    """
)


@pytest.mark.slow
def test_several_processes_append_to_one_run(store: Store, store_url: str, tmp_path: Path) -> None:
    processes, per_process = 4, 120
    go = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, store_url, str(i), str(per_process), str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    time.sleep(1.0)  # let every worker open its log, then release them at once
    go.touch()
    for worker in workers:
        _, stderr = worker.communicate(timeout=120)
        assert worker.returncode == 0, stderr
    _assert_complete(store, "multi", processes, per_process)


@pytest.mark.slow
def test_processes_on_different_runs_in_one_store(
    store: Store, store_url: str, tmp_path: Path
) -> None:
    writers = 3
    worker = _WORKER.replace('"multi"', "f'multi-{writer}'")
    go = tmp_path / "go"
    go.touch()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", worker, store_url, str(i), "40", str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(writers)
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    for i in range(writers):
        report = verify_chain(store, f"multi-{i}")
        assert report.ok and report.events == 40


@pytest.mark.slow
def test_processes_opening_a_fresh_store_at_once(store_url: str, tmp_path: Path) -> None:
    worker = _WORKER.replace('"multi"', "f'first-{writer}'")
    go = tmp_path / "go"
    go.touch()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", worker, store_url, str(i), "8", str(go)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for proc in procs:
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    with Store.open(store_url) as store:
        assert sorted(run.run_id for run in list_runs(store)) == [f"first-{i}" for i in range(4)]
