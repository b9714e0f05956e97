"""Power before a campaign: how often the 95% interval excludes 0, and how wide it is, per repeats.

Two sources of the data-generating model (`worldkit.analysis.simulate.SimModel`):

- a **pilot** (`fit_pilot`): result rows of earlier runs. Access and pass given access are each
  fitted as a logistic mixed model — condition and agent fixed; task, criterion-within-task, run
  and the task's own condition effect random — by statsmodels' `BinomialBayesMixedGLM` (variational Bayes, posterior means); the
  pass rate without access is the pooled share. The pilot's design (criteria per task, agents,
  full runs per task × agent, packets) is the design whose repeats vary, and the effects to plant
  default to the pilot's own GEE estimates (worldkit's analysis, no bootstrap);
- **stated assumptions**: a `SimDesign` and `SimModel` given directly.

`power` then runs `simulate` at each repeats count and reports, for the pass and the access
contrast, the rejection rate (the interval excludes 0) and the mean interval width, each with
its Monte Carlo standard error.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from worldkit._model import Model
from worldkit.analysis.executions import executions
from worldkit.analysis.simulate import Metric, SimDesign, SimModel, Spread, simulate
from worldkit.errors import UsageError
from worldkit.record.results import ResultRow

__all__ = ["Pilot", "PowerReport", "PowerRow", "fit_pilot", "power", "stated_design"]


class Pilot(Model):
    """What a pilot says about the design and the model."""

    design: SimDesign
    """The pilot's own design."""
    model: SimModel
    """The fitted model."""
    pass_effect: float
    """The pilot's GEE-standardized pass difference (curated − full)."""
    access_effect: float
    """The pilot's GEE-standardized access difference."""
    rows: int
    """Criterion executions fitted."""


def _design_of(rows: Sequence[ResultRow]) -> SimDesign:
    tasks = sorted({r.task for r in rows})
    criteria = [len({r.criterion_id for r in rows if r.task == t}) for t in tasks]
    agents = sorted({r.agent for r in rows})
    full_runs = {(r.task, r.agent, r.run_key) for r in rows if r.condition == "full"}
    packets = sorted({r.packet or "curated" for r in rows if r.condition == "curated"})
    cells = len(tasks) * len(agents)
    repeats = max(1, round(len(full_runs) / cells)) if cells else 1
    return SimDesign(criteria=criteria, agents=len(agents), repeats=repeats, packets=max(1, len(packets)))


def _mixed(frame: object, outcome: str) -> tuple[np.ndarray, Spread]:
    """Fixed-effect means (intercept, curated, agents…) and random-effect SDs of one outcome."""
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    model = BinomialBayesMixedGLM.from_formula(
        f"{outcome} ~ curated + C(agent)",
        {"task": "0 + C(task)", "criterion": "0 + C(criterion)", "run": "0 + C(run)", "condition": "0 + C(task):curated"},
        frame,
    )
    with warnings.catch_warnings():  # the variational fit's exp() overflows on the way; its result is checked below
        warnings.simplefilter("ignore", RuntimeWarning)
        fitted = model.fit_vb()
    if not (np.all(np.isfinite(fitted.fe_mean)) and np.all(np.isfinite(fitted.vcp_mean))):
        raise UsageError(f"the pilot's {outcome} model could not be fitted (non-finite estimates); state the model with --design")
    sd = dict(zip(model.vcp_names, np.exp(np.asarray(fitted.vcp_mean, dtype=float)), strict=True))
    return np.asarray(fitted.fe_mean, dtype=float), Spread(task=sd["task"], criterion=sd["criterion"], run=sd["run"],
                                                          condition=sd["condition"])


def fit_pilot(rows: Iterable[ResultRow]) -> Pilot:
    """Fit the simulation model to a pilot's rows (see the module docstring)."""
    import pandas as pd

    from worldkit.analysis.analyze import analyze_executions

    every = list(rows)
    kept = [r for r in every if r.passed is not None and r.accessed is not None]
    if len({r.task for r in kept}) < 2 or {r.condition for r in kept} != {"full", "curated"}:
        raise UsageError("the pilot needs graded rows with known access in both conditions on at least 2 tasks")
    agents = sorted({r.agent for r in kept})
    frame = pd.DataFrame({
        "task": [r.task for r in kept],
        "criterion": [f"{r.task}/{r.criterion_id}" for r in kept],
        "run": [r.run_key for r in kept],
        "agent": pd.Categorical([r.agent for r in kept], categories=agents),
        "curated": [float(r.condition == "curated") for r in kept],
        "accessed": [float(bool(r.accessed)) for r in kept],
        "passed": [float(bool(r.passed)) for r in kept],
    })  # fmt: skip
    access_fe, access_sd = _mixed(frame, "accessed")
    given = frame[frame["accessed"] == 1.0]
    pass_fe, pass_sd = _mixed(given, "passed")
    without = frame[frame["accessed"] == 0.0]
    model = SimModel(
        access_intercept=float(access_fe[0]), access_agents=[0.0, *map(float, access_fe[2:])],
        pass_intercept=float(pass_fe[0]), pass_agents=[0.0, *map(float, pass_fe[2:])],
        pass_without_access=float(without["passed"].mean()) if len(without) else 0.0,
        access_sd=access_sd, pass_sd=pass_sd,
    )  # fmt: skip
    analysis = analyze_executions(executions(every), "pilot", replicates=0)  # the estimates as the pilot's report gives them
    if analysis.passed is None or analysis.passed.contrast is None or analysis.access is None or analysis.access.contrast is None:
        raise UsageError(f"the pilot's own analysis gives no estimate ({analysis.reason or 'perfect separation'}); "
                         "state the effect with --effect")  # fmt: skip
    return Pilot(
        design=_design_of(kept), model=model, pass_effect=analysis.passed.contrast.difference,
        access_effect=analysis.access.contrast.difference, rows=len(kept),
    )  # fmt: skip


class PowerRow(Model):
    """One repeats count."""

    repeats: int
    """Full runs per task × agent (curated: as many, over the packets)."""
    runs: int
    """Runs in the design."""
    passed: Metric
    """The pass contrast over the simulated campaigns."""
    access: Metric
    """The access contrast."""


class PowerReport(Model):
    """What `worldkit power` prints."""

    design: SimDesign
    """The design at the pilot's (or stated) repeats."""
    model: SimModel
    """The data-generating model."""
    source: str
    """`pilot PATH` or `stated assumptions`."""
    pass_effect: float
    """Planted pass effect (proportion)."""
    access_effect: float
    """Planted access effect (proportion)."""
    sims: int
    """Simulated campaigns per repeats count."""
    replicates: int
    """Bootstrap replicates per simulated campaign."""
    seed: int
    """Seed (the same for every repeats count: common random numbers)."""
    rows: list[PowerRow]
    """One per repeats count, in the order given."""


def power(
    design: SimDesign,
    model: SimModel,
    repeats: Sequence[int],
    *,
    pass_effect: float,
    access_effect: float,
    sims: int,
    replicates: int,
    seed: int,
    source: str,
    progress: Callable[[int], None] | None = None,
) -> PowerReport:
    """Simulate the design at each repeats count (see the module docstring)."""
    if not repeats or any(r < 1 for r in repeats):
        raise UsageError(f"--repeats takes counts of at least 1, e.g. 2,4,8 (got {','.join(map(str, repeats))})")
    done = 0
    rows = []
    for count in repeats:
        shaped = design.with_repeats(count)

        def tick(k: int, base: int = done) -> None:
            if progress is not None:
                progress(base + k)

        report = simulate(shaped, model, pass_effect=pass_effect, access_effect=access_effect, sims=sims,
                          replicates=replicates, seed=seed, progress=tick)  # fmt: skip
        done += sims
        rows.append(PowerRow(repeats=count, runs=shaped.runs, passed=report.passed, access=report.access))
    return PowerReport(
        design=design, model=model, source=source, pass_effect=pass_effect, access_effect=access_effect, sims=sims,
        replicates=replicates, seed=seed, rows=rows,
    )  # fmt: skip



def stated_design(ref: str, *, tasks: int | None = None, repeats: int | None = None) -> SimDesign:
    """The design `ref` names: `paper` (the WorkWorlds study) or a campaign design file, whose
    overlays give the criteria per task (tasks it cannot load count the mean of the others, or
    9); `tasks` and `repeats` override (criteria per task cycle over the tasks)."""
    from pathlib import Path

    from worldkit.analysis.simulate import PAPER_DESIGN

    if ref == "paper":
        design = PAPER_DESIGN
    else:
        from worldkit.campaign.design import load_design
        from worldkit.overlay import load_overlay, resolve_overlay

        path = Path(ref)
        if not path.is_file():
            raise UsageError(f"--design {ref}: no such file; give `paper` or a campaign design YAML file")
        campaign = load_design(path)
        counts: list[int | None] = []
        for task in campaign.tasks:
            local = path.parent / task
            try:
                counts.append(len(load_overlay(resolve_overlay(str(local if local.exists() else task))).rubric))
            except Exception:  # noqa: BLE001 - an unreadable task counts as an average one, said in the docstring
                counts.append(None)
        known = [c for c in counts if c]
        fill = round(sum(known) / len(known)) if known else 9
        criteria = [c or fill for c in counts]
        if len(criteria) < 2:
            criteria = criteria * 2
        design = SimDesign(criteria=criteria, agents=len(campaign.agents), repeats=max(1, campaign.conditions.full),
                           packets=2)  # fmt: skip
    if tasks is not None:
        if tasks < 2:
            raise UsageError(f"--tasks must be at least 2 (task-cluster intervals need 2 clusters; got {tasks})")
        design = design.model_copy(update={"criteria": [design.criteria[i % len(design.criteria)] for i in range(tasks)]})
    if repeats is not None:
        design = design.with_repeats(repeats)
    return design
