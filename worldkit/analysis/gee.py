"""The paper's primary estimator: a logistic GEE standardized over the agents.

`outcome ~ condition + agent` with task as the cluster and an exchangeable working correlation
(statsmodels `GEE`, binomial family, logit link). Covariates use treatment coding over sorted
levels — the first sorted level is the reference, as a formula interface would code them — so
`curated` is the condition reference and the condition column is 1 for the full projection.
Standardization predicts every (condition, agent) cell and averages the agents with equal
weight: the marginal probability under each condition over the observed agent panel, whose
difference is the risk difference.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from worldkit.analysis.executions import Executions

__all__ = ["GeeFit", "Outcome", "Separation", "design", "fit", "outcome_data", "separation",
           "standardization_grid"]

Outcome = str  # "pass" or "access"


class Separation(Exception):
    """The outcome is constant within a covariate level, so the logistic fit has no finite
    solution (perfect separation); the message names the level."""


@dataclass(frozen=True)
class OutcomeData:
    """One outcome's rows ready for fitting: response, design, cluster per row."""

    y: np.ndarray
    x: np.ndarray
    task: np.ndarray
    agents: tuple[str, ...]
    """The agents present, in design order (the first is the reference)."""

    def per_task(self, n_tasks: int) -> list[tuple[np.ndarray, np.ndarray]]:
        return [(self.y[self.task == t], self.x[self.task == t]) for t in range(n_tasks)]


@dataclass(frozen=True)
class GeeFit:
    """A fitted, standardized GEE."""

    full: float
    """Standardized probability under the full projection."""
    curated: float
    """Standardized probability under curation."""
    params: np.ndarray
    """Coefficients: intercept, full-projection indicator, one per non-reference agent."""
    names: tuple[str, ...]
    """Coefficient names, in `params` order."""
    working_correlation: float
    """The exchangeable within-task correlation."""
    saturated: bool = False
    """Some standardized cell probability is 0 or 1 to within 1e-9: the fit diverged."""

    @property
    def difference(self) -> float:
        """Risk difference, curated minus full."""
        return self.curated - self.full


def design(curated: np.ndarray, agent: np.ndarray, n_agents: int) -> np.ndarray:
    """Intercept, full-projection indicator, and a dummy per agent after the first."""
    columns = [np.ones(len(curated)), (~curated).astype(float)]
    columns += [(agent == code).astype(float) for code in range(1, n_agents)]
    return np.column_stack(columns)


def standardization_grid(n_agents: int) -> np.ndarray:
    """The design of every (condition, agent) cell: the full-projection cells of the agents in
    order, then the curated ones."""
    agent = np.tile(np.arange(n_agents), 2)
    curated = np.repeat([False, True], n_agents)
    return design(curated, agent, n_agents)


def outcome_data(data: Executions, outcome: Outcome) -> OutcomeData:
    """Rows with an observed outcome (graded for pass, known label for access), agents recoded
    over those present."""
    values = data.passed if outcome == "pass" else data.accessed
    keep = ~np.isnan(values)
    present = np.unique(data.agent[keep])
    recode = np.full(len(data.agents), -1)
    recode[present] = np.arange(len(present))
    agent = recode[data.agent[keep]]
    return OutcomeData(
        y=values[keep], x=design(data.curated[keep], agent, len(present)), task=data.task[keep],
        agents=tuple(data.agents[i] for i in present),
    )


def separation(rows: OutcomeData, outcome: Outcome) -> str | None:
    """Name a covariate level whose outcome never varies (the fit would diverge), or None."""
    verb = {"pass": ("passed", "failed"), "access": ("accessed their evidence",
                                                     "missed their evidence")}[outcome]
    levels = [("full", rows.x[:, 1] == 1), ("curated", rows.x[:, 1] == 0)]
    for code, agent in enumerate(rows.agents):
        mask = (rows.x[:, 2:] == 0).all(axis=1) if code == 0 else rows.x[:, 1 + code] == 1
        levels.append((f"agent {agent}", mask))
    for name, mask in levels:
        values = set(rows.y[mask].tolist())
        if len(values) == 1:
            which = verb[0] if values == {1.0} else verb[1]
            return (f"perfect separation: every {name} execution {which} "
                    f"({int(mask.sum())} of {int(mask.sum())}), so the logistic GEE has no finite "
                    "estimate")
    return None


def _names(agents: tuple[str, ...]) -> tuple[str, ...]:
    return ("intercept", "condition[full]", *(f"agent[{a}]" for a in agents[1:]))


def fit(y: np.ndarray, x: np.ndarray, groups: np.ndarray, agents: tuple[str, ...], *,
        start: np.ndarray | None = None, maxiter: int = 100, strict: bool = True) -> GeeFit:
    """Fit the GEE and standardize it over the agents.

    With `strict`, a perfect-separation warning from statsmodels raises `Separation` (bootstrap
    replicates pass `strict=False` and keep whatever the fit gives, as the study's code did).
    """
    # statsmodels (with scipy) takes about a second to import: paid only when a GEE is fitted,
    # not by every report that has nothing to compare.
    from statsmodels.genmod import cov_struct, families
    from statsmodels.genmod.generalized_estimating_equations import GEE
    from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

    model = GEE(y, x, groups=groups, family=families.Binomial(),
                cov_struct=cov_struct.Exchangeable())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = model.fit(maxiter=maxiter, start_params=start)
    if strict and any(issubclass(w.category, PerfectSeparationWarning) for w in caught):
        raise Separation("perfect separation: statsmodels reports fitted probabilities of 0 or 1")
    n = len(agents)
    predicted = np.asarray(result.predict(exog=standardization_grid(n)))
    return GeeFit(
        full=float(predicted[:n].mean()),
        curated=float(predicted[n:].mean()),
        params=np.asarray(result.params, dtype=float),
        names=_names(agents),
        working_correlation=float(np.asarray(result.cov_struct.dep_params).ravel()[0]),
        saturated=bool(np.any(predicted <= 1e-9) or np.any(predicted >= 1 - 1e-9)),
    )
