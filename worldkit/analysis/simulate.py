"""Planted-effect calibration: synthetic ledgers from a stated model, analysed by worldkit itself.

The model (every parameter a field of `SimModel`, on the logit scale unless said otherwise):

    access:          logit P(accessed) = a0 + a[agent] + (a_c + s_task + s_crit)·curated
                                         + u_task + u_crit + u_agent×task + u_run
    pass | accessed: logit P(pass)     = p0 + p[agent] + (p_c + t_task + t_crit)·curated
                                         + w_task + w_crit + w_agent×task + w_run
    pass | not:      P(pass)           = pass_without_access   (absence-credited criteria)

with normal random effects per task, per criterion (within its task), per agent × task, per run
(shared by the criteria of one execution), a task's own condition effect (s_task, t_task) and a
criterion's own condition effect (s_crit, t_crit). A task's access and pass effects are
correlated: (u_task, w_task) with `task_correlation`, (s_task, t_task) with
`condition_correlation`; the rest are independent.

The condition effects are *planted on the scale the analysis estimates*. The paper's GEE
estimates a population-averaged (marginal) risk difference, standardized over the agents; a
logit coefficient under random effects is a conditional effect, smaller in probability than the
same number read marginally. So `a_c` and `p_c` are solved (Gauss–Hermite integration over the
random effects, bivariate where access and pass are correlated; `scipy.optimize.brentq`) so that
the agent-standardized, population-averaged difference curated − full is exactly the stated
access and pass effect. Curated runs are spread over the packets (no packet effect).

`simulate` draws `sims` ledgers of a `SimDesign` (numpy `default_rng([seed, sim])`, so each
ledger depends only on the seed and its index), analyses each with worldkit's own analysis and
reports, per interval method (`paper`: the study's percentile task-cluster GEE bootstrap;
`mancl`: `worldkit.analysis.small_sample`), bias, RMSE, 95% interval coverage, rejection rate
(interval excluding 0) and width, each with its Monte Carlo standard error.
`worldkit.analysis.power` builds on it; `worldkit.analysis.pilot` fits the model to a pilot.
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
from worldkit.analysis.gee import outcome_data
from worldkit.analysis.small_sample import INTERVALS, robust_interval
from worldkit.errors import UsageError

__all__ = ["PAPER_DESIGN", "Metric", "SimDesign", "SimModel", "SimReport", "Spread", "analyse", "check_intervals", "draw",
           "planted", "simulate"]

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(60)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
_NODES2, _WEIGHTS2 = np.polynomial.hermite_e.hermegauss(40)
_WEIGHTS2 = _WEIGHTS2 / _WEIGHTS2.sum()


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
    """Between runs (shared by the criteria of one execution: within-run correlation)."""
    condition: float = Field(default=0.0, ge=0)
    """Between tasks' own condition effects (a task × condition random slope, added under
    curation): what makes the task-cluster interval of the difference wide."""
    criterion_condition: float = Field(default=0.0, ge=0)
    """Between criteria's own condition effects (a criterion × condition random slope): curation
    helps the criteria whose evidence is hard to find in the full projection."""
    agent_task: float = Field(default=0.0, ge=0)
    """Agent × task: an agent's own level on a task."""

    def total(self, curated: bool) -> float:
        """SD of all random effects of one execution under the condition."""
        slopes = self.condition**2 + self.criterion_condition**2 if curated else 0.0
        return math.sqrt(self.task**2 + self.criterion**2 + self.run**2 + self.agent_task**2 + slopes)


class SimModel(Model):
    """The stated data-generating model (see the module docstring); the defaults are the fit to the
    paper's ledgers, rounded (`worldkit power --ledgers PILOT --json` prints a pilot's own)."""

    access_intercept: float = 0.9
    """a0: logit of access on the full projection for the reference agent at mean effects."""
    access_agents: list[float] = Field(default_factory=lambda: [0.0, -0.2, 1.4])
    """a[agent]: one offset per agent (cycled if the design has more agents)."""
    pass_intercept: float = 1.8
    """p0: logit of pass given access, full projection, reference agent."""
    pass_agents: list[float] = Field(default_factory=lambda: [0.0, -0.5, -0.1])
    """p[agent]: one offset per agent (cycled)."""
    pass_without_access: float = Field(default=0.23, ge=0, le=1)
    """Probability of a pass without access (a criterion credited for an absence)."""
    access_sd: Spread = Field(default_factory=lambda: Spread(
        task=0.15, criterion=0.4, run=0.2, condition=1.6, criterion_condition=0.25, agent_task=0.15))
    """SDs of the random effects of access."""
    pass_sd: Spread = Field(default_factory=lambda: Spread(
        task=0.2, criterion=0.25, run=0.3, condition=0.45, criterion_condition=0.35, agent_task=0.2))
    """SDs of the random effects of pass given access."""
    task_correlation: float = Field(default=0.9, ge=-1, le=1)
    """Correlation of a task's access and pass random intercepts."""
    condition_correlation: float = Field(default=0.95, ge=-1, le=1)
    """Correlation of a task's access and pass condition effects: in the paper's ledgers the
    tasks whose access rose most gained most in pass given access too."""

    def agent_offsets(self, agents: int) -> tuple[np.ndarray, np.ndarray]:
        a = [self.access_agents[i % len(self.access_agents)] for i in range(agents)] if self.access_agents else [0.0] * agents
        p = [self.pass_agents[i % len(self.pass_agents)] for i in range(agents)] if self.pass_agents else [0.0] * agents
        return np.asarray(a, dtype=float), np.asarray(p, dtype=float)

    def covariance(self, curated: bool) -> float:
        """Covariance of the access and pass random effects of one execution."""
        shared = self.task_correlation * self.access_sd.task * self.pass_sd.task
        if curated:
            shared += self.condition_correlation * self.access_sd.condition * self.pass_sd.condition
        return shared


def _expit(x: np.ndarray | float) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=float)))


def _mean_expit(logit: np.ndarray, sd: float) -> np.ndarray:
    """E[expit(logit + Z)], Z ~ N(0, sd²), for each entry of `logit`."""
    values = np.add.outer(np.asarray(logit, dtype=float), sd * _NODES)
    return _expit(values) @ _WEIGHTS


def _mean_joint(access: np.ndarray, given: np.ndarray, sd_a: float, sd_p: float, cov: float) -> np.ndarray:
    """E[expit(access + A) · expit(given + P)] for (A, P) bivariate normal, per entry."""
    rho = 0.0 if sd_a == 0 or sd_p == 0 else max(-1.0, min(1.0, cov / (sd_a * sd_p)))
    z1, z2 = np.meshgrid(_NODES2, _NODES2, indexing="ij")
    weights = np.outer(_WEIGHTS2, _WEIGHTS2)
    a_dev = sd_a * z1
    p_dev = sd_p * (rho * z1 + math.sqrt(max(0.0, 1 - rho**2)) * z2)
    out = [float((_expit(a + a_dev) * _expit(p + p_dev) * weights).sum()) for a, p in zip(access, given, strict=True)]
    return np.asarray(out)


@dataclass(frozen=True)
class Planted:
    """The condition coefficients that plant the stated effects, and the margins they give."""

    access_condition: float
    pass_condition: float
    access: tuple[float, float]
    """Standardized access, (full, curated)."""
    passed: tuple[float, float]
    """Standardized pass, (full, curated)."""


def _margins(model: SimModel, agents: int, a_c: float, p_c: float, *, with_pass: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Standardized (full, curated) access and pass probabilities, integrated over the random
    effects (pass: P(access and pass) + P(no access) · pass_without_access; zeros without `with_pass`)."""
    a, p = model.agent_offsets(agents)
    access, passed = [], []
    for c in (0, 1):
        la, lp = model.access_intercept + a + a_c * c, model.pass_intercept + p + p_c * c
        sd_a, sd_p = model.access_sd.total(bool(c)), model.pass_sd.total(bool(c))
        acc = _mean_expit(la, sd_a)
        access.append(acc.mean())
        if with_pass:
            both = _mean_joint(la, lp, sd_a, sd_p, model.covariance(bool(c)))
            passed.append((both + (1 - acc) * model.pass_without_access).mean())
        else:
            passed.append(0.0)
    return np.asarray(access), np.asarray(passed)


def planted(model: SimModel, agents: int, access_effect: float, pass_effect: float) -> Planted:
    """Solve the condition coefficients for effects given as proportions (0.2 = 20 points)."""
    from scipy.optimize import brentq

    def solve(what: str, target: float, f: Callable[[float], float]) -> float:
        if abs(f(0.0) - target) < 1e-12:
            return 0.0
        try:
            return float(brentq(lambda c: f(c) - target, -30.0, 30.0, xtol=1e-10))
        except ValueError:
            raise UsageError(
                f"a {what} effect of {target * 100:g} points cannot be planted in this model (its "
                f"probabilities cannot move that far); choose a smaller effect"
            ) from None

    a_c = solve("access", access_effect, lambda c: float(np.diff(_margins(model, agents, c, 0.0, with_pass=False)[0])[0]))
    p_c = solve("pass", pass_effect, lambda c: float(np.diff(_margins(model, agents, a_c, c)[1])[0]))
    access, passed = _margins(model, agents, a_c, p_c)
    return Planted(a_c, p_c, (float(access[0]), float(access[1])), (float(passed[0]), float(passed[1])))


def _pair(rng: np.random.Generator, size: int | tuple[int, ...], sd_a: float, sd_p: float,
          rho: float) -> tuple[np.ndarray, np.ndarray]:
    """Correlated normal (access, pass) effects with SDs sd_a, sd_p and correlation rho."""
    z = rng.normal(0, 1, (2, *np.atleast_1d(size)))
    return sd_a * z[0], sd_p * (rho * z[0] + math.sqrt(max(0.0, 1 - rho**2)) * z[1])


def draw(design: SimDesign, model: SimModel, plant: Planted, rng: np.random.Generator) -> Executions:
    """One synthetic ledger as `Executions` (rows in canonical order: task, agent, run, criterion)."""
    a_off, p_off = model.agent_offsets(design.agents)
    sa, sp = model.access_sd, model.pass_sd
    cells = [(False, -1)] * design.repeats + [(True, k) for k in range(design.packets) for _ in range(design.per_packet)]
    curated_cells = np.array([c for c, _ in cells], dtype=bool)
    packet_cells = np.array([k for _, k in cells], dtype=np.int64)
    per_agent = len(cells)
    runs_per_task = design.agents * per_agent
    pieces: dict[str, list[np.ndarray]] = {k: [] for k in ("task", "agent", "curated", "packet", "run", "acc", "pas")}
    first_run = 0
    for t, n_crit in enumerate(design.criteria):
        u_task, w_task = _pair(rng, 1, sa.task, sp.task, model.task_correlation)
        u_slope, w_slope = _pair(rng, 1, sa.condition, sp.condition, model.condition_correlation)
        u_crit, w_crit = rng.normal(0, 1, (2, n_crit)) * ((sa.criterion,), (sp.criterion,))
        u_cc, w_cc = rng.normal(0, 1, (2, n_crit)) * ((sa.criterion_condition,), (sp.criterion_condition,))
        u_at, w_at = rng.normal(0, 1, (2, design.agents)) * ((sa.agent_task,), (sp.agent_task,))
        u_run, w_run = rng.normal(0, 1, (2, runs_per_task, 1)) * np.array([sa.run, sp.run])[:, None, None]
        agent = np.repeat(np.arange(design.agents), per_agent)
        curated = np.tile(curated_cells, design.agents)
        c = curated.astype(float)[:, None]
        p_acc = _expit((model.access_intercept + a_off[agent] + u_at[agent] + u_task)[:, None]
                       + (plant.access_condition + u_slope + u_cc[None, :]) * c + u_crit[None, :] + u_run)
        p_pass = _expit((model.pass_intercept + p_off[agent] + w_at[agent] + w_task)[:, None]
                        + (plant.pass_condition + w_slope + w_cc[None, :]) * c + w_crit[None, :] + w_run)
        accessed = rng.random((runs_per_task, n_crit)) < p_acc
        luck = rng.random((runs_per_task, n_crit))
        passed = np.where(accessed, luck < p_pass, luck < model.pass_without_access)
        shape = (runs_per_task, n_crit)
        pieces["task"].append(np.full(shape, t))
        pieces["agent"].append(np.broadcast_to(agent[:, None], shape))
        pieces["curated"].append(np.broadcast_to(curated[:, None], shape))
        pieces["packet"].append(np.broadcast_to(np.tile(packet_cells, design.agents)[:, None], shape))
        pieces["run"].append(np.broadcast_to((first_run + np.arange(runs_per_task))[:, None], shape))
        pieces["acc"].append(accessed.astype(float))
        pieces["pas"].append(passed.astype(float))
        first_run += runs_per_task
    cat = {k: np.concatenate([v.ravel() for v in vs]) for k, vs in pieces.items()}
    rows = len(cat["task"])
    return Executions(
        tasks=tuple(f"T{t + 1:02d}" for t in range(len(design.criteria))),
        agents=tuple(f"agent-{a + 1}" for a in range(design.agents)),
        packets=tuple(f"curator-{k + 1}" for k in range(design.packets)),
        task=cat["task"].astype(np.int64), agent=cat["agent"].astype(np.int64), curated=cat["curated"].astype(bool),
        packet=cat["packet"].astype(np.int64), passed=cat["pas"], accessed=cat["acc"],
        run=cat["run"].astype(np.int64), burden=np.full((rows, 3), np.nan),
    )  # fmt: skip


class Metric(Model):
    """How one outcome's estimate and one interval method behaved over the simulated ledgers."""

    truth: float
    """The planted standardized difference (curated − full), a proportion."""
    estimated: int
    """Ledgers with a finite point estimate (the rest: perfect separation, a diverged fit, too few
    clusters)."""
    with_interval: int
    """Ledgers with an interval."""
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
    width_sd: float | None = None
    """Spread (SD) of the width over the ledgers: how far one campaign's width may fall from the mean."""
    above: float | None = None
    """Share of intervals wholly above the truth (their lower end past it): with `below`, on which
    side an interval misses; a calibrated 95% interval misses about 2.5% on each."""
    below: float | None = None
    """Share of intervals wholly below the truth."""


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
    """Bootstrap replicates per ledger (the `paper` interval)."""
    seed: int
    """Seed: ledger k is drawn with `default_rng([seed, k])`, analysed with bootstrap seed seed + k."""
    intervals: list[str]
    """Interval methods evaluated (`worldkit.analysis.small_sample.INTERVALS`)."""
    passed: dict[str, Metric]
    """The pass estimate, per interval method."""
    access: dict[str, Metric]
    """The access estimate, per interval method."""


def _metric(truth: float, estimates: Sequence[float | None], intervals: Sequence[tuple[float, float] | None]) -> Metric:
    # a fit that diverged without a separation warning gives a non-finite point: not an estimate
    est = np.array([e for e in estimates if e is not None and math.isfinite(e)], dtype=float)
    ivs = np.array([i for i in intervals if i is not None and all(map(math.isfinite, i))], dtype=float).reshape(-1, 2)
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
        width_sd=float(widths.std(ddof=1)) if m > 1 else None,
        above=float((ivs[:, 0] > truth).mean()) if m else None, below=float((ivs[:, 1] < truth).mean()) if m else None,
    )  # fmt: skip


Found = dict[str, tuple[float | None, dict[str, tuple[float, float] | None]]]


def analyse(data: Executions, intervals: Sequence[str], *, replicates: int, seed: int) -> Found:
    """Each outcome's point estimate and its interval by each method, for one ledger.

    `paper` runs the paper's analysis itself (`analyze_executions`: GEE + percentile task-cluster
    bootstrap); `mancl` the small-sample-corrected interval (`small_sample.robust_interval`)."""
    found: Found = {"pass": (None, {}), "access": (None, {})}
    if "paper" in intervals:
        with warnings.catch_warnings():  # diverging bootstrap refits overflow exp(); the analysis counts them
            warnings.simplefilter("ignore", RuntimeWarning)
            result = analyze_executions(data, "simulated", replicates=replicates, seed=seed, workers=1)
        for key, estimate in (("pass", result.passed), ("access", result.access)):
            contrast = estimate.contrast if estimate is not None else None
            interval = contrast.interval if contrast is not None else None
            found[key] = (contrast.difference if contrast is not None else None,
                          {"paper": (interval.lower, interval.upper) if interval is not None else None})
    if "mancl" in intervals:
        for key in ("pass", "access"):
            robust = robust_interval(outcome_data(data, key), key)
            point, ivs = found[key]
            if point is None and "paper" not in intervals and robust is not None:
                point = robust.difference
            found[key] = (point, {**ivs, "mancl": (robust.lower, robust.upper) if robust is not None else None})
    return found


def check_intervals(intervals: Sequence[str]) -> list[str]:
    """The interval methods, validated and in canonical order."""
    unknown = sorted(set(intervals) - set(INTERVALS))
    if unknown or not intervals:
        raise UsageError(f"--interval {','.join(intervals)}: choose among {', '.join(INTERVALS)} "
                         "(comma-separated where several are allowed)")
    return [name for name in INTERVALS if name in intervals]


def simulate(
    design: SimDesign,
    model: SimModel,
    *,
    pass_effect: float,
    access_effect: float,
    sims: int,
    replicates: int,
    seed: int,
    intervals: Sequence[str] = INTERVALS,
    progress: Callable[[int], None] | None = None,
) -> SimReport:
    """Draw `sims` ledgers with the planted effects (proportions) and analyse each one."""
    methods = check_intervals(intervals)
    if sims < 2:
        raise UsageError(f"--sims must be at least 2 to estimate Monte Carlo error (got {sims})")
    if replicates < 1 and "paper" in methods:
        raise UsageError(f"--replicates must be at least 1 for the paper's interval (got {replicates})")
    plant = planted(model, design.agents, access_effect, pass_effect)
    points: dict[str, list[float | None]] = {"pass": [], "access": []}
    bounds: dict[str, dict[str, list[tuple[float, float] | None]]] = {
        key: {m: [] for m in methods} for key in ("pass", "access")}
    for k in range(sims):
        found = analyse(draw(design, model, plant, np.random.default_rng([seed, k])), methods,
                        replicates=replicates, seed=seed + k)
        for key, (point, ivs) in found.items():
            points[key].append(point)
            for method in methods:
                bounds[key][method].append(ivs.get(method))
        if progress is not None:
            progress(k + 1)
    truth = {"pass": plant.passed[1] - plant.passed[0], "access": plant.access[1] - plant.access[0]}
    metrics = {key: {m: _metric(truth[key], points[key], bounds[key][m]) for m in methods} for key in truth}
    return SimReport(
        design=design, model=model, access_effect=access_effect, pass_effect=pass_effect,
        access_condition=plant.access_condition, pass_condition=plant.pass_condition, sims=sims,
        replicates=replicates, seed=seed, intervals=methods, passed=metrics["pass"], access=metrics["access"],
    )  # fmt: skip
