"""Analysis benchmark: the 2,000-replicate task-cluster GEE bootstrap of both outcomes (criterion
pass and evidence access) on the public WorkWorlds ledgers, with worker processes and in one.

Prints one JSON line: wall and CPU seconds with `--workers` processes, with one (unless
`--skip-single`), their ratio, the machine's load average before and after (other work on
the machine stretches wall time, not CPU time), and the intervals (which must not depend on
the worker count). Target: ≤ 90 s with 2 workers on the 2-core machine.
Optionally writes the HTML report and a headless-Chromium screenshot of it (`--screenshot`).

    python bench/analysis.py [--workers 2] [--replicates 2000] [--skip-single]
                             [--screenshot bench/report.png]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
LEDGERS = Path(os.environ.get("WORLDKIT_SHARED_DATA", REPO.parent / "shared" / "data")) / "workworld"


def bootstrap(replicates: int, workers: int):
    """The whole report's analysis (the GEE bootstrap dominates), timed."""
    from worldkit.report.build import load_report

    start, cpu = time.perf_counter(), _cpu()
    report = load_report(ledgers=LEDGERS, replicates=replicates, workers=workers)
    seconds, cpu_used = time.perf_counter() - start, _cpu() - cpu
    [result] = report.analyses
    intervals = {}
    for name, estimate in (("pass", result.passed), ("access", result.access)):
        interval = estimate.contrast.interval
        intervals[name] = [round(100 * interval.lower, 3), round(100 * interval.upper, 3),
                           interval.valid, interval.saturated]
    return report, seconds, {"intervals": intervals, "cpu_seconds": round(cpu_used, 1)}


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the bootstrap's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def screenshot(report, target: Path) -> dict:
    from worldkit.report.html import render_html

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    page = target.with_suffix(".html")
    page.write_text(render_html(report), encoding="utf-8")
    if browser is None:
        return {"html": str(page), "screenshot": None,
                "why": "no chromium (apt-get install chromium)"}
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", f"--user-data-dir={profile}",
                        "--window-size=1400,3200", f"--screenshot={target.resolve()}",
                        page.resolve().as_uri()], check=True, capture_output=True, timeout=180)
    return {"html": str(page), "screenshot": str(target)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--skip-single", action="store_true")
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    result: dict = {"bench": "analysis-bootstrap", "replicates": args.replicates,
                    "workers": args.workers, "cpus": os.cpu_count(),
                    "load_before": [round(x, 2) for x in os.getloadavg()]}
    report, seconds, parallel = bootstrap(args.replicates, args.workers)
    result.update(seconds=round(seconds, 1), cpu_seconds=parallel["cpu_seconds"],
                  intervals=parallel["intervals"])
    if not args.skip_single:
        _, single, alone = bootstrap(args.replicates, 1)
        result.update(single_seconds=round(single, 1), single_cpu_seconds=alone["cpu_seconds"],
                      ratio=round(seconds / single, 3),
                      identical=alone["intervals"] == parallel["intervals"])
    result["load_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.screenshot:
        result.update(screenshot(report, args.screenshot))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
