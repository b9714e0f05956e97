"""Campaign benchmark: parallel speed-up, and memory over the paper's full 192-run plan.

- `speedup` (default): a 24-run oracle/noop campaign (3 PharmaCo tasks × 2 agents × 4 full runs)
  run by `worldkit campaign run` with 1 worker, then with 2, each in a fresh folder and store;
  prints both wall times and their ratio (target ≤ 0.6 on the 2-core machine). Medians of
  `--repeats`.
- `--ray`: the same 24-run campaign by the local executor (`--workers`, the baseline, in the same
  command) and by the Ray executor on a one-node and a two-node Ray cluster on this machine
  (`ray.cluster_utils.Cluster`, the CPUs split between the nodes); prints runs per minute and the
  per-run overhead against the local executor's. Needs the `ray` extra.
- `--paper`: the paper's design, 8 tasks × 3 agents × (4 full + 2 per curator's packet) = 192
  runs, with oracle, noop and a scripted `openai` agent (a local endpoint that answers at once);
  prints the workers' resident memory after each run (from the store) and the per-run slope.

    python bench/campaign.py [--workers 2] [--repeats 1] [--paper | --ray] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
# bench/ holds an `mcp.py` of its own: off the import path, or it would shadow the MCP SDK (Ray's workers
# inherit this driver's path)
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
SPEEDUP_TASKS = ["qualification-sweep", "shelf-life-assessment", "stability-update"]
PAPER_TASKS = [
    "authority-response", "overwrap-position", "qualification-sweep", "records-integrity",
    "shelf-life-assessment", "stability-update", "supplier-change-audit", "validation-defense",
]  # fmt: skip


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def campaign(design: Path, out: Path, workers: int) -> tuple[float, dict]:
    """Wall time and final status of one `campaign run`; the CPU seconds of the coordinator and its
    workers go into the status as `cpu_s`."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "worldkit", "campaign", "run", str(design), "--out", str(out),
         "--workers", str(workers), "--json"],
        env=ENV, capture_output=True, check=False,
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"campaign failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed, {**json.loads(done.stdout), "cpu_s": _children_cpu() - cpu}


def speedup(args: argparse.Namespace) -> dict:
    times: dict[int, list[float]] = defaultdict(list)
    cpu: dict[int, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="wkcampaign-speedup-", dir=args.tmp, ignore_cleanup_errors=True) as tmp:
        design = Path(tmp) / "design.yaml"
        design.write_text(f"tasks: {json.dumps(SPEEDUP_TASKS)}\nagents: [oracle, noop]\nconditions: {{full: 4}}\nseed: 1\n")
        for repeat in range(args.repeats):
            for workers in (1, args.workers):
                elapsed, state = campaign(design, Path(tmp) / f"w{workers}-{repeat}", workers)
                assert state["done"] == state["planned"] == 24, state
                times[workers].append(elapsed)
                cpu[workers].append(state["cpu_s"])
    one, many = statistics.median(times[1]), statistics.median(times[args.workers])
    return {"bench": "campaign.speedup", "runs": 24, "workers": args.workers, "t_1_worker_s": round(one, 2),
            f"t_{args.workers}_workers_s": round(many, 2), "ratio": round(many / one, 3), "target": 0.6,
            "cpu_1_worker_s": round(statistics.median(cpu[1]), 1),
            f"cpu_{args.workers}_workers_s": round(statistics.median(cpu[args.workers]), 1),
            "cpus": os.cpu_count(), "repeats": args.repeats,
            "loadavg_1m_at_end": round(os.getloadavg()[0], 2)}  # fmt: skip


def _ray_campaign(design: Path, out: Path, nodes: int, cpus: int) -> tuple[float, dict]:
    """Wall time and final status of one Ray-executor campaign on a fresh `nodes`-node cluster
    holding `cpus` CPUs in all (the cluster's start-up is not timed)."""
    from ray.cluster_utils import Cluster

    from worldkit.campaign.ray_executor import RayOptions, run_campaign_ray

    per_node = max(1, cpus // nodes)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": per_node, "include_dashboard": False})
    for _ in range(nodes - 1):
        cluster.add_node(num_cpus=per_node)
    cluster.wait_for_nodes()
    try:
        start = time.perf_counter()
        state = run_campaign_ray(design, out, options=RayOptions(address=cluster.address))
        return time.perf_counter() - start, state.as_dict()
    finally:
        cluster.shutdown()


def ray_rows(args: argparse.Namespace) -> dict:
    times: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="wkcampaign-ray-", dir=args.tmp, ignore_cleanup_errors=True) as tmp:
        design = Path(tmp) / "design.yaml"
        design.write_text(f"tasks: {json.dumps(SPEEDUP_TASKS)}\nagents: [oracle, noop]\nconditions: {{full: 4}}\nseed: 1\n")
        for repeat in range(args.repeats):
            elapsed, state = campaign(design, Path(tmp) / f"local-{repeat}", args.workers)
            assert state["done"] == 24, state
            times["local"].append(elapsed)
            for nodes in (1, 2):
                elapsed, state = _ray_campaign(design, Path(tmp) / f"ray{nodes}-{repeat}", nodes, args.workers)
                assert state["done"] == 24, state
                times[f"ray_{nodes}_node"].append(elapsed)
    medians = {name: statistics.median(values) for name, values in times.items()}
    local = medians["local"]
    rows = {"bench": "campaign.ray", "runs": 24, "cpus": args.workers, "repeats": args.repeats,
            "local_s": round(local, 2), "local_runs_per_min": round(24 / local * 60, 1)}
    for nodes in (1, 2):
        wall = medians[f"ray_{nodes}_node"]
        rows[f"ray_{nodes}_node_s"] = round(wall, 2)
        rows[f"ray_{nodes}_node_runs_per_min"] = round(24 / wall * 60, 1)
        rows[f"ray_{nodes}_node_overhead_per_run_s"] = round((wall - local) / 24 * args.workers, 3)
        rows[f"ray_{nodes}_node_ratio"] = round(wall / local, 3)
    return rows


def _scripted_endpoint() -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            self.rfile.read(int(self.headers["Content-Length"]))
            data = json.dumps({"choices": [{"message": {"role": "assistant", "content": "done"}}],
                               "usage": {"total_tokens": 1}}).encode()  # fmt: skip
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def paper(args: argparse.Namespace) -> dict:
    import sqlalchemy as sa

    server, url = _scripted_endpoint()
    try:
        with tempfile.TemporaryDirectory(prefix="wkcampaign-paper-", dir=args.tmp, ignore_cleanup_errors=True) as tmp:
            design = Path(tmp) / "design.yaml"
            design.write_text(
                f"tasks: {json.dumps(PAPER_TASKS)}\n"
                f"agents: [oracle, noop, {{agent: 'openai:scripted', options: {{base_url: '{url}'}}}}]\n"
                "conditions: {full: 4, curated: 2}\nseed: 20260301\n"
            )
            out = Path(tmp) / "c"
            elapsed, state = campaign(design, out, args.workers)
            engine = sa.create_engine(f"sqlite:///{out / 'store.db'}")
            with engine.connect() as conn:
                rows = conn.execute(sa.text(
                    "select holder, rss_kb from campaign_runs where status = 'done' order by finished_at"
                )).all()  # fmt: skip
            engine.dispose()
    finally:
        server.shutdown()
    per_worker: dict[str, list[int]] = defaultdict(list)
    for holder, rss in rows:
        per_worker[holder].append(rss)
    slopes = []
    for series in per_worker.values():
        tail = series[5:]  # after warm-up (first imports, caches filled)
        if len(tail) >= 10:
            slopes.append(float(np.polyfit(np.arange(len(tail)), np.array(tail, dtype=float), 1)[0]))
    return {"bench": "campaign.paper", "planned": state["planned"], "done": state["done"], "failed": state["failed"],
            "workers": args.workers, "wall_s": round(elapsed, 1), "cpu_s": round(state["cpu_s"], 1),
            "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
            "rss_mb_first": [round(s[0] / 1024, 1) for s in per_worker.values()],
            "rss_mb_last": [round(s[-1] / 1024, 1) for s in per_worker.values()],
            "rss_kb_per_run_slope": [round(s, 1) for s in slopes]}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--paper", action="store_true", help="run the 192-run plan and report memory")
    parser.add_argument("--ray", action="store_true", help="the local executor against Ray on 1 and 2 nodes")
    parser.add_argument("--tmp", default=None, help="scratch folder for the campaigns (default: the system's)")
    args = parser.parse_args()
    print(json.dumps(paper(args) if args.paper else ray_rows(args) if args.ray else speedup(args)))


if __name__ == "__main__":
    main()
