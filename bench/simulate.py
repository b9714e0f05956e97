"""Planted-effect calibration bench: coverage of worldkit's 95% task-cluster GEE intervals at the
paper's design (8 tasks, 72 criteria, 3 agents, 192 runs), with the model fitted to the public
WorkWorlds ledgers (`worldkit.analysis.power.fit_pilot`) and the paper's own effects planted.

Target: coverage within 93–97% at K ≥ 200 simulated ledgers. The bootstrap uses `--replicates`
(default 100, not the paper's 2,000, so K = 200 fits in a few minutes of CPU): fewer replicates
make each interval's end points noisier, which can only move coverage, not bias. Prints one JSON
line: the planted effects, bias, RMSE, coverage and rejection rate (each with its Monte Carlo
SE), mean width, the fitted model, and wall and CPU seconds.

    python bench/simulate.py [--sims 200] [--replicates 100] [--seed 1] [--stated]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
LEDGERS = Path(os.environ.get("WORLDKIT_SHARED_DATA", REPO.parent / "shared" / "data")) / "workworld"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stated", action="store_true", help="Use the stated default model, not the paper's fit.")
    args = parser.parse_args()

    from worldkit.analysis.ledgers import read_ledgers
    from worldkit.analysis.power import fit_pilot
    from worldkit.analysis.simulate import PAPER_DESIGN, SimModel, simulate

    started, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
    if args.stated:
        design, model, pass_effect, access_effect = PAPER_DESIGN, SimModel(), 0.087, 0.176
    else:
        pilot = fit_pilot(read_ledgers(LEDGERS))
        design, model, pass_effect, access_effect = pilot.design, pilot.model, pilot.pass_effect, pilot.access_effect
    fitted = time.monotonic() - started

    def progress(done: int) -> None:
        if done % 10 == 0 or done == args.sims:
            print(f"{done}/{args.sims} ledgers, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)

    report = simulate(design, model, pass_effect=pass_effect, access_effect=access_effect, sims=args.sims,
                      replicates=args.replicates, seed=args.seed, progress=progress)  # fmt: skip
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "design": design.model_dump(), "model": model.model_dump(), "pilot": None if args.stated else str(LEDGERS),
        "sims": args.sims, "replicates": args.replicates, "seed": args.seed,
        "pass": report.passed.model_dump(), "access": report.access.model_dump(),
        "fit_seconds": round(fitted, 1), "wall_seconds": round(time.monotonic() - started, 1),
        "cpu_seconds": round(usage.ru_utime - cpu0, 1), "load_average": os.getloadavg(),
    }, sort_keys=True))  # fmt: skip


if __name__ == "__main__":
    main()
