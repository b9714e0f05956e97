"""Fit the simulation model (`worldkit.analysis.simulate.SimModel`) to a pilot's result rows.

Two steps, because a task-cluster interval's width is set by how much the tasks' own condition
effects differ, and that is what a variational mixed-model fit estimates worst from 8 tasks:

1. **Within-task structure** — access and pass given access are each fitted as a logistic mixed
   model (condition and agent fixed; task, criterion-within-task, run, agent × task, task ×
   condition and criterion × condition random) by statsmodels' `BinomialBayesMixedGLM`
   (variational Bayes, posterior means). The pass rate without access is the pooled share.
2. **Between-task structure, by simulated moments** — the SDs of the tasks' condition effects
   (access, pass), their correlation and the correlation of the tasks' access and pass intercepts
   are chosen (`scipy.optimize.minimize`, Nelder–Mead) so that ledgers drawn from the model at
   the pilot's design reproduce, on average over `MOMENT_DRAWS` draws with fixed seeds (common
   random numbers), the pilot's own between-task moments (`task_moments`): the SD over tasks of
   the raw curated − full difference of pass and of access, the correlation of the two, and the
   correlation of the tasks' full-projection access and pass rates, each weighted by its
   sampling precision. Sampling noise is in the draws as in the pilot, so it is not counted
   twice.

With 8 tasks these moments are themselves uncertain; the fit reproduces the pilot, not the
population the pilot came from. The result depends only on the rows (fixed seeds).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from worldkit._model import Model
from worldkit.analysis.executions import Executions, executions
from worldkit.analysis.simulate import Planted, SimDesign, SimModel, Spread, draw, planted
from worldkit.errors import UsageError
from worldkit.record.results import ResultRow

__all__ = ["MOMENT_DRAWS", "Pilot", "TaskMoments", "fit_pilot", "task_moments"]

MOMENT_DRAWS = 120
"""Simulated ledgers per evaluation of the moment fit."""
_MOMENT_SEED = 20_261_204


class TaskMoments(Model):
    """Between-task and within-task summaries of one ledger (raw shares, proportions)."""

    pass_difference_sd: float
    """SD over tasks of the task's raw pass difference, curated − full."""
    access_difference_sd: float
    """SD over tasks of the task's raw access difference."""
    difference_correlation: float
    """Correlation over tasks of the pass and access differences."""
    full_correlation: float
    """Correlation over tasks of the full-projection access and pass rates."""
    task_pass_sd: float
    """SD over tasks of the full-projection pass rate."""
    criterion_pass_sd: float
    """SD over criteria of the full-projection pass rate."""
    agent_pass_sd: float
    """SD over agents of the pass rate."""


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    if a.std() == 0 or b.std() == 0:
        return 0.0
    return float(np.corrcoef(a, b)[0, 1])


def task_moments(data: Executions) -> TaskMoments:
    """The moments the fit matches and the bench compares (unknown outcomes left out)."""
    n = len(data.tasks)

    def shares(values: np.ndarray, mask: np.ndarray, groups: np.ndarray, size: int) -> np.ndarray:
        keep = mask & ~np.isnan(values)
        total = np.bincount(groups[keep], weights=values[keep], minlength=size)
        count = np.bincount(groups[keep], minlength=size)
        with np.errstate(invalid="ignore", divide="ignore"):
            return total / count

    full, cur = ~data.curated, data.curated
    diff = {}
    for key, values in (("pass", data.passed), ("access", data.accessed)):
        diff[key] = shares(values, cur, data.task, n) - shares(values, full, data.task, n)
    full_pass = shares(data.passed, full, data.task, n)
    full_access = shares(data.accessed, full, data.task, n)
    # criteria: one id per (task, criterion position within the run's rows)
    criterion = _criterion_index(data)
    crit_pass = shares(data.passed, full, criterion, int(criterion.max()) + 1)
    agent_pass = shares(data.passed, np.ones(len(data), dtype=bool), data.agent, len(data.agents))

    def sd(x: np.ndarray) -> float:
        x = x[np.isfinite(x)]
        return float(x.std(ddof=1)) if len(x) > 1 else 0.0

    ok = np.isfinite(diff["pass"]) & np.isfinite(diff["access"])
    ok_full = np.isfinite(full_pass) & np.isfinite(full_access)
    return TaskMoments(
        pass_difference_sd=sd(diff["pass"]), access_difference_sd=sd(diff["access"]),
        difference_correlation=_corr(diff["pass"][ok], diff["access"][ok]),
        full_correlation=_corr(full_pass[ok_full], full_access[ok_full]),
        task_pass_sd=sd(full_pass), criterion_pass_sd=sd(crit_pass), agent_pass_sd=sd(agent_pass),
    )  # fmt: skip


def _criterion_index(data: Executions) -> np.ndarray:
    """A criterion number per row: its position among its run's rows (a run lists its task's
    criteria in one order), offset by task."""
    order = np.argsort(data.run, kind="stable")
    runs = data.run[order]
    starts = np.r_[0, np.flatnonzero(np.diff(runs)) + 1]
    lengths = np.diff(np.r_[starts, len(runs)])
    position = np.empty(len(data), dtype=np.int64)
    position[order] = np.arange(len(runs)) - np.repeat(starts, lengths)
    width = int(lengths.max()) if len(lengths) else 1
    return data.task * width + position


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
    observed: TaskMoments
    """The pilot's own moments."""
    simulated: TaskMoments
    """The same moments averaged over `MOMENT_DRAWS` ledgers drawn from the fitted model."""


def _design_of(rows: Sequence[ResultRow]) -> SimDesign:
    tasks = sorted({r.task for r in rows})
    criteria = [len({r.criterion_id for r in rows if r.task == t}) for t in tasks]
    agents = sorted({r.agent for r in rows})
    full_runs = {(r.task, r.agent, r.run_key) for r in rows if r.condition == "full"}
    packets = sorted({r.packet or "curated" for r in rows if r.condition == "curated"})
    cells = len(tasks) * len(agents)
    repeats = max(1, round(len(full_runs) / cells)) if cells else 1
    return SimDesign(criteria=criteria, agents=len(agents), repeats=repeats, packets=max(1, len(packets)))


_COMPONENTS = {
    "task": "0 + C(task)", "criterion": "0 + C(criterion)", "run": "0 + C(run)",
    "agent_task": "0 + C(agent_task)", "condition": "0 + C(task):curated",
    "criterion_condition": "0 + C(criterion):curated",
}


def _mixed(frame: object, outcome: str) -> tuple[np.ndarray, Spread]:
    """Fixed-effect means (intercept, curated, agents…) and random-effect SDs of one outcome."""
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    model = BinomialBayesMixedGLM.from_formula(f"{outcome} ~ curated + C(agent)", _COMPONENTS, frame)
    with warnings.catch_warnings():  # the variational fit's exp() overflows on the way; its result is checked below
        warnings.simplefilter("ignore", RuntimeWarning)
        fitted = model.fit_vb()
    if not (np.all(np.isfinite(fitted.fe_mean)) and np.all(np.isfinite(fitted.vcp_mean))):
        raise UsageError(f"the pilot's {outcome} model could not be fitted (non-finite estimates); state the model with --design")
    sd = dict(zip(model.vcp_names, np.exp(np.asarray(fitted.vcp_mean, dtype=float)), strict=True))
    return np.asarray(fitted.fe_mean, dtype=float), Spread(**{name: float(sd[name]) for name in _COMPONENTS})


def _with(model: SimModel, x: np.ndarray) -> SimModel:
    """The model with the four between-task parameters of the moment fit set from `x`
    (log SDs of the condition effects, atanh of the two correlations)."""
    return model.model_copy(update={
        "access_sd": model.access_sd.model_copy(update={"condition": float(np.exp(x[0]))}),
        "pass_sd": model.pass_sd.model_copy(update={"condition": float(np.exp(x[1]))}),
        "condition_correlation": float(np.tanh(x[2])), "task_correlation": float(np.tanh(x[3])),
    })  # fmt: skip


_TARGETS = ("pass_difference_sd", "access_difference_sd", "difference_correlation", "full_correlation")


def _drawn_moments(design: SimDesign, model: SimModel, plant: Planted, draws: int) -> np.ndarray:
    """(draws, moments): `task_moments` of ledgers drawn with fixed seeds (common random numbers)."""
    found = [task_moments(draw(design, model, plant, np.random.default_rng([_MOMENT_SEED, k]))) for k in range(draws)]
    return np.array([[getattr(m, f) for f in TaskMoments.model_fields] for m in found])


def _mean_moments(design: SimDesign, model: SimModel, plant: Planted, draws: int) -> TaskMoments:
    return TaskMoments(**dict(zip(TaskMoments.model_fields, _drawn_moments(design, model, plant, draws).mean(axis=0).tolist(),
                                  strict=True)))


def _moment_fit(design: SimDesign, model: SimModel, effects: tuple[float, float], observed: TaskMoments) -> SimModel:
    """Minimize the squared distance between the pilot's moments and their simulated means, each
    scaled by its sampling SD over the draws at the starting point (diagonal GMM weighting: a
    correlation over 8 tasks is far noisier than an SD, and weighs less). Each candidate model
    plants the pilot's own (access, pass) effects, as `simulate` and `power` will."""
    from scipy.optimize import minimize

    def plant(candidate: SimModel) -> Planted | None:
        try:
            return planted(candidate, design.agents, *effects)
        except UsageError:
            return None

    fields = list(TaskMoments.model_fields)
    index = [fields.index(f) for f in _TARGETS]
    target = np.array([getattr(observed, f) for f in _TARGETS])
    start = np.array([
        math.log(max(model.access_sd.condition, 0.05)), math.log(max(model.pass_sd.condition, 0.05)),
        math.atanh(float(np.clip(observed.difference_correlation, -0.9, 0.9))),
        math.atanh(float(np.clip(observed.full_correlation, -0.9, 0.9))),
    ])  # fmt: skip
    first = plant(_with(model, start))
    if first is None:
        raise UsageError("the pilot's own effects cannot be planted in the model fitted to it; state the model with --design")
    scale = np.maximum(_drawn_moments(design, _with(model, start), first, MOMENT_DRAWS)[:, index].std(axis=0, ddof=1), 1e-3)

    def loss(x: np.ndarray) -> float:
        candidate = _with(model, x)
        planting = plant(candidate)
        if planting is None:
            return 1e6
        got = _drawn_moments(design, candidate, planting, MOMENT_DRAWS)[:, index].mean(axis=0)
        return float((((got - target) / scale) ** 2).sum())

    bounds = [(math.log(0.01), math.log(5.0)), (math.log(0.01), math.log(5.0)), (-2.6, 2.6), (-2.6, 2.6)]
    best = minimize(loss, start, method="Nelder-Mead", bounds=bounds, options={"xatol": 0.02, "fatol": 1e-4, "maxfev": 240})
    return _with(model, best.x)  # the best point found, converged or not: `Pilot.simulated` shows the match


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
        "agent_task": [f"{r.agent}/{r.task}" for r in kept],
        "curated": [float(r.condition == "curated") for r in kept],
        "accessed": [float(bool(r.accessed)) for r in kept],
        "passed": [float(bool(r.passed)) for r in kept],
    })  # fmt: skip
    access_fe, access_sd = _mixed(frame, "accessed")
    pass_fe, pass_sd = _mixed(frame[frame["accessed"] == 1.0], "passed")
    without = frame[frame["accessed"] == 0.0]
    model = SimModel(
        access_intercept=float(access_fe[0]), access_agents=[0.0, *map(float, access_fe[2:])],
        pass_intercept=float(pass_fe[0]), pass_agents=[0.0, *map(float, pass_fe[2:])],
        pass_without_access=float(without["passed"].mean()) if len(without) else 0.0,
        access_sd=access_sd, pass_sd=pass_sd, task_correlation=0.0, condition_correlation=0.0,
    )  # fmt: skip
    design = _design_of(kept)
    data = executions(every)
    observed = task_moments(data)
    analysis = analyze_executions(data, "pilot", replicates=0)  # the estimates as the pilot's report gives them
    if analysis.passed is None or analysis.passed.contrast is None or analysis.access is None or analysis.access.contrast is None:
        raise UsageError(f"the pilot's own analysis gives no estimate ({analysis.reason or 'perfect separation'}); "
                         "state the effect with --effect")  # fmt: skip
    effects = (analysis.access.contrast.difference, analysis.passed.contrast.difference)
    model = _moment_fit(design, model, effects, observed)
    simulated = _mean_moments(design, model, planted(model, design.agents, *effects), MOMENT_DRAWS)
    return Pilot(
        design=design, model=model, pass_effect=effects[1], access_effect=effects[0], rows=len(kept),
        observed=observed, simulated=simulated,
    )  # fmt: skip
