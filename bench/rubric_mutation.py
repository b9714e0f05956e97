"""What the mutation gate costs `verify`: `worldkit verify --world W` with and without the campaign.

Runs, each in a fresh process: `verify --world W --only <every check but rubric-mutation>` and
`verify --world W` with an empty cache folder (cold: the world cache and the campaign reports are
built), then both again on the filled cache (warm: what a `verify` after `overlay freeze` pays).
Also times the campaign alone per task, in one process on one materialized projection each, with
the report cache off. Prints one JSON object (seconds; medians of `--repeats`).

    python bench/rubric_mutation.py [--world pharmaco_demo] [--repeats 1] [--tmp DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
WORLDKIT = [sys.executable, "-m", "worldkit"]


def _verify(world: str, cache: Path, extra: list[str]) -> float:
    env = {**os.environ, "WORLDKIT_CACHE": str(cache), "PYTHONPATH": str(REPO)}
    started = time.perf_counter()
    subprocess.run([*WORLDKIT, "verify", "--world", world, "--json", *extra], cwd=REPO, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)  # fmt: skip
    return time.perf_counter() - started


def _campaigns(world: str, scratch: Path) -> dict[str, float]:
    os.environ["WORLDKIT_CACHE"] = "off"
    from worldkit.materialize import materialize
    from worldkit.mutate.campaign import run_campaign
    from worldkit.overlay.load import load_overlay, overlay_world
    from worldkit.verify.tasks import overlay_files

    seconds: dict[str, float] = {}
    for number, path in enumerate(overlay_files(REPO / "overlays" / world)):
        model = load_overlay(path)
        projection = materialize(overlay_world(model), model.rev, model.date, model.seat, scratch / f"p{number}").out
        started = time.perf_counter()
        run_campaign(model, projection, scratch / f"s{number}")
        seconds[model.id] = round(time.perf_counter() - started, 2)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default="pharmaco_demo")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--tmp", type=Path, default=None)
    args = parser.parse_args()
    from worldkit.verify.checks import check_ids

    root = Path(tempfile.mkdtemp(prefix="bench-rubric-mutation-", dir=args.tmp))
    others = ",".join(c for c in check_ids() if c != "rubric-mutation")
    times: dict[str, list[float]] = {k: [] for k in ("cold_without", "cold_with", "warm_without", "warm_with")}
    for repeat in range(args.repeats):
        for label, extra in (("without", ["--only", others]), ("with", [])):
            cache = root / f"cache-{label}-{repeat}"
            cache.mkdir()
            times[f"cold_{label}"].append(_verify(args.world, cache, extra))
            times[f"warm_{label}"].append(_verify(args.world, cache, extra))
    campaigns = _campaigns(args.world, root / "campaigns")
    result = {k: round(statistics.median(v), 2) for k, v in times.items()}
    result |= {"campaign_seconds": campaigns, "campaign_total": round(sum(campaigns.values()), 2),
               "world": args.world, "repeats": args.repeats, "load_average": os.getloadavg()}  # fmt: skip
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
