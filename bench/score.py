"""Structure Score benchmark: scoring in-process at 100 … 100,000 records, and `score-trees` from a shell.

Each size gets a seeded random reference shaped like the benchmark's (parent / leaf folders, about
40 records per parent) and an output that disagrees with it the way agents do: a wrapper folder,
records moved, leaf groups re-parented, leaves merged, a few extra single-child folders.

One JSON line per size (`"bench": "structure_score"`): the median and min wall time of
`score_trees` over `--repeats` runs and its CPU time, beside two same-run baselines —
`floor_s`, one pass over the records that any scorer must make (both paths of every record made
hashable and counted), and, up to `--oracle-max` records (default 200), the brute-force O(n³)
oracle's time and whether the two agree exactly (larger sizes report the oracle's time
extrapolated from its time per triple, never run). Targets (DESIGN §10): 10,000 records ≤ 0.1 s,
100,000 ≤ 1.5 s; `ratio_to_target` is median / target (≤ 1 meets it).

One more line (`"bench": "score_trees_cli"`): `python -m worldkit infoorg score-trees REF OUT`
on `--cli-records` records (default 10,000) as a fresh process, wall median and CPU (user + sys of
the child), beside `python -c pass` measured in the same run; target ≤ 0.5 s end to end.
Every line carries the 1-minute load average: on a shared machine quote CPU times and ratios.

    python bench/score.py [--sizes 100,1000,10000,100000] [--repeats 5] [--oracle-max 200]
                          [--cli-records 10000] [--cli-repeats 7]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from worldkit.infoorg._oracle import brute_force_score
from worldkit.infoorg.scoring import score_trees

REPO = Path(__file__).resolve().parents[1]
TARGETS_S = {10_000: 0.1, 100_000: 1.5}
CLI_TARGET_S = 0.5


def make_pair(n: int, seed: int) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    rng = random.Random(seed)
    parents = max(2, n // 40)
    reference = {
        f"F{i:06d}": [f"parent-{rng.randrange(parents)}", f"leaf-{rng.randrange(4)}"]
        for i in range(n)
    }
    moved_parent = {p: f"parent-{rng.randrange(parents)}" for p in range(parents)}
    output = {}
    for record, (parent, leaf) in reference.items():
        roll = rng.random()
        if roll < 0.05:  # a record filed somewhere else
            path = [f"parent-{rng.randrange(parents)}", f"leaf-{rng.randrange(4)}"]
        elif roll < 0.10:  # its leaf merged with a sibling
            path = [parent, "merged"]
        elif leaf == "leaf-3":  # some leaf groups re-parented as a whole
            path = [moved_parent[int(parent.split("-")[1])], f"{parent}-{leaf}"]
        else:
            path = [parent, leaf]
        if rng.random() < 0.02:
            path = path + ["extra"]  # a single-child shell now and then
        output[record] = ["organized", *path]  # a wrapper shared by all records
    return reference, output


def timed(fn: Callable[[], object], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each of `repeats` calls."""
    walls, cpus = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return walls, cpus


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def in_process(
    n: int, repeats: int, oracle_max: int, per_triple: float | None
) -> tuple[dict, float | None]:
    reference, output = make_pair(n, seed=n)
    walls, cpus = timed(lambda: score_trees(reference, output), repeats)
    floor, _ = timed(
        lambda: Counter(zip(map(tuple, reference.values()), map(tuple, output.values()))), repeats
    )
    score = score_trees(reference, output)
    triples = math.comb(n, 3)
    median = statistics.median(walls)
    line: dict[str, object] = {
        "bench": "structure_score",
        "records": n,
        "triples": triples,
        "repeats": repeats,
        "median_s": round(median, 4),
        "min_s": round(min(walls), 4),
        "cpu_median_s": round(statistics.median(cpus), 4),
        "floor_s": round(statistics.median(floor), 4),
        "ratio_to_floor": round(median / statistics.median(floor), 1),
        "S": round(score.S or 0.0, 4),
        "load_1min": _load(),
    }
    if n in TARGETS_S:
        line.update(target_s=TARGETS_S[n], ratio_to_target=round(median / TARGETS_S[n], 3),
                    meets_target=median <= TARGETS_S[n])  # fmt: skip
    if n <= oracle_max:
        oracle_repeats = 3 if n <= 100 else 1
        oracle_walls, _ = timed(lambda: brute_force_score(reference, output), oracle_repeats)
        oracle = brute_force_score(reference, output)
        oracle_median = statistics.median(oracle_walls)
        per_triple = oracle_median / max(1, triples)
        fast_levels = {d: c.model_dump() for d, c in score.levels.items()}
        same = fast_levels == oracle["levels"] and all(
            getattr(score, key) == value for key, value in oracle.items() if key != "levels"
        )
        line.update(oracle_s=round(oracle_median, 4), oracle_repeats=oracle_repeats,
                    speedup=round(oracle_median / median, 1), agrees_with_oracle=same)  # fmt: skip
    elif per_triple is not None:
        line["oracle_extrapolated_s"] = round(per_triple * triples, 1)
    return line, per_triple


def _child(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli(n: int, repeats: int) -> dict:
    reference, output = make_pair(n, seed=n)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryDirectory() as scratch:
        ref_file, out_file = Path(scratch, "ref.json"), Path(scratch, "out.json")
        ref_file.write_text(json.dumps(reference), encoding="utf-8")
        out_file.write_text(json.dumps(output), encoding="utf-8")
        command = [sys.executable, "-m", "worldkit", "infoorg", "score-trees", str(ref_file),
                   str(out_file)]  # fmt: skip
        _child(command, env)  # warm the file cache and the bytecode
        runs, bare = [], []
        for _ in range(repeats):  # interleaved, so both see the same load
            runs.append(_child(command, env))
            bare.append(_child([sys.executable, "-c", "pass"], env))
    median = statistics.median(wall for wall, _ in runs)
    bare_median = statistics.median(wall for wall, _ in bare)
    return {
        "bench": "score_trees_cli",
        "records": n,
        "repeats": repeats,
        "median_s": round(median, 4),
        "min_s": round(min(wall for wall, _ in runs), 4),
        "cpu_median_s": round(statistics.median(cpu for _, cpu in runs), 4),
        "python_pass_median_s": round(bare_median, 4),
        "python_pass_cpu_median_s": round(statistics.median(cpu for _, cpu in bare), 4),
        "ratio_to_python_pass": round(median / bare_median, 2),
        "target_s": CLI_TARGET_S,
        "ratio_to_target": round(median / CLI_TARGET_S, 3),
        "meets_target": median <= CLI_TARGET_S,
        "load_1min": _load(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--oracle-max", type=int, default=200)
    parser.add_argument("--cli-records", type=int, default=10_000, help="0 skips the CLI row")
    parser.add_argument("--cli-repeats", type=int, default=7)
    args = parser.parse_args()

    per_triple: float | None = None
    for n in (int(size) for size in args.sizes.split(",")):
        repeats = args.repeats if n <= 10_000 else max(1, min(args.repeats, 3))
        line, per_triple = in_process(n, repeats, args.oracle_max, per_triple)
        print(json.dumps(line), flush=True)
    if args.cli_records:
        print(json.dumps(cli(args.cli_records, args.cli_repeats)), flush=True)


if __name__ == "__main__":
    main()
