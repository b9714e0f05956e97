"""Planted-effect calibration bench: coverage of worldkit's 95% intervals at the paper's design
(8 tasks, 72 criteria, 3 agents, 192 runs), with the model fitted to the public WorkWorlds
ledgers (`worldkit.analysis.pilot.fit_pilot`) and the paper's own effects planted.

Both interval methods are evaluated on the same ledgers: `paper` (the study's percentile
task-cluster GEE bootstrap) and `mancl` (bias-reduced sandwich, MOVER, t with Bell–McCaffrey df). Target:
coverage within 93–97% at K ≥ 200 for the method meant to cover. The bootstrap uses
`--replicates` (default 100, not the paper's 2,000, so K = 200 fits in minutes on a shared
2-core machine): fewer replicates make each end point noisier, which can only move coverage a
little, not bias. `--sims-mancl` adds ledgers analysed by `mancl` alone (no bootstrap, fast) to
tighten its Monte Carlo error.

Prints one JSON line: per outcome and method the planted effect, bias, RMSE, coverage, rejection
rate and width (each with its Monte Carlo SE), the width's spread over ledgers, the fitted model,
the pilot's and the fitted model's between-task moments, and wall and CPU seconds.

`--sims 0 --sims-mancl K` evaluates `mancl` alone; `--repeats R` changes the design's repeats.
Each metric also gives the share of intervals wholly above (`above`) and below (`below`) the
truth: on which side the misses fall.

    python bench/simulate.py [--sims 200] [--sims-mancl 1000] [--replicates 100] [--seed 1] [--repeats R] [--stated]
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
    parser.add_argument("--sims", type=int, default=200, help="Ledgers analysed with both intervals (0: none).")
    parser.add_argument("--sims-mancl", type=int, default=0, help="Ledgers for the `mancl` interval alone (>= --sims).")
    parser.add_argument("--replicates", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=0,
                        help="Full runs per task × agent (default: the pilot's, 4); the curated runs are as many.")
    parser.add_argument("--stated", action="store_true", help="Use the stated default model, not the paper's fit.")
    args = parser.parse_args()

    from worldkit.analysis.ledgers import read_ledgers
    from worldkit.analysis.pilot import fit_pilot
    from worldkit.analysis.simulate import PAPER_DESIGN, SimModel, simulate

    started, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF).ru_utime
    moments = None
    if args.stated:
        design, model, pass_effect, access_effect = PAPER_DESIGN, SimModel(), 0.087, 0.176
    else:
        pilot = fit_pilot(read_ledgers(LEDGERS))
        design, model, pass_effect, access_effect = pilot.design, pilot.model, pilot.pass_effect, pilot.access_effect
        moments = {"pilot": pilot.observed.model_dump(), "fitted_model": pilot.simulated.model_dump()}
    if args.repeats:
        design = design.with_repeats(args.repeats)
    fitted = time.monotonic() - started

    def progress(total: int):  # noqa: ANN202
        def tick(done: int) -> None:
            if done % 20 == 0 or done == total:
                print(f"{done}/{total} ledgers, {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        return tick

    result: dict[str, dict[str, object]] = {"pass": {}, "access": {}}
    if args.sims:
        both = simulate(design, model, pass_effect=pass_effect, access_effect=access_effect, sims=args.sims,
                        replicates=args.replicates, seed=args.seed, progress=progress(args.sims))  # fmt: skip
        result = {key: {m: v.model_dump() for m, v in getattr(both, attr).items()}
                  for key, attr in (("pass", "passed"), ("access", "access"))}
    paper_done = time.monotonic() - started
    if args.sims_mancl > args.sims:
        alone = simulate(design, model, pass_effect=pass_effect, access_effect=access_effect, sims=args.sims_mancl,
                         replicates=args.replicates, seed=args.seed, intervals=["mancl"],
                         progress=progress(args.sims_mancl))  # fmt: skip
        result["pass"]["mancl"] = alone.passed["mancl"].model_dump()
        result["access"]["mancl"] = alone.access["mancl"].model_dump()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({
        "design": design.model_dump(), "model": model.model_dump(), "pilot": None if args.stated else str(LEDGERS),
        "moments": moments, "sims": args.sims, "sims_mancl": max(args.sims, args.sims_mancl),
        "replicates": args.replicates, "seed": args.seed, **result,
        "fit_seconds": round(fitted, 1), "paper_and_mancl_seconds": round(paper_done - fitted, 1),
        "wall_seconds": round(time.monotonic() - started, 1),
        "cpu_seconds": round(usage.ru_utime - cpu0, 1), "load_average": os.getloadavg(),
    }, sort_keys=True))  # fmt: skip


if __name__ == "__main__":
    main()
