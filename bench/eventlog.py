"""Event-log benchmark: hash-chained appends/s and replay/verify rate, on SQLite and PostgreSQL.

For each backend (a SQLite file; PostgreSQL in a throwaway schema if reachable) prints JSON lines:
- `appends`: one call per commit through one `EventLog` (what an MCP server does: durable before
  the call is answered, anchored in a file), side by side with the baseline — the same calls as
  plain one-row insert-and-commit statements (no chain, no hash, no triggers) into a table keyed
  by an integer (on SQLite its rowid: one B-tree per insert) on the log's own driver connection
  (autocommit; so on SQLite the same WAL journal and `synchronous` setting, on PostgreSQL the
  same `synchronous_commit`, printed as `settings`) — and their `ratio` (target ≥ 0.8), the CPU
  ratio, and batched `append_many`. Timed blocks alternate log and baseline (which goes first
  alternates too); ratios are given over the summed times and as medians of block ratios;
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
from worldkit.store.times import now_text  # the log's own clock text: both sides pay the same for it
from worldkit.store.schema import events_table
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


def bench_appends(
    store: Store, count: int, repeats: int, scratch: Path, block: int = 50
) -> dict[str, Any]:
    """Log and baselines side by side on one connection: alternating blocks of `block` calls, so
    a busy machine slows all alike; each rate is calls over the summed wall time of its blocks."""
    single, plain, batched, cpu, same_rows = [], [], [], [], []
    pairs: list[float] = []  # plain time over log time, block by block
    cpu_pairs: list[float] = []  # the same in CPU time
    for k in range(repeats):
        calls = [call(n) for n in range(count)]
        run_id = f"appends-{k}-{uuid.uuid4().hex[:6]}"
        log_time = plain_time = log_cpu = plain_cpu = row_time = 0.0
        log = EventLog(store, run_id, SEAT, claim=True, anchor=scratch / f"{run_id}.json")
        # The baselines write through the log's own driver connection: one connection, one set of
        # settings, and none of them pays for noticing another connection's commits.
        with log, PlainInserts(store, driver=log._connection()) as baseline, \
                PlainInserts(store, same_row=True, driver=log._connection()) as same:  # fmt: skip
            for start in range(0, count, block):
                chunk = calls[start : start + block]

                def logged(chunk: list[dict[str, Any]] = chunk) -> None:
                    for c in chunk:
                        log.record(**c)  # what the servers call: durable, returns (seq, hash)

                def inserted(chunk: list[dict[str, Any]] = chunk, start: int = start) -> None:
                    baseline.insert(chunk, start)

                # Which side goes first alternates block by block: a cost that falls on the
                # first (or second) block of a pair, e.g. a WAL checkpoint, falls on both alike.
                sides = [logged, inserted] if (start // block) % 2 == 0 else [inserted, logged]
                spent = {}
                for side in sides:
                    begin, begin_cpu = time.perf_counter(), time.process_time()
                    side()
                    spent[side] = (time.perf_counter() - begin, time.process_time() - begin_cpu)
                (wall_log, cpu_log), (wall_plain, cpu_plain) = spent[logged], spent[inserted]
                log_time += wall_log
                plain_time += wall_plain
                pairs.append(wall_plain / wall_log)
                log_cpu += cpu_log
                plain_cpu += cpu_plain
                if cpu_log > 0:
                    cpu_pairs.append(cpu_plain / cpu_log)
                then = time.perf_counter()
                same.insert(chunk, start)
                row_time += time.perf_counter() - then
        single.append(count / log_time)
        plain.append(count / plain_time)
        cpu.append(plain_cpu / log_cpu if log_cpu else float("nan"))
        same_rows.append(count / row_time)
        assert verify_chain(store, run_id).events == count
        with EventLog(store, f"batched-{k}-{uuid.uuid4().hex[:6]}", SEAT) as log:
            batch = [call(n) for n in range(count * 4)]

            def in_batches(log: EventLog = log) -> None:
                for start in range(0, len(batch), 100):
                    log.append_many(batch[start : start + 100])  # type: ignore[arg-type]

            batched.append(len(batch) / timed(in_batches))
    ratios = [a / b for a, b in zip(single, plain, strict=True)]
    return {
        "figure": "appends",
        "settings": durability_settings(store),
        "appends_per_s": round(statistics.median(single)),
        "baseline_plain_inserts_per_s": round(statistics.median(plain)),
        "ratio_to_plain_inserts": round(statistics.median(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
        # The same ratio block by block (median over all blocks of all repeats): a stall that
        # lands in one side's block (another process's fsync, a WAL checkpoint) moves one pair.
        "ratio_block_median": round(statistics.median(pairs), 3),
        "blocks": len(pairs),
        # This process's CPU time per call, baseline over log: on SQLite (in-process, no fsync
        # under synchronous=NORMAL) the whole cost of a commit, unaffected by other load.
        "cpu_ratio": round(statistics.median(cpu), 3),
        "cpu_ratio_block_median": round(statistics.median(cpu_pairs), 3) if cpu_pairs else None,
        "block": block,
        "baseline_same_row_inserts_per_s": round(statistics.median(same_rows)),
        "ratio_to_same_row_inserts": round(
            statistics.median([a / b for a, b in zip(single, same_rows, strict=True)]), 3
        ),
        "batched_appends_per_s": round(statistics.median(batched)),
        "batch_size": 100,
        "events_per_repeat": count,
    }


class PlainInserts:
    """Baseline: the same calls, one insert-and-commit each, no chain, no hash, no triggers,
    on a driver connection of the store's engine in the log's own (autocommit) mode.

    `same_row=False`: the call's own columns (tool, arguments, outcome, digest, change, time) in a
    minimal table keyed by its rowid — the baseline of the figure. `same_row=True`: a row of
    exactly the event's columns and widths, in a table laid out like `log_events` on this backend
    (on SQLite keyed by the integer `event_key`, on PostgreSQL by run and seq) but without checks
    or guards, with fixed 64-hex placeholders where the log stores hashes: what is left between it
    and the log is the integrity work (hashing, checks, chain guard, anchor)."""

    def __init__(self, store: Store, *, same_row: bool = False, driver: Any = None) -> None:
        self.store = store
        self.same_row = same_row
        self.shared = driver  # the log's own connection: no second connection's commits to notice
        name = f"bench_{'row' if same_row else 'plain'}_{uuid.uuid4().hex[:8]}"
        if same_row:
            layout = events_table(store.engine.dialect)
            self.table = sa.Table(
                name, sa.MetaData(),
                *[sa.Column(c.name, c.type, primary_key=c.primary_key, nullable=c.nullable, autoincrement=False)
                  for c in layout.c],
            )  # fmt: skip
        else:
            self.table = sa.Table(
                name, sa.MetaData(),
                # INTEGER on SQLite: the rowid itself, one B-tree per insert (BIGINT would add an index).
                sa.Column("n", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True),
                sa.Column("tool", sa.Text),
                sa.Column("arguments", sa.Text), sa.Column("outcome", sa.Text),
                sa.Column("result_digest", sa.Text), sa.Column("state_change", sa.Text),
                sa.Column("time", sa.Text),
            )  # fmt: skip

    def __enter__(self) -> PlainInserts:
        self.table.create(self.store.engine)
        compiled = sa.insert(self.table).compile(dialect=self.store.engine.dialect)
        self.sql = compiled.string
        self.order = compiled.positiontup if compiled.positional else None
        if self.shared is not None:
            self.raw, self.driver = None, self.shared
            return self
        self.raw = self.store.engine.raw_connection()
        self.driver = self.raw.driver_connection
        if self.store.backend == "postgresql":
            self.driver.autocommit = True  # each statement commits: the log's own mode
        else:
            self.driver.isolation_level = None
        return self

    def insert(self, calls: list[dict[str, Any]], first: int) -> None:
        for n, c in enumerate(calls, start=first):
            row = _prepare(c["tool"], c["arguments"], c["outcome"], c["result_digest"], None,
                           c.get("state_change"))  # fmt: skip
            values = {**row, "n": n, "time": now_text()}
            if self.same_row:
                values.update(run_id="bench-same-row", seq=n + 1, version=2, seat=SEAT, session="0" * 32,
                              prev_hash="0" * 64, hash="f" * 64, id=(1 << 32) + n + 1)  # fmt: skip
            params = tuple(values[k] for k in self.order) if self.order else values
            self.driver.execute(self.sql, params)

    def __exit__(self, *exc: object) -> None:
        if self.raw is not None:
            if self.store.backend == "postgresql":
                self.driver.autocommit = False
            self.raw.close()
        self.table.drop(self.store.engine)


def durability_settings(store: Store) -> dict[str, str]:
    """The settings that decide what a commit costs, shared by the log and the baseline."""
    with store.engine.connect() as conn:
        if store.backend == "postgresql":
            names = ("synchronous_commit", "fsync", "wal_sync_method")
            return {name: conn.exec_driver_sql(f"SHOW {name}").scalar() for name in names}
        levels = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}
        return {
            "journal_mode": conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            "synchronous": levels[conn.exec_driver_sql("PRAGMA synchronous").scalar()],
        }


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
    parser.add_argument("--appends-only", action="store_true", help="only the `appends` figure")
    parser.add_argument("--block", type=int, default=50, help="calls per timed block of `appends`")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, backends(Path(tmp), not args.no_postgres) as found:
        for backend, url, reason in found:
            head = {"bench": "eventlog", "backend": backend}
            if url is None:
                print(json.dumps({**head, "skipped": reason}), flush=True)
                continue
            with Store.open(url) as store:
                print(json.dumps({**head, **bench_appends(store, args.appends, args.repeats, Path(tmp), args.block)}),
                      flush=True)  # fmt: skip
                if args.appends_only:
                    continue
                concurrent = bench_concurrent(url, args.processes, args.appends // 4, Path(tmp))
                print(json.dumps({**head, **concurrent}), flush=True)
                print(json.dumps({**head, **bench_replay(store, args.events, args.repeats)}),
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
