"""MCP benchmark: tool-call latency over stdio, search over 10,000 files, replay rate.

Prints JSON lines:
- `stdio_read` / `stdio_search`: per-call latency (median, p99, ms) of `worldkit serve` (seat
  EMP-QC-001 of the demo world, rev r2, 2026-03-02; every call logged to a SQLite event log) and,
  in the same run through the same Python client, of the reference filesystem MCP server
  (`@modelcontextprotocol/server-filesystem`, installed by `npm ci` in bench/) serving the same
  projection's `files/`. Both servers are open at once and their reads interleaved call by call,
  so they meet the same machine load. Reads are the same files; the reference server's `search_files` matches
  file names by glob while worldkit's searches contents, so the search row is context, not a race.
- `search_10k`: `search_files` (literal and ranked) over a 10,000-file synthetic projection,
  in-process and over stdio.
- `log_appends`: event-log appends/s, one transaction per call and as the server logs (group commit).
- `replay`: `replay_run` over a run of `--replay-events` events (one in ten a state change).
Targets (DESIGN §9): stdio latency no worse than the reference server on the same reads; search
over 10,000 records ≤ 50 ms; replay of 100,000 events ≤ 10 s.

    python bench/mcp.py [--calls 500] [--repeats 3] [--search-files 10000] [--replay-events 100000]
                        [--no-reference] [--projection DIR] [--figures stdio,search,appends,replay]
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
from contextlib import AsyncExitStack
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
FIGURES = ("stdio", "search", "appends", "replay")
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


def worldkit_params(projection: Path, store: Path, run_id: str, *, trust_staged: bool = False) -> StdioServerParameters:
    args = ["-m", "worldkit", "serve", "--projection", str(projection), "--store", f"sqlite:///{store}",
            "--run-id", run_id, "--anchor", str(store.parent / f"{run_id}.anchor.json")]
    return StdioServerParameters(
        command=sys.executable,
        args=args + (["--trust-staged"] if trust_staged else []),
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(REPO),
    )


async def session(params: StdioServerParameters, work: Callable[[Client], Awaitable[Any]]) -> Any:
    async with Client(params, mode="legacy") as client:  # the reference server predates 2026-07-28
        return await work(client)


def files_of(projection: Path) -> list[str]:
    root = projection / "files"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


# How each server's process is recognised among this process's children (by its command line).
_SERVER_MARKS = {"worldkit": "worldkit\0serve", "reference_filesystem": "server-filesystem"}


def _children_cpu() -> dict[str, float]:
    """CPU seconds (user + system, all threads) used so far by each server child process."""
    ticks = os.sysconf("SC_CLK_TCK")
    found: dict[str, float] = {}
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_text()
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # exited meanwhile
                continue
            for name, mark in _SERVER_MARKS.items():
                if mark in cmdline:
                    found[name] = found.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / ticks
    return found


async def interleaved(
    clients: dict[str, Client], calls: dict[str, list[tuple[str, dict[str, Any]]]], warmup: int = 20
) -> dict[str, list[float]]:
    """Call each server's i-th call in turn (the order alternating from one i to the next), so both
    servers meet the same machine load; per-call latency samples by server."""
    names = list(clients)
    n = min(len(batch) for batch in calls.values())
    for i in range(min(warmup, n)):
        for name in names:
            await clients[name].call_tool(*calls[name][i])
    samples: dict[str, list[float]] = {name: [] for name in names}
    cpu = _children_cpu() if sys.platform == "linux" else {}
    for i in range(n):
        for name in names if i % 2 == 0 else reversed(names):
            tool, arguments = calls[name][i]
            start = time.perf_counter()
            result = await clients[name].call_tool(tool, arguments)
            samples[name].append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"{name}: {tool} {arguments} failed: {result.content}")
    if cpu:
        after = _children_cpu()
        CPU_PER_CALL.setdefault(tuple(names), []).append(
            {name: (after[name] - cpu[name]) / n for name in names if name in cpu and name in after}
        )
    return samples


CPU_PER_CALL: dict[tuple[str, ...], list[dict[str, float]]] = {}
"""Server CPU seconds per call of each interleaved batch (Linux: read from /proc)."""


def bench_stdio(projection: Path, tmp: Path, n: int, reference: bool, repeats: int) -> None:
    """Both servers open at once under the same Python client; each figure's calls interleaved call
    by call, `repeats` fresh sessions each; medians of the per-session median and p99.

    The ratio of the pooled samples is reported too; both ratios are same-run."""
    files = files_of(projection)
    root = (projection / "files").resolve()
    reads = {
        "worldkit": [("read_file", {"path": files[i % len(files)]}) for i in range(n)],
        "reference_filesystem": [("read_text_file", {"path": str(root / files[i % len(files)])}) for i in range(n)],
    }
    searches = {
        "worldkit_literal": [("search_files", {"query": QUERIES[i % len(QUERIES)]}) for i in range(n)],
        "worldkit_ranked": [("search_files", {"query": QUERIES[i % len(QUERIES)], "mode": "ranked"}) for i in range(n)],
        "reference_filesystem_name_glob": [
            ("search_files", {"path": str(root), "pattern": f"**/*{QUERIES[i % 3]}*"}) for i in range(n // 5)
        ],
    }
    node = StdioServerParameters(command=shutil.which("node") or "node", args=[str(REFERENCE), str(root)])
    runs: list[dict[str, list[float]]] = []
    search_runs: list[dict[str, list[float]]] = []

    async def one(k: int) -> None:
        async with AsyncExitStack() as stack:
            clients = {"worldkit": await stack.enter_async_context(
                Client(worldkit_params(projection, tmp / "bench.db", f"bench-stdio-{k}"), mode="legacy"))}
            if reference:  # the reference server predates protocol 2026-07-28: both speak 2025-11-25
                clients["reference_filesystem"] = await stack.enter_async_context(Client(node, mode="legacy"))
            runs.append(await interleaved(clients, {name: reads[name] for name in clients}))
            search_runs.append({
                name: await timed_calls(clients["worldkit" if name.startswith("worldkit") else "reference_filesystem"],
                                        batch, warmup=3)
                for name, batch in searches.items() if reference or name.startswith("worldkit")
            })

    for k in range(repeats):
        anyio.run(one, k)

    def merged(per_run: list[dict[str, list[float]]], name: str) -> dict[str, Any]:
        sessions = [summary(r[name]) for r in per_run]
        pooled = summary([s for r in per_run for s in r[name]])
        return {
            "median_ms": round(statistics.median(s["median_ms"] for s in sessions), 3),
            "p99_ms": round(statistics.median(s["p99_ms"] for s in sessions), 3),
            "pooled_median_ms": pooled["median_ms"],
            "pooled_p99_ms": pooled["p99_ms"],
            "calls": pooled["calls"],
            "repeats": len(per_run),
        }

    row: dict[str, Any] = {"figure": "stdio_read", "files": len(files), "interleaved": reference,
                           "load_1min": round(os.getloadavg()[0], 2), "worldkit": merged(runs, "worldkit")}
    if reference:
        row["reference_filesystem"] = merged(runs, "reference_filesystem")
    # Load-independent: CPU the server process itself spent per read (median over the sessions).
    cpu_runs = CPU_PER_CALL.get(tuple(runs[0]), [])
    for name in runs[0]:
        per_call = [r[name] for r in cpu_runs if name in r]
        if per_call:
            row[name]["server_cpu_ms_per_call"] = round(1000 * statistics.median(per_call), 3)
    if reference:
        for stat in ("median_ms", "p99_ms", "server_cpu_ms_per_call"):
            if stat in row["worldkit"] and stat in row["reference_filesystem"]:
                ratio = row["worldkit"][stat] / row["reference_filesystem"][stat]
                row[f"ratio_{stat.removesuffix('_ms').removesuffix('_ms_per_call')}_worldkit_to_reference"] = round(ratio, 3)
        row["target_ratio"] = 1.0
    emit(row)
    row = {"figure": "stdio_search", **{name: merged(search_runs, name) for name in search_runs[0]}}
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

    # A synthetic projection is not a frozen one: served as staged (checked against its own manifest).
    params = worldkit_params(projection, tmp / "search.db", "bench-search", trust_staged=True)
    rows.update(anyio.run(session, params, over_stdio))
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
        start, cpu = time.perf_counter(), time.process_time()
        report = replay_run(store, "bench-replay", projection)
        took, cpu = time.perf_counter() - start, time.process_time() - cpu
    emit({
        "figure": "replay", "events": n_events, "state_changes": report.state_changes, "ok": report.ok,
        "replay_s": round(took, 3), "replay_cpu_s": round(cpu, 3),
        "load_1min": round(os.getloadavg()[0], 2), "events_per_s": round(n_events / took), "build_s": round(built, 2), "target_s": 10,
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
    parser.add_argument("--figures", default=",".join(FIGURES),
                        help=f"comma-separated figures to run (default all: {','.join(FIGURES)})")
    args = parser.parse_args()
    figures = [f.strip() for f in args.figures.split(",") if f.strip()]
    unknown = sorted(set(figures) - set(FIGURES))
    if unknown:
        sys.exit(f"unknown figure(s) {', '.join(unknown)}: choose from {', '.join(FIGURES)}")
    reference = not args.no_reference
    if reference and "stdio" in figures and not REFERENCE.is_file():
        sys.exit(f"reference server not installed: run `npm ci` in {BENCH} (or pass --no-reference)")
    with tempfile.TemporaryDirectory(prefix="worldkit-bench-mcp-") as scratch:
        tmp = Path(scratch)
        needs_demo = {"stdio", "replay"} & set(figures)
        projection = args.projection or (materialize(*DEMO[:3], DEMO[3], tmp / "demo").out if needs_demo else None)
        if "stdio" in figures:
            bench_stdio(projection, tmp, args.calls, reference, args.repeats)
        if "search" in figures:
            bench_search(tmp, args.search_files, args.calls)
        if "appends" in figures:
            bench_appends(tmp, 10_000)
        if "replay" in figures:
            bench_replay(projection, tmp, args.replay_events)


if __name__ == "__main__":
    main()
