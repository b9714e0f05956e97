"""A small-sample-corrected cluster-robust interval for the standardized GEE difference.

The paper's interval (percentile task-cluster bootstrap, `worldkit.analysis.bootstrap`) is
asymptotic in the number of clusters and undercovers with eight tasks (see docs/experiment.md).
This module offers, for worldkit's own campaigns, an interval that is calibrated at that size:

- the same GEE as the paper's (`outcome ~ condition + agent`, binomial, logit link, task
  clusters, exchangeable working correlation; statsmodels `GEE`), fitted with statsmodels'
  bias-reduced sandwich covariance (`cov_type="bias_reduced"`: Mancl and DeRouen, 2001);
- the standardized risk difference (agents weighted equally, as `gee.fit` does), its standard
  error by the delta method, and its interval by MOVER (`mover_interval`): each standardized
  margin gets a logit-scale interval, and the difference's ends are combined from them. A
  symmetric Wald interval on the difference misses almost only on one side at the paper's design
  (a draw whose tasks' condition effects happen to differ little overestimates the
  population-averaged difference *and* has a small standard error); the logit-scale margins
  give the interval the sampling distribution's lean;
- a t reference distribution with Bell–McCaffrey (Satterthwaite) degrees of freedom for that
  variance (`bell_mccaffrey_df`): G − 1 (G task clusters) when the tasks are alike in size and
  leverage, fewer when they are not, as with the paper's tasks of 5 to 14 criteria. The plain
  G − 1 (Li and Redden, 2015) undercovers the access difference at the paper's design
  (docs/experiment.md). They are kept within 1 and G − 1 (a nearly saturated fit can give
  fewer than 1).

It never changes the paper's analysis: `analyze` and the reproduction of the paper's numbers do
not call it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from worldkit._model import Model
from worldkit.analysis.gee import OutcomeData, separation, standardization_grid
from worldkit.record.results import ResultRow

__all__ = ["INTERVALS", "MANCL_METHOD", "RobustInterval", "SmallSampleEstimate", "bell_mccaffrey_df",
           "mover_interval", "robust_interval", "small_sample_estimates"]

INTERVALS = ("paper", "mancl")
"""Interval methods: `paper` (the study's percentile task-cluster GEE bootstrap) and `mancl`
(bias-reduced sandwich, MOVER from logit-scale margins, t with Bell–McCaffrey df)."""

MANCL_METHOD = "bias-reduced sandwich, logit-scale margins combined by MOVER, t with Bell–McCaffrey df"
"""How the `mancl` interval is made, in a few words, for tables and pages."""


@dataclass(frozen=True)
class RobustInterval:
    """The standardized difference with its small-sample-corrected interval."""

    difference: float
    """Curated − full, standardized over the agents."""
    se: float
    """Delta-method standard error from the bias-reduced sandwich (the interval is MOVER's, not ± t·SE)."""
    df: float
    """Bell–McCaffrey degrees of freedom of the t reference, within 1 and task clusters − 1."""
    lower: float
    upper: float


def bell_mccaffrey_df(x: np.ndarray, groups: np.ndarray, params: np.ndarray, alpha: float,
                      gradient: np.ndarray) -> float:
    """Bell–McCaffrey (Satterthwaite) degrees of freedom of the bias-reduced sandwich variance of
    `gradient` · β̂ for a logistic GEE with exchangeable working correlation `alpha`.

    The variance is Σ_g ĝ_g², ĝ_g = q_g' r_g with q_g = (I − H_gg)⁻ᵀ V_g⁻¹ D_g B⁻¹ c (Mancl and
    DeRouen's correction; H the GEE hat matrix D B⁻¹ D' V⁻¹, B = Σ D_g' V_g⁻¹ D_g). Residuals are
    r = (I − H) ε to first order, so the vector of ĝ is M'ε with column g of M equal to
    (I − H)[rows of g, :]' q_g. Under the working model Var(ε) = Φ (block-diagonal V_g), Σ_g ĝ_g²
    is a weighted sum of χ²₁ with weights the eigenvalues λ of M'ΦM, and the Satterthwaite
    degrees of freedom are (Σλ)² / Σλ² (Bell and McCaffrey, 2002; Pan and Wall, 2002 use the
    same approximation with an empirical variance). In a balanced design they are G − 1; they
    fall below it as the clusters' sizes and leverages differ.
    """
    clusters = [np.flatnonzero(groups == g) for g in np.unique(groups)]
    mu = 1.0 / (1.0 + np.exp(-(x @ params)))
    weight = mu * (1.0 - mu)
    d, v, vinv_d = [], [], []
    for rows in clusters:
        dg = weight[rows, None] * x[rows]
        sd = np.sqrt(weight[rows])
        vg = sd[:, None] * ((1.0 - alpha) * np.eye(len(rows)) + alpha) * sd[None, :]
        d.append(dg)
        v.append(vg)
        vinv_d.append(np.linalg.solve(vg, dg))
    binv = np.linalg.inv(sum(dg.T @ wg for dg, wg in zip(d, vinv_d, strict=True)))
    direction = binv @ gradient
    q = []
    for dg, wg in zip(d, vinv_d, strict=True):
        leverage = dg @ binv @ wg.T  # H_gg = D_g B⁻¹ D_g' V_g⁻¹
        q.append(np.linalg.solve((np.eye(len(dg)) - leverage).T, wg @ direction))
    m = -np.vstack(vinv_d) @ binv @ np.column_stack([dg.T @ qg for dg, qg in zip(d, q, strict=True)])
    offsets = np.cumsum([0] + [len(rows) for rows in clusters])
    for g, qg in enumerate(q):
        m[offsets[g]:offsets[g + 1], g] += qg
    phi_m = np.vstack([vg @ m[offsets[g]:offsets[g + 1]] for g, vg in enumerate(v)])
    weights = m.T @ phi_m
    return float(np.trace(weights) ** 2 / np.sum(weights * weights.T))


def robust_interval(rows: OutcomeData, outcome: str, level: float = 0.95) -> RobustInterval | None:
    """The `mancl` interval of one outcome's rows, or None when the GEE has no finite estimate
    (perfect separation, fewer than 2 task clusters, a fit that fails)."""
    from scipy import stats
    from statsmodels.genmod import cov_struct, families
    from statsmodels.genmod.generalized_estimating_equations import GEE
    from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

    clusters = len(np.unique(rows.task))
    if clusters < 2 or separation(rows, outcome) is not None:
        return None
    model = GEE(rows.y, rows.x, groups=rows.task, family=families.Binomial(), cov_struct=cov_struct.Exchangeable())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = model.fit(maxiter=100, cov_type="bias_reduced")
        except (np.linalg.LinAlgError, ValueError):
            return None
    if any(issubclass(w.category, PerfectSeparationWarning) for w in caught):
        return None
    params = np.asarray(result.params, dtype=float)
    cov = np.asarray(result.cov_params(), dtype=float)
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(cov))):
        return None
    n = len(rows.agents)
    grid = standardization_grid(n)
    p = 1.0 / (1.0 + np.exp(-(grid @ params)))
    difference = float(p[n:].mean() - p[:n].mean())
    slope = (p * (1 - p))[:, None] * grid
    gradient = slope[n:].mean(axis=0) - slope[:n].mean(axis=0)
    variance = float(gradient @ cov @ gradient)
    if not variance > 0 or not 0 < p.min() <= p.max() < 1:
        return None
    se = math.sqrt(variance)
    alpha = float(np.asarray(result.cov_struct.dep_params).ravel()[0])
    try:
        df = bell_mccaffrey_df(rows.x, rows.task, params, alpha, gradient)
    except np.linalg.LinAlgError:
        return None
    if not math.isfinite(df):
        return None
    df = min(max(df, 1.0), clusters - 1.0)
    full_gradient, curated_gradient = slope[:n].mean(axis=0), slope[n:].mean(axis=0)
    lower, upper = mover_interval(
        (float(p[:n].mean()), float(p[n:].mean())),
        np.array([[full_gradient @ cov @ full_gradient, full_gradient @ cov @ curated_gradient],
                  [full_gradient @ cov @ curated_gradient, curated_gradient @ cov @ curated_gradient]]),
        float(stats.t.ppf(0.5 + level / 2, df)),
    )  # fmt: skip
    return RobustInterval(difference=difference, se=se, df=df, lower=lower, upper=upper)


def mover_interval(margins: tuple[float, float], cov: np.ndarray, quantile: float) -> tuple[float, float]:
    """The interval of curated − full from each margin's own interval (MOVER: Zou and Donner, 2008;
    Newcombe's hybrid for a difference of proportions).

    `margins` are the standardized (full, curated) probabilities, `cov` their 2 × 2 delta-method
    covariance and `quantile` the reference quantile. Each margin gets a Wald interval on the
    logit scale (mapped back: asymmetric, inside 0–1), and the difference's ends are

        lower = d − √((p₁ − l₁)² + (u₀ − p₀)² − 2r(p₁ − l₁)(u₀ − p₀))
        upper = d + √((u₁ − p₁)² + (p₀ − l₀)² − 2r(u₁ − p₁)(p₀ − l₀))

    with r the margins' correlation. With symmetric margin intervals this is the delta-method
    interval d ± q·SE; near a ceiling it leans away from it, as the sampling distribution does.
    """
    (p0, p1), (v0, v1) = margins, (float(cov[0, 0]), float(cov[1, 1]))

    def ends(p: float, v: float) -> tuple[float, float]:
        logit, half = math.log(p / (1 - p)), quantile * math.sqrt(v) / (p * (1 - p))
        return 1 / (1 + math.exp(-(logit - half))), 1 / (1 + math.exp(-(logit + half)))

    (l0, u0), (l1, u1) = ends(p0, v0), ends(p1, v1)
    r = float(cov[0, 1]) / math.sqrt(v0 * v1) if v0 > 0 and v1 > 0 else 0.0
    d = p1 - p0
    down = math.sqrt(max(0.0, (p1 - l1) ** 2 + (u0 - p0) ** 2 - 2 * r * (p1 - l1) * (u0 - p0)))
    up = math.sqrt(max(0.0, (u1 - p1) ** 2 + (p0 - l0) ** 2 - 2 * r * (u1 - p1) * (p0 - l0)))
    return d - down, d + up


class SmallSampleEstimate(Model):
    """One source's outcome with its `mancl` interval, as `worldkit report --interval mancl` shows it."""

    source: str
    """The source of the rows (a ledger release or worldkit's runs)."""
    outcome: str
    """`pass` or `access`."""
    difference: float | None
    """Curated − full, standardized over the agents (None with `reason`)."""
    se: float | None = None
    """Delta-method standard error from the bias-reduced sandwich (the interval is MOVER's, not ± t·SE)."""
    df: float | None = None
    """Bell–McCaffrey degrees of freedom of the t reference."""
    lower: float | None = None
    """Lower end of the 95% interval."""
    upper: float | None = None
    """Upper end."""
    reason: str | None = None
    """Why there is no estimate."""


def small_sample_estimates(rows: Iterable[ResultRow]) -> list[SmallSampleEstimate]:
    """The `mancl` interval of pass and access for each source of the rows (source order), over
    the tasks that hold both conditions, as the paper's analysis takes them."""
    from worldkit.analysis.analyze import executions_subset
    from worldkit.analysis.executions import executions, support_problem
    from worldkit.analysis.gee import outcome_data

    by_source: dict[str, list[ResultRow]] = {}
    for row in rows:
        by_source.setdefault(row.source, []).append(row)
    out = []
    for source, members in sorted(by_source.items()):
        data = executions(members)
        problem = support_problem(data)
        if problem is None:
            both = [t for t in range(len(data.tasks)) if {bool(v) for v in data.curated[data.task == t]} == {False, True}]
            data = executions_subset(data, both) if len(both) < len(data.tasks) else data
        for outcome in ("pass", "access"):
            found = None if problem else robust_interval(outcome_data(data, outcome), outcome)
            if found is None:
                out.append(SmallSampleEstimate(source=source, outcome=outcome, difference=None,
                                               reason=problem or "no finite GEE estimate (perfect separation or "
                                               "fewer than 2 task clusters)"))  # fmt: skip
            else:
                out.append(SmallSampleEstimate(source=source, outcome=outcome, difference=found.difference, se=found.se,
                                               df=found.df, lower=found.lower, upper=found.upper))  # fmt: skip
    return out
