"""A small-sample-corrected cluster-robust interval for the standardized GEE difference.

The paper's interval (percentile task-cluster bootstrap, `worldkit.analysis.bootstrap`) is
asymptotic in the number of clusters and undercovers with eight tasks (see docs/experiment.md).
This module offers, for worldkit's own campaigns, an interval that is calibrated at that size:

- the same GEE as the paper's (`outcome ~ condition + agent`, binomial, logit link, task
  clusters, exchangeable working correlation; statsmodels `GEE`), fitted with statsmodels'
  bias-reduced sandwich covariance (`cov_type="bias_reduced"`: Mancl and DeRouen, 2001);
- the standardized risk difference (agents weighted equally, as `gee.fit` does) and its
  standard error by the delta method;
- a t reference distribution with Bell–McCaffrey (Satterthwaite) degrees of freedom for that
  variance (`bell_mccaffrey_df`): G − 1 (G task clusters) when the tasks are alike in size and
  leverage, fewer when they are not, as with the paper's tasks of 5 to 14 criteria. The plain
  G − 1 (Li and Redden, 2015) undercovers the access difference at the paper's design
  (docs/experiment.md).

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

__all__ = ["INTERVALS", "MANCL_METHOD", "RobustInterval", "SmallSampleEstimate", "bell_mccaffrey_df", "robust_interval",
           "small_sample_estimates"]

INTERVALS = ("paper", "mancl")
"""Interval methods: `paper` (the study's percentile task-cluster GEE bootstrap) and `mancl`
(bias-reduced sandwich, delta method, t with Bell–McCaffrey df)."""

MANCL_METHOD = "bias-reduced sandwich, t with Bell–McCaffrey df"
"""How the `mancl` interval is made, in a few words, for tables and pages."""


@dataclass(frozen=True)
class RobustInterval:
    """The standardized difference with its small-sample-corrected interval."""

    difference: float
    """Curated − full, standardized over the agents."""
    se: float
    """Delta-method standard error from the bias-reduced sandwich."""
    df: float
    """Bell–McCaffrey degrees of freedom of the t reference (at most about task clusters − 1)."""
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
    if not variance > 0:
        return None
    se = math.sqrt(variance)
    alpha = float(np.asarray(result.cov_struct.dep_params).ravel()[0])
    try:
        df = bell_mccaffrey_df(rows.x, rows.task, params, alpha, gradient)
    except np.linalg.LinAlgError:
        return None
    if not (math.isfinite(df) and df > 0):
        return None
    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    return RobustInterval(difference=difference, se=se, df=df, lower=difference - half, upper=difference + half)


class SmallSampleEstimate(Model):
    """One source's outcome with its `mancl` interval, as `worldkit report --interval mancl` shows it."""

    source: str
    """The source of the rows (a ledger release or worldkit's runs)."""
    outcome: str
    """`pass` or `access`."""
    difference: float | None
    """Curated − full, standardized over the agents (None with `reason`)."""
    se: float | None = None
    """Delta-method standard error from the bias-reduced sandwich."""
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
