"""MCP benchmark: tool-call latency over stdio, search over 10,000 files, replay rate.

Prints JSON lines:
- `stdio_read` / `stdio_search`: per-call latency (median, p99, ms) of `worldkit serve` (seat
  EMP-QC-001 of the demo world, rev r2, 2026-03-02; every call logged to a SQLite event log) and,
  in the same run through the same Python client, of the reference filesystem MCP server
  (`@modelcontextprotocol/server-filesystem`, installed by `npm ci` in bench/) serving the same
  projection's `files/`. Reads are the same files; the reference server's `search_files` matches
  file names by glob while worldkit's searches contents, so the search row is context, not a race.
- `search_10k`: `search_files` (literal and ranked) over a 10,000-file synthetic projection,
  in-process and over stdio.
- `log_appends`: event-log appends/s, one transaction per call and as the server logs (group commit).
- `replay`: `replay_run` over a run of `--replay-events` events (one in ten a state change).
Targets (DESIGN §9): stdio latency no worse than the reference server on the same reads; search
over 10,000 records ≤ 50 ms; replay of 100,000 events ≤ 10 s.

    python bench/mcp.py [--calls 500] [--repeats 3] [--search-files 10000] [--replay-events 100000]
                        [--no-reference] [--projection DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Run as `python bench/mcp.py`, bench/ comes first on sys.path and this file would shadow the
# `mcp` SDK it benchmarks: take bench/ off the path before importing it.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402

from worldkit.materialize import materialize  # noqa: E402
from worldkit.mcp.replay import replay_run  # noqa: E402
from worldkit.mcp.seat import SeatView, default_tool_config  # noqa: E402
from worldkit.mcp.state import MemoryWorkspace, SeatState  # noqa: E402
from worldkit.overlay.toolconfig import UpdateRecords, WriteFiles  # noqa: E402
from worldkit.store import EventLog, Store  # noqa: E402
from worldkit.world.synthetic import write_synthetic_world  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
REFERENCE = BENCH / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
DEMO = ("pharmaco_demo", "r2", "2026-03-02", "EMP-QC-001")
QUERIES = ["RVX-2401", "stability", "assay", "SOP-QC-014", "humidity", "pull window", "budget", "deviation"]


def emit(row: dict[str, Any]) -> None:
    print(json.dumps(row, sort_keys=True), flush=True)


def summary(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {
        "median_ms": round(statistics.median(ms), 3),
        "p99_ms": round(statistics.quantiles(ms, n=100)[98] if len(ms) >= 2 else ms[0], 3),
        "calls": len(ms),
    }


async def timed_calls(client: Client, calls: list[tuple[str, dict[str, Any]]], warmup: int = 20) -> list[float]:
    for name, arguments in calls[:warmup]:
        await client.call_tool(name, arguments)
    samples = []
    for name, arguments in calls:
        start = time.perf_counter()
        result = await client.call_tool(name, arguments)
        samples.append(time.perf_counter() - start)
        if result.is_error:
            raise RuntimeError(f"{name} {arguments} failed: {result.content}")
    return samples


def worldkit_params(projection: Path, store: Path, run_id: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "worldkit", "serve", "--projection", str(projection), "--store", f"sqlite:///{store}",
              "--run-id", run_id],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(REPO),
    )


async def session(params: StdioServerParameters, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async with Client(params, mode="legacy") as client:  # the reference server predates 2026-07-28
        return await work(client)


def files_of(projection: Path) -> list[str]:
    root = projection / "files"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def bench_stdio(projection: Path, tmp: Path, n: int, reference: bool, repeats: int) -> None:
    """Alternate worldkit and reference sessions `repeats` times; report medians over the repeats."""
    files = files_of(projection)
    root = (projection / "files").resolve()
    ours = {
        "read": [("read_file", {"path": files[i % len(files)]}) for i in range(n)],
        "search_literal": [("search_files", {"query": QUERIES[i % len(QUERIES)]}) for i in range(n)],
        "search_ranked": [("search_files", {"query": QUERIES[i % len(QUERIES)], "mode": "ranked"}) for i in range(n)],
    }
    theirs = {
        "read": [("read_text_file", {"path": str(root / files[i % len(files)])}) for i in range(n)],
        "search_name_glob": [("search_files", {"path": str(root), "pattern": f"**/*{QUERIES[i % 3]}*"}) for i in range(n)],
    }

    def measure(calls: dict[str, list[tuple[str, dict[str, Any]]]]) -> Callable[[Client], Awaitable[dict[str, Any]]]:
        async def work(client: Client) -> dict[str, Any]:
            return {name: summary(await timed_calls(client, batch)) for name, batch in calls.items()}

        return work

    node = StdioServerParameters(command=shutil.which("node") or "node", args=[str(REFERENCE), str(root)])
    wk_runs, ref_runs = [], []
    for k in range(repeats):
        wk_runs.append(anyio.run(session, worldkit_params(projection, tmp / "bench.db", f"bench-stdio-{k}"), measure(ours)))
        if reference:
            ref_runs.append(anyio.run(session, node, measure(theirs)))

    def merged(runs: list[dict[str, Any]], name: str) -> dict[str, Any]:
        return {
            "median_ms": round(statistics.median(r[name]["median_ms"] for r in runs), 3),
            "p99_ms": round(statistics.median(r[name]["p99_ms"] for r in runs), 3),
            "calls": sum(r[name]["calls"] for r in runs),
            "repeats": len(runs),
        }

    row: dict[str, Any] = {"figure": "stdio_read", "files": len(files), "worldkit": merged(wk_runs, "read")}
    if ref_runs:
        row["reference_filesystem"] = merged(ref_runs, "read")
        for stat in ("median_ms", "p99_ms"):
            ratio = row["worldkit"][stat] / row["reference_filesystem"][stat]
            row[f"ratio_{stat[:-3]}_worldkit_to_reference"] = round(ratio, 3)
    emit(row)
    row = {
        "figure": "stdio_search",
        "worldkit_literal": merged(wk_runs, "search_literal"),
        "worldkit_ranked": merged(wk_runs, "search_ranked"),
    }
    if ref_runs:
        row["reference_filesystem_name_glob"] = merged(ref_runs, "search_name_glob")
    emit(row)


def bench_search(tmp: Path, n_files: int, n: int) -> None:
    world = write_synthetic_world(tmp / "synthetic", n_files)
    seat = json.loads(json.dumps(_only_seat(world)))
    start = time.perf_counter()
    projection = materialize(world, "r1", "2026-01-01", seat, tmp / "synthetic-projection").out
    materialized = time.perf_counter() - start
    start = time.perf_counter()
    view = SeatView(projection, default_tool_config(projection))
    loaded = time.perf_counter() - start
    queries = ["media fill", "calibration", "escalated by QA", "item 4242", "CAPA effectiveness", "day 13", "zzz-no-match"]
    rows: dict[str, Any] = {"figure": "search_10k", "files": len(view.files), "materialize_s": round(materialized, 2),
                            "server_load_s": round(loaded, 2)}
    for mode in ("literal", "ranked"):
        samples = []
        for i in range(n):
            begin = time.perf_counter()
            view.search_files(queries[i % len(queries)], mode, 20)
            samples.append(time.perf_counter() - begin)
        rows[f"in_process_{mode}"] = summary(samples)

    async def over_stdio(client: Client) -> dict[str, Any]:
        out = {}
        for mode in ("literal", "ranked"):
            calls = [("search_files", {"query": queries[i % len(queries)], "mode": mode}) for i in range(min(n, 200))]
            out[f"stdio_{mode}"] = summary(await timed_calls(client, calls, warmup=5))
        return out

    rows.update(anyio.run(session, worldkit_params(projection, tmp / "search.db", "bench-search"), over_stdio))
    rows["target_ms"] = 50
    emit(rows)


def _only_seat(world: Path) -> str:
    from worldkit.world import load_world

    state = load_world(world).revision("r1")
    return sorted(state.seats)[0]


def bench_replay(projection: Path, tmp: Path, n_events: int) -> None:
    config = default_tool_config(projection).model_copy(
        update={"permitted": [WriteFiles(paths=["*"]), UpdateRecords(action="comment", records=["*"])]}
    )
    view = SeatView(projection, config, state=SeatState(_fingerprint(projection), MemoryWorkspace()))
    files = files_of(projection)
    records = sorted(view.records)
    with Store.open(f"sqlite:///{tmp / 'replay.db'}") as store:
        log = EventLog(store, "bench-replay", view.seat)
        batch: list[dict[str, Any]] = []
        start = time.perf_counter()
        for i in range(n_events):
            if i % 10 == 9:
                if i % 20 == 19:
                    _, change = view.write_file(f"notes/note-{i % 50:02d}.md", f"note {i}\n")
                    tool, arguments = "write_file", {"path": f"notes/note-{i % 50:02d}.md", "content": f"note {i}\n"}
                else:
                    record = records[i % len(records)]
                    _, change = view.update_record(record, "comment", f"comment {i}")
                    tool, arguments = "update_record", {"id": record, "action": "comment", "text": f"comment {i}"}
                batch.append({"tool": tool, "arguments": arguments, "outcome": "ok", "result_digest": None,
                              "state_change": change.model_dump(mode="json")})
            else:
                batch.append({"tool": "read_file", "arguments": {"path": files[i % len(files)]}, "outcome": "ok",
                              "result_digest": f"{i:064x}"})
            if len(batch) == 1000:
                log.append_many(batch)  # type: ignore[arg-type]
                batch = []
        if batch:
            log.append_many(batch)  # type: ignore[arg-type]
        built = time.perf_counter() - start
        log.close()
        start = time.perf_counter()
        report = replay_run(store, "bench-replay", projection)
        took = time.perf_counter() - start
    emit({
        "figure": "replay", "events": n_events, "state_changes": report.state_changes, "ok": report.ok,
        "replay_s": round(took, 3), "events_per_s": round(n_events / took), "build_s": round(built, 2), "target_s": 10,
    })


def bench_appends(tmp: Path, n: int) -> None:
    """Event-log appends/s as `worldkit serve` logs: one committed event per call, before the call
    is answered (`EventLog.record`, write-ahead); `append` also builds the returned Event.
    The side-by-side ratio to plain inserts is `bench/eventlog.py`."""
    event = {"tool": "read_file", "arguments": {"path": "QC/Stability/x.md"}, "outcome": "ok", "result_digest": "a" * 64}
    with Store.open(f"sqlite:///{tmp / 'appends.db'}") as store:
        with EventLog(store, "bench-appends-sync", "EMP-QC-001", claim=True) as log:
            start = time.perf_counter()
            for _ in range(n):
                log.append(**event)
            sync = n / (time.perf_counter() - start)
        with EventLog(store, "bench-appends-record", "EMP-QC-001", claim=True) as log:
            start = time.perf_counter()
            for _ in range(n):
                log.record(**event)
            served = n / (time.perf_counter() - start)
    emit({"figure": "log_appends", "events": n, "append_per_s": round(sync), "served_write_ahead_per_s": round(served),
          "target_per_s": 5000})


def _fingerprint(projection: Path) -> str:
    from worldkit.materialize.manifest import read_manifest

    return read_manifest(projection).fingerprint


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="timed calls per figure")
    parser.add_argument("--search-files", type=int, default=10_000, help="files in the synthetic search world")
    parser.add_argument("--replay-events", type=int, default=100_000, help="events in the replayed run")
    parser.add_argument("--repeats", type=int, default=3, help="alternating sessions per server")
    parser.add_argument("--no-reference", action="store_true", help="skip the reference filesystem server")
    parser.add_argument("--projection", type=Path, help="use this demo projection instead of materializing one")
    args = parser.parse_args()
    reference = not args.no_reference
    if reference and not REFERENCE.is_file():
        sys.exit(f"reference server not installed: run `npm ci` in {BENCH} (or pass --no-reference)")
    with tempfile.TemporaryDirectory(prefix="worldkit-bench-mcp-") as scratch:
        tmp = Path(scratch)
        projection = args.projection or materialize(*DEMO[:3], DEMO[3], tmp / "demo").out
        bench_stdio(projection, tmp, args.calls, reference, args.repeats)
        bench_search(tmp, args.search_files, args.calls)
        bench_appends(tmp, 10_000)
        bench_replay(projection, tmp, args.replay_events)


if __name__ == "__main__":
    main()
