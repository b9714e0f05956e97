"""Materialize benchmark: a generated world at 1,000 / 10,000 / 100,000 files.

For each size, prints one JSON line: files/s, the median time to load + materialize (in a fresh
child process, so peak RSS is per size), the median time of `cp -r` of the produced tree measured
in the same run, their ratio, and peak RSS. Target (DESIGN §9): linear cost, ≤ 3× `cp -r`.

    python bench/materialize.py [--sizes 1000,10000,100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
from worldkit.world import load_world
from worldkit.materialize import materialize
world, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
package = load_world(world)
state = package.revision("r1")
t1 = time.perf_counter()
result = materialize(package, "r1", "2026-01-01", "EMP-1", out)
t2 = time.perf_counter()
print(json.dumps({"load_s": t1 - t0, "materialize_s": t2 - t1, "files": len(result.manifest.files),
                  "fingerprint": result.fingerprint,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def bench_size(n: int, repeats: int, scratch: Path) -> dict:
    from worldkit.world.synthetic import write_synthetic_world

    world = write_synthetic_world(scratch / f"world-{n}", n)
    runs, copies = [], []
    # Nothing is deleted until a size is done: a mass delete (ext4 with discard) slows whatever
    # creates files next, and it must not land on one side of the comparison only.
    for k in range(repeats):
        out = scratch / f"out-{n}-{k}"
        subprocess.run(["sync"], check=True)
        done = subprocess.run([sys.executable, "-c", _CHILD, str(world), str(out)], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout))
        target = scratch / f"copy-{n}-{k}"
        subprocess.run(["sync"], check=True)
        t0 = time.perf_counter()
        subprocess.run(["cp", "-r", str(out), str(target)], check=True)
        copies.append(time.perf_counter() - t0)
    for k in range(repeats):
        shutil.rmtree(scratch / f"out-{n}-{k}")
        shutil.rmtree(scratch / f"copy-{n}-{k}")
    assert len({r["fingerprint"] for r in runs}) == 1, "fingerprints differ between repeats"
    total = statistics.median(r["load_s"] + r["materialize_s"] for r in runs)
    write_only = statistics.median(r["materialize_s"] for r in runs)
    cp = statistics.median(copies)
    return {
        "bench": "materialize",
        "generated_documents": n,
        "files": runs[0]["files"],
        "repeats": repeats,
        "load_s": round(statistics.median(r["load_s"] for r in runs), 3),
        "materialize_s": round(write_only, 3),
        "total_s": round(total, 3),
        "cp_r_s": round(cp, 3),
        "ratio_total_vs_cp": round(total / cp, 2),
        "ratio_materialize_vs_cp": round(write_only / cp, 2),
        "files_per_s": round(runs[0]["files"] / total),
        "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
        "peak_rss_kb_per_file": round(max(r["peak_rss_mb"] for r in runs) * 1024 / runs[0]["files"], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wk-bench-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            print(json.dumps(bench_size(n, args.repeats, Path(tmp))), flush=True)


if __name__ == "__main__":
    main()
