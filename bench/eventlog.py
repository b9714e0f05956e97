"""Event-log benchmark: hash-chained appends/s and replay/verify rate, on SQLite and PostgreSQL.

For each backend (a SQLite file; PostgreSQL in a throwaway schema if reachable) prints JSON lines:
- `appends`: one call per transaction through one `EventLog` (what an MCP server does), the same
  rows as plain un-chained inserts through the same driver connection as a baseline (ratio), and
  batched `append_many`;
- `concurrent`: several processes appending to one run at once (aggregate rate, chain checked);
- `replay`: a 100,000-event run read back, verified (`verify_chain`) and handed to a replayer
  (`state_changes`).
Figures are medians of `--repeats` runs. Targets (DESIGN §9): ≥ 5,000 appends/s on SQLite;
replay of 100,000 events in ≤ 10 s.

    python bench/eventlog.py [--events 100000] [--appends 5000] [--repeats 3] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from worldkit.store import EventLog, Store, list_runs, read_events, state_changes, verify_chain
from worldkit.store.eventlog import _prepare  # the same preparation the log does, for the baseline

PG_URL = os.environ.get("WORLDKIT_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
SEAT = "EMP-QC-001"


def call(n: int) -> dict[str, Any]:
    """A typical tool call: a read, with one mutation in ten."""
    if n % 10 == 9:
        return {
            "tool": "update_record",
            "arguments": {"id": f"DEV-{n:06d}", "status": "closed", "comment": "checked"},
            "outcome": "ok",
            "result_digest": f"{n:064x}",
            "state_change": {"op": "set_status", "id": f"DEV-{n:06d}", "status": "closed"},
        }
    return {
        "tool": "read_file",
        "arguments": {"path": f"qc/sop/SOP-{n % 500:04d}.md", "offset": 0, "length": 4096},
        "outcome": "ok",
        "result_digest": f"{n:064x}",
    }


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def bench_appends(store: Store, count: int, repeats: int) -> dict[str, Any]:
    single, plain, batched = [], [], []
    for k in range(repeats):
        calls = [call(n) for n in range(count)]
        with EventLog(store, f"appends-{k}-{uuid.uuid4().hex[:6]}", SEAT) as log:

            def one_by_one(log: EventLog = log) -> None:
                for c in calls:
                    log.append(**c)

            single.append(count / timed(one_by_one))
        plain.append(count / timed(lambda: plain_inserts(store, calls)))
        with EventLog(store, f"batched-{k}-{uuid.uuid4().hex[:6]}", SEAT) as log:
            batch = [call(n) for n in range(count * 4)]

            def in_batches(log: EventLog = log) -> None:
                for start in range(0, len(batch), 100):
                    log.append_many(batch[start : start + 100])  # type: ignore[arg-type]

            batched.append(len(batch) / timed(in_batches))
    return {
        "figure": "appends",
        "appends_per_s": round(statistics.median(single)),
        "baseline_plain_inserts_per_s": round(statistics.median(plain)),
        "ratio_to_plain_inserts": round(statistics.median(single) / statistics.median(plain), 3),
        "batched_appends_per_s": round(statistics.median(batched)),
        "batch_size": 100,
        "events_per_repeat": count,
    }


def plain_inserts(store: Store, calls: list[dict[str, Any]]) -> None:
    """Baseline: the same rows, one transaction each, no head lock, no hash, no triggers."""
    table = sa.Table("bench_plain", sa.MetaData(), sa.Column("n", sa.BigInteger, primary_key=True),
                     sa.Column("tool", sa.Text), sa.Column("arguments", sa.Text),
                     sa.Column("outcome", sa.Text), sa.Column("result_digest", sa.Text),
                     sa.Column("state_change", sa.Text), sa.Column("time", sa.Text))  # fmt: skip
    table.drop(store.engine, checkfirst=True)
    table.create(store.engine)
    insert = sa.insert(table).compile(dialect=store.engine.dialect)
    order = insert.positiontup if insert.positional else None
    with store.connect_for_writes() as conn:
        for n, c in enumerate(calls):
            row = _prepare(c["tool"], c["arguments"], c["outcome"], c["result_digest"], None,
                           c.get("state_change"))  # fmt: skip
            values = {**row, "n": n, "time": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z")}
            with conn.begin():
                cursor = conn.connection.driver_connection.cursor()
                cursor.execute(insert.string, tuple(values[k] for k in order) if order else values)
                cursor.close()
    table.drop(store.engine)


_WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from worldkit.store import EventLog, Store
    url, run_id, count, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    with Store.open(url) as store, EventLog(store, run_id, "EMP-QC-001") as log:
        while not go.exists():
            time.sleep(0.001)
        for n in range(count):
            log.append("read_file", {"path": f"f{n}"}, "ok", None)
    """
)


def bench_concurrent(url: str, processes: int, count: int, scratch: Path) -> dict[str, Any]:
    run_id = f"concurrent-{uuid.uuid4().hex[:6]}"
    go = scratch / f"go-{run_id}"
    workers = [
        subprocess.Popen([sys.executable, "-c", _WORKER, url, run_id, str(count), str(go)])
        for _ in range(processes)
    ]
    time.sleep(1.5)
    start = time.perf_counter()
    go.touch()
    for worker in workers:
        if worker.wait(timeout=600) != 0:
            raise SystemExit("a concurrent writer failed")
    elapsed = time.perf_counter() - start
    with Store.open(url) as store:
        report = verify_chain(store, run_id)
    return {
        "figure": "concurrent",
        "processes": processes,
        "events": report.events,
        "chain_ok": report.ok and report.events == processes * count,
        "appends_per_s": round(processes * count / elapsed),
    }


def bench_replay(store: Store, events: int, repeats: int) -> dict[str, Any]:
    run_id = f"replay-{uuid.uuid4().hex[:6]}"
    with EventLog(store, run_id, SEAT) as log:
        build = timed(
            lambda: [
                log.append_many([call(n) for n in range(start, min(start + 1000, events))])
                for start in range(0, events, 1000)
            ]
        )
    verify, replay, read = [], [], []
    for _ in range(repeats):
        verify.append(timed(lambda: verify_chain(store, run_id)))
        changes: list[Any] = []
        replay.append(timed(lambda: changes.extend(state_changes(store, run_id))))
        read.append(timed(lambda: sum(1 for _ in read_events(store, run_id))))
    assert verify_chain(store, run_id).ok and len(changes) == events // 10
    return {
        "figure": "replay",
        "events": events,
        "state_changes": len(changes),
        "build_s": round(build, 3),
        "verify_s": round(statistics.median(verify), 3),
        "replay_s": round(statistics.median(replay), 3),
        "read_s": round(statistics.median(read), 3),
        "verify_events_per_s": round(events / statistics.median(verify)),
        "replay_events_per_s": round(events / statistics.median(replay)),
        "runs_in_store": len(list_runs(store)),
    }


@contextmanager
def backends(scratch: Path, postgres: bool) -> Iterator[list[tuple[str, str | None, str]]]:
    sqlite = f"sqlite:///{scratch / 'bench.db'}"
    found: list[tuple[str, str | None, str]] = [("sqlite", sqlite, "")]
    schema = f"wk_bench_{uuid.uuid4().hex[:8]}"
    admin = None
    if postgres:
        try:
            admin = sa.create_engine(PG_URL)
            with admin.begin() as conn:
                conn.exec_driver_sql(f'CREATE SCHEMA "{schema}"')
            found.append(("postgresql", f"{PG_URL}?options=-csearch_path%3D{schema}", ""))
        except sa.exc.OperationalError as error:
            admin = None
            found.append(("postgresql", None, f"not reachable: {error.orig}"))
    try:
        yield found
    finally:
        if admin is not None:
            with admin.begin() as conn:
                conn.exec_driver_sql(f'DROP SCHEMA "{schema}" CASCADE')
            admin.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="events in the replay run")
    parser.add_argument("--appends", type=int, default=5_000, help="appends per timed repeat")
    parser.add_argument("--processes", type=int, default=4, help="concurrent writer processes")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, backends(Path(tmp), not args.no_postgres) as found:
        for backend, url, reason in found:
            head = {"bench": "eventlog", "backend": backend}
            if url is None:
                print(json.dumps({**head, "skipped": reason}), flush=True)
                continue
            with Store.open(url) as store:
                print(json.dumps({**head, **bench_appends(store, args.appends, args.repeats)}),
                      flush=True)  # fmt: skip
                concurrent = bench_concurrent(url, args.processes, args.appends // 4, Path(tmp))
                print(json.dumps({**head, **concurrent}), flush=True)
                print(json.dumps({**head, **bench_replay(store, args.events, args.repeats)}),
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
