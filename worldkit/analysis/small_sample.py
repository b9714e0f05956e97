"""A small-sample-corrected cluster-robust interval for the standardized GEE difference.

The paper's interval (percentile task-cluster bootstrap, `worldkit.analysis.bootstrap`) is
asymptotic in the number of clusters and undercovers with eight tasks (see docs/experiment.md).
This module offers, for worldkit's own campaigns, an interval that is calibrated at that size:

- the same GEE as the paper's (`outcome ~ condition + agent`, binomial, logit link, task
  clusters, exchangeable working correlation; statsmodels `GEE`), fitted with statsmodels'
  bias-reduced sandwich covariance (`cov_type="bias_reduced"`: Mancl and DeRouen, 2001);
- the standardized risk difference (agents weighted equally, as `gee.fit` does) and its
  standard error by the delta method;
- a t reference distribution with G − 1 degrees of freedom (G task clusters), as recommended
  for few clusters (Li and Redden, 2015).

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

__all__ = ["INTERVALS", "RobustInterval", "SmallSampleEstimate", "robust_interval", "small_sample_estimates"]

INTERVALS = ("paper", "mancl")
"""Interval methods: `paper` (the study's percentile task-cluster GEE bootstrap) and `mancl`
(bias-reduced sandwich, delta method, t with G − 1 df)."""


@dataclass(frozen=True)
class RobustInterval:
    """The standardized difference with its small-sample-corrected interval."""

    difference: float
    """Curated − full, standardized over the agents."""
    se: float
    """Delta-method standard error from the bias-reduced sandwich."""
    df: int
    """Degrees of freedom of the t reference (task clusters − 1)."""
    lower: float
    upper: float


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
    if not variance >= 0:
        return None
    se = math.sqrt(variance)
    df = clusters - 1
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
    df: int | None = None
    """Degrees of freedom of the t reference (task clusters − 1)."""
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
