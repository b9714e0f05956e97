"""Planted-effect calibration: synthetic ledgers from a stated model, analysed by worldkit itself.

The model (every parameter a field of `SimModel`, on the logit scale unless said otherwise):

    access:          logit P(accessed) = a0 + a[agent] + (a_c + s_task)·curated + u_task + u_crit + u_run
    pass | accessed: logit P(pass)     = p0 + p[agent] + (p_c + t_task)·curated + w_task + w_crit + w_run
    pass | not:      P(pass)           = pass_without_access   (absence-credited criteria)

with independent normal random effects per task, per criterion (within its task), per run, and a
task's own condition effect (s_task, t_task: a task × condition random slope).
The condition effects are *planted on the scale the analysis estimates*: `a_c` and `p_c` are
solved (Gauss–Hermite integration over the random effects, `scipy.optimize.brentq`) so that the
agent-standardized, population-averaged difference curated − full is exactly the stated access
and pass effect — the estimand of the paper's GEE. Curated runs are spread over the packets
(no packet effect).

`simulate` draws `sims` ledgers of a `SimDesign` (numpy `default_rng([seed, sim])`, so each
ledger depends only on the seed and its index), runs `analyze_executions` on each, and reports
bias, RMSE, 95% interval coverage and rejection rate (interval excluding 0), each with its Monte
Carlo standard error. `worldkit.analysis.power` builds on it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from worldkit._model import Model
from worldkit.analysis.analyze import analyze_executions
from worldkit.analysis.executions import Executions
from worldkit.errors import UsageError

__all__ = ["PAPER_DESIGN", "Metric", "SimDesign", "SimModel", "SimReport", "Spread", "draw", "planted", "simulate"]

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


class SimDesign(Model):
    """Who runs what how often: the shape of a matched campaign."""

    criteria: list[int] = Field(min_length=2)
    """Criteria per task (one entry per task)."""
    agents: int = Field(ge=1)
    """Agents in the panel."""
    repeats: int = Field(ge=1)
    """Runs per task × agent on the full projection; the curated runs are as many, spread
    evenly over the packets (the paper: 4 full, 2 per curator's packet)."""
    packets: int = Field(default=2, ge=1)
    """Curated packets per task."""

    @property
    def per_packet(self) -> int:
        return max(1, math.ceil(self.repeats / self.packets))

    @property
    def runs(self) -> int:
        return len(self.criteria) * self.agents * (self.repeats + self.per_packet * self.packets)

    def with_repeats(self, repeats: int) -> SimDesign:
        return self.model_copy(update={"repeats": repeats})


PAPER_DESIGN = SimDesign(criteria=[11, 11, 9, 14, 9, 8, 5, 5], agents=3, repeats=4, packets=2)
"""The WorkWorlds study: 8 tasks (72 criteria), 3 agents, 4 full runs and 2 per curator's packet
per task × agent (192 runs)."""


class Spread(Model):
    """Standard deviations of the normal random effects on the logit scale."""

    task: float = Field(default=0.0, ge=0)
    """Between tasks."""
    criterion: float = Field(default=0.0, ge=0)
    """Between criteria of a task."""
    run: float = Field(default=0.0, ge=0)
    """Between runs."""
    condition: float = Field(default=0.0, ge=0)
    """Between tasks' own condition effects (a task × condition random slope, added under
    curation): what makes the task-cluster interval of the difference wide."""

    def total(self, curated: bool) -> float:
        """SD of all random effects of one execution under the condition."""
        return math.sqrt(self.task**2 + self.criterion**2 + self.run**2 + (self.condition**2 if curated else 0.0))


class SimModel(Model):
    """The stated data-generating model (see the module docstring); defaults are assumptions near
    the paper's fitted values (`worldkit power --ledgers` prints a pilot's own)."""

    access_intercept: float = 0.0
    """a0: logit of access on the full projection for the reference agent at mean effects."""
    access_agents: list[float] = Field(default_factory=lambda: [0.0, 0.4, -0.4])
    """a[agent]: one offset per agent (cycled if the design has more agents)."""
    pass_intercept: float = 1.0
    """p0: logit of pass given access, full projection, reference agent."""
    pass_agents: list[float] = Field(default_factory=lambda: [0.0, 0.3, -0.3])
    """p[agent]: one offset per agent (cycled)."""
    pass_without_access: float = Field(default=0.1, ge=0, le=1)
    """Probability of a pass without access (a criterion credited for an absence)."""
    access_sd: Spread = Field(default_factory=lambda: Spread(task=0.8, criterion=1.2, run=0.4, condition=0.5))
    """SDs of the random effects of access."""
    pass_sd: Spread = Field(default_factory=lambda: Spread(task=0.8, criterion=1.2, run=0.4, condition=0.5))
    """SDs of the random effects of pass given access (drawn independently of access's)."""

    def agent_offsets(self, agents: int) -> tuple[np.ndarray, np.ndarray]:
        a = [self.access_agents[i % len(self.access_agents)] for i in range(agents)] if self.access_agents else [0.0] * agents
        p = [self.pass_agents[i % len(self.pass_agents)] for i in range(agents)] if self.pass_agents else [0.0] * agents
        return np.asarray(a, dtype=float), np.asarray(p, dtype=float)



def _mean_expit(logit: np.ndarray, sd: float) -> np.ndarray:
    """E[expit(logit + Z)], Z ~ N(0, sd²), for each entry of `logit`."""
    values = np.add.outer(np.asarray(logit, dtype=float), sd * _NODES)
    return (1.0 / (1.0 + np.exp(-values))) @ _WEIGHTS


@dataclass(frozen=True)
class Planted:
    """The condition coefficients that plant the stated effects, and the margins they give."""

    access_condition: float
    pass_condition: float
    access: tuple[float, float]
    """Standardized access, (full, curated)."""
    passed: tuple[float, float]
    """Standardized pass, (full, curated)."""


def _margins(model: SimModel, agents: int, a_c: float, p_c: float) -> tuple[np.ndarray, np.ndarray]:
    """Standardized (full, curated) access and pass probabilities."""
    a, p = model.agent_offsets(agents)
    acc_cells = np.array([_mean_expit(model.access_intercept + a + a_c * c, model.access_sd.total(bool(c))) for c in (0, 1)])
    given = np.array([_mean_expit(model.pass_intercept + p + p_c * c, model.pass_sd.total(bool(c))) for c in (0, 1)])
    passed = (acc_cells * given + (1 - acc_cells) * model.pass_without_access).mean(axis=1)
    return acc_cells.mean(axis=1), passed


def planted(model: SimModel, agents: int, access_effect: float, pass_effect: float) -> Planted:
    """Solve the condition coefficients for effects given as proportions (0.2 = 20 points)."""
    from scipy.optimize import brentq

    def solve(what: str, target: float, f: Callable[[float], float]) -> float:
        if abs(f(0.0) - target) < 1e-12:
            return 0.0
        try:
            return float(brentq(lambda c: f(c) - target, -30.0, 30.0, xtol=1e-12))
        except ValueError:
            raise UsageError(
                f"a {what} effect of {target * 100:g} points cannot be planted in this model (its "
                f"probabilities cannot move that far); choose a smaller effect"
            ) from None

    a_c = solve("access", access_effect, lambda c: float(np.diff(_margins(model, agents, c, 0.0)[0])[0]))
    p_c = solve("pass", pass_effect, lambda c: float(np.diff(_margins(model, agents, a_c, c)[1])[0]))
    access, passed = _margins(model, agents, a_c, p_c)
    return Planted(a_c, p_c, (float(access[0]), float(access[1])), (float(passed[0]), float(passed[1])))


def draw(design: SimDesign, model: SimModel, plant: Planted, rng: np.random.Generator) -> Executions:
    """One synthetic ledger as `Executions` (rows in canonical order: task, agent, run, criterion)."""
    a_off, p_off = model.agent_offsets(design.agents)
    columns: dict[str, list[np.ndarray]] = {k: [] for k in ("task", "agent", "curated", "packet", "run", "acc", "pas")}
    run = 0
    for t, n_crit in enumerate(design.criteria):
        u_task, w_task = rng.normal(0, 1, 2) * (model.access_sd.task, model.pass_sd.task)
        u_slope, w_slope = rng.normal(0, 1, 2) * (model.access_sd.condition, model.pass_sd.condition)
        u_crit, w_crit = rng.normal(0, 1, (2, n_crit)) * ((model.access_sd.criterion,), (model.pass_sd.criterion,))
        for agent in range(design.agents):
            cells = [(False, -1)] * design.repeats + [(True, k) for k in range(design.packets) for _ in range(design.per_packet)]
            for curated, packet in cells:
                u_run, w_run = rng.normal(0, 1, 2) * (model.access_sd.run, model.pass_sd.run)
                c = float(curated)
                p_acc = _expit(model.access_intercept + a_off[agent] + (plant.access_condition + u_slope) * c + u_task
                               + u_crit + u_run)
                p_pass = _expit(model.pass_intercept + p_off[agent] + (plant.pass_condition + w_slope) * c + w_task
                                + w_crit + w_run)
                accessed = rng.random(n_crit) < p_acc
                passed = np.where(accessed, rng.random(n_crit) < p_pass, rng.random(n_crit) < model.pass_without_access)
                for key, value in (("task", t), ("agent", agent), ("curated", curated), ("packet", packet), ("run", run)):
                    columns[key].append(np.full(n_crit, value))
                columns["acc"].append(accessed.astype(float))
                columns["pas"].append(passed.astype(float))
                run += 1
    cat = {k: np.concatenate(v) for k, v in columns.items()}
    rows = len(cat["task"])
    return Executions(
        tasks=tuple(f"T{t + 1:02d}" for t in range(len(design.criteria))),
        agents=tuple(f"agent-{a + 1}" for a in range(design.agents)),
        packets=tuple(f"curator-{k + 1}" for k in range(design.packets)),
        task=cat["task"].astype(np.int64), agent=cat["agent"].astype(np.int64), curated=cat["curated"].astype(bool),
        packet=cat["packet"].astype(np.int64), passed=cat["pas"], accessed=cat["acc"],
        run=cat["run"].astype(np.int64), burden=np.full((rows, 3), np.nan),
    )  # fmt: skip


def _expit(x: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


class Metric(Model):
    """How one outcome's estimate behaved over the simulated ledgers."""

    truth: float
    """The planted standardized difference (curated − full), a proportion."""
    estimated: int
    """Ledgers with a point estimate (the rest: perfect separation or too few clusters)."""
    with_interval: int
    """Ledgers with a bootstrap interval."""
    bias: float | None
    """Mean estimate − truth."""
    bias_se: float | None
    """Monte Carlo standard error of the bias."""
    rmse: float | None
    """Root mean squared error."""
    rmse_se: float | None
    """Monte Carlo standard error of the RMSE (delta method)."""
    coverage: float | None
    """Share of intervals containing the truth."""
    coverage_se: float | None
    """Its Monte Carlo standard error."""
    rejection: float | None
    """Share of intervals excluding 0 (power; the type I error rate when the truth is 0)."""
    rejection_se: float | None
    """Its Monte Carlo standard error."""
    mean_width: float | None
    """Mean interval width."""
    width_se: float | None
    """Its Monte Carlo standard error."""


class SimReport(Model):
    """What `worldkit simulate ledgers` reports."""

    design: SimDesign
    """The simulated design."""
    model: SimModel
    """The stated model."""
    access_effect: float
    """Planted access effect (proportion)."""
    pass_effect: float
    """Planted pass effect (proportion)."""
    access_condition: float
    """The logit coefficient that plants the access effect."""
    pass_condition: float
    """The logit coefficient (pass given access) that plants the pass effect."""
    sims: int
    """Ledgers simulated."""
    replicates: int
    """Bootstrap replicates per ledger."""
    seed: int
    """Seed: ledger k is drawn with `default_rng([seed, k])`, analysed with bootstrap seed seed + k."""
    passed: Metric
    """The pass estimate."""
    access: Metric
    """The access estimate."""


def _metric(truth: float, estimates: Sequence[float | None], intervals: Sequence[tuple[float, float] | None]) -> Metric:
    est = np.array([e for e in estimates if e is not None], dtype=float)
    ivs = np.array([i for i in intervals if i is not None], dtype=float).reshape(-1, 2)
    k, m = len(est), len(ivs)

    def share(hits: np.ndarray) -> tuple[float | None, float | None]:
        if not len(hits):
            return None, None
        p = float(hits.mean())
        return p, math.sqrt(p * (1 - p) / len(hits))

    bias = float(est.mean() - truth) if k else None
    bias_se = float(est.std(ddof=1) / math.sqrt(k)) if k > 1 else None
    sq = (est - truth) ** 2
    rmse = float(math.sqrt(sq.mean())) if k else None
    rmse_se = float(sq.std(ddof=1) / math.sqrt(k) / (2 * rmse)) if k > 1 and rmse else None
    coverage, coverage_se = share((ivs[:, 0] <= truth) & (truth <= ivs[:, 1]))
    rejection, rejection_se = share((ivs[:, 0] > 0) | (ivs[:, 1] < 0))
    widths = ivs[:, 1] - ivs[:, 0]
    return Metric(
        truth=truth, estimated=k, with_interval=m, bias=bias, bias_se=bias_se, rmse=rmse, rmse_se=rmse_se,
        coverage=coverage, coverage_se=coverage_se, rejection=rejection, rejection_se=rejection_se,
        mean_width=float(widths.mean()) if m else None,
        width_se=float(widths.std(ddof=1) / math.sqrt(m)) if m > 1 else None,
    )  # fmt: skip


def simulate(
    design: SimDesign,
    model: SimModel,
    *,
    pass_effect: float,
    access_effect: float,
    sims: int,
    replicates: int,
    seed: int,
    progress: Callable[[int], None] | None = None,
) -> SimReport:
    """Draw `sims` ledgers with the planted effects (proportions) and analyse each one."""
    if sims < 2:
        raise UsageError(f"--sims must be at least 2 to estimate Monte Carlo error (got {sims})")
    if replicates < 1:
        raise UsageError(f"--replicates must be at least 1 for intervals (got {replicates})")
    plant = planted(model, design.agents, access_effect, pass_effect)
    found: dict[str, tuple[list[float | None], list[tuple[float, float] | None]]] = {"pass": ([], []), "access": ([], [])}
    for k in range(sims):
        data = draw(design, model, plant, np.random.default_rng([seed, k]))
        with warnings.catch_warnings():  # diverging bootstrap refits overflow exp(); the analysis counts them
            warnings.simplefilter("ignore", RuntimeWarning)
            result = analyze_executions(data, "simulated", replicates=replicates, seed=seed + k, workers=1)
        for key, estimate in (("pass", result.passed), ("access", result.access)):
            contrast = estimate.contrast if estimate is not None else None
            found[key][0].append(contrast.difference if contrast is not None else None)
            interval = contrast.interval if contrast is not None else None
            found[key][1].append((interval.lower, interval.upper) if interval is not None else None)
        if progress is not None:
            progress(k + 1)
    return SimReport(
        design=design, model=model, access_effect=access_effect, pass_effect=pass_effect,
        access_condition=plant.access_condition, pass_condition=plant.pass_condition, sims=sims,
        replicates=replicates, seed=seed,
        passed=_metric(plant.passed[1] - plant.passed[0], *found["pass"]),
        access=_metric(plant.access[1] - plant.access[0], *found["access"]),
    )  # fmt: skip
