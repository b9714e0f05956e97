"""InfoOrgBench command benchmark: `score-trees` end to end and `baselines` per family.

Prints one JSON line per measurement (targets from issue 18):

- `score_trees_cli`: `python -m worldkit infoorg score-trees REF OUT --json` on a 10,000-record
  pair, wall time of the whole process (median of `--repeats`); target <= 0.5 s. Also
  `score_trees_infoorg_cli`: the same command through an app that mounts only the infoorg score
  commands, i.e. what this command costs without the rest of the CLI being imported; and the
  modules the real command loads that it should not (store, SQLAlchemy, overlays, sklearn).
- `baselines`: `python -m worldkit infoorg baselines --family F --source S` wall time; target
  <= 60 s per family (`--families design,recap`, sources under `--data`).

    python bench/infoorg.py [--repeats 5] [--families design,recap] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("sqlalchemy", "worldkit.store", "worldkit.overlay", "worldkit.infoorg.overlays",
             "sklearn", "scipy")
SOURCES = {"design": "kep", "recap": "ami"}

_ONLY_SCORE = """
import sys, typer
from worldkit._cli import infoorg_group, infoorg_score
app = typer.Typer()
infoorg_group.register(app)
infoorg_score.register(app)
sys.exit(typer.main.get_command(app).main(args=sys.argv[1:], standalone_mode=False) or 0)
"""


def make_pair(folder: Path, n: int = 10_000, seed: int = 1) -> tuple[Path, Path]:
    rng = random.Random(seed)
    reference = {f"F{i:05d}": [f"p{rng.randrange(250)}", f"l{rng.randrange(4)}"] for i in range(n)}
    output = {
        record: ["organized", parent, leaf if rng.random() < 0.9 else "merged"]
        for record, (parent, leaf) in reference.items()
    }
    ref, out = folder / "ref.json", folder / "out.json"
    ref.write_text(json.dumps(reference), encoding="utf-8")
    out.write_text(json.dumps(output), encoding="utf-8")
    return ref, out


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds (user + system of the child) of each run; on a shared, loaded
    machine the CPU time is what the command itself costs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    times, cpu = [], []
    for _ in range(repeats):
        before, start = _child_cpu(), time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env, cwd=ROOT)
        times.append(time.perf_counter() - start)
        cpu.append(_child_cpu() - before)
    return times, cpu


def loaded_modules(argv: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True,
                          text=True, env=env, cwd=ROOT, check=True)
    names = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    return sorted(n for n in names if n.startswith(FORBIDDEN))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--families", default="design,recap")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        ref, out = make_pair(Path(scratch))
        command = ["infoorg", "score-trees", str(ref), str(out), "--json"]
        full = [sys.executable, "-m", "worldkit", *command]
        only = [sys.executable, "-c", _ONLY_SCORE, *command]
        for name, argv in (("score_trees_cli", full), ("score_trees_infoorg_cli", only)):
            times, cpu = timed(argv, args.repeats)
            print(json.dumps({
                "bench": name, "records": 10_000, "repeats": args.repeats,
                "median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                "cpu_median_s": round(statistics.median(cpu), 3), "load_1min": os.getloadavg()[0],
                "target_s": 0.5, "meets_target": statistics.median(times) <= 0.5,
                "heavy_modules_loaded": loaded_modules(argv[1:]),
            }), flush=True)
    for family in [f for f in args.families.split(",") if f]:
        source = args.data / SOURCES[family]
        argv = [sys.executable, "-m", "worldkit", "infoorg", "baselines", "--family", family,
                "--source", str(source), "--json"]
        before, start = _child_cpu(), time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(argv, check=True, capture_output=True, text=True, env=env, cwd=ROOT)
        seconds, cpu_seconds = time.perf_counter() - start, _child_cpu() - before
        summary = json.loads(done.stdout)
        print(json.dumps({
            "bench": "baselines", "family": family, "tasks": summary["tasks"],
            "wall_s": round(seconds, 1), "cpu_s": round(cpu_seconds, 1),
            "load_1min": os.getloadavg()[0], "target_s": 60, "meets_target": seconds <= 60,
            "mean_S": summary["mean_S"], "paper_S": summary["paper_S"],
            "counts": summary["counts"],
        }), flush=True)


if __name__ == "__main__":
    main()
