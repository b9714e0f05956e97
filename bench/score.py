"""Structure Score benchmark: scoring time for 100 / 1,000 / 10,000 / 100,000-record hierarchies.

Each size gets a seeded random reference shaped like the benchmark's (parent / leaf folders, about
40 records per parent) and an output that disagrees with it the way agents do: a wrapper folder,
records moved, leaf groups re-parented, leaves merged, a few extra single-child folders. Prints
one JSON line per size: the median (and min) time of `score_trees` over `--repeats` runs, and, at
the sizes where it is feasible (≤ `--oracle-max`, default 200), the brute-force O(n³) oracle's
time and whether the two agree exactly. Larger sizes report the oracle's time extrapolated from
its measured time per triple (`oracle_extrapolated_s`), never run. Target (DESIGN §9): 10,000
records in ≤ 2 s.

    python bench/score.py [--sizes 100,1000,10000,100000] [--repeats 5] [--oracle-max 200]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import time

from worldkit.infoorg._oracle import brute_force_score
from worldkit.infoorg.scoring import score_trees


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


def timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--oracle-max", type=int, default=200)
    args = parser.parse_args()

    per_triple: float | None = None
    for n in (int(size) for size in args.sizes.split(",")):
        reference, output = make_pair(n, seed=n)
        repeats = args.repeats if n <= 10_000 else max(1, min(args.repeats, 3))
        fast_times = timed(lambda: score_trees(reference, output), repeats)
        score = score_trees(reference, output)
        triples = math.comb(n, 3)
        line = {
            "bench": "structure_score",
            "records": n,
            "triples": triples,
            "repeats": repeats,
            "median_s": round(statistics.median(fast_times), 4),
            "min_s": round(min(fast_times), 4),
            "S": round(score.S or 0.0, 4),
        }
        if n == 10_000:
            line["target_s"] = 2.0
            line["meets_target"] = statistics.median(fast_times) <= 2.0
        if n <= args.oracle_max:
            oracle_repeats = 3 if n <= 100 else 1
            oracle_times = timed(lambda: brute_force_score(reference, output), oracle_repeats)
            oracle = brute_force_score(reference, output)
            oracle_median = statistics.median(oracle_times)
            per_triple = oracle_median / max(1, triples)
            fast_levels = {d: c.model_dump() for d, c in score.levels.items()}
            line.update(
                oracle_s=round(oracle_median, 4),
                oracle_repeats=oracle_repeats,
                speedup=round(oracle_median / statistics.median(fast_times), 1),
                agrees_with_oracle=fast_levels == oracle["levels"]
                and math.isclose(score.S or 0.0, oracle["S"] or 0.0, abs_tol=1e-12),
            )
        elif per_triple is not None:
            line["oracle_extrapolated_s"] = round(per_triple * triples, 1)
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
