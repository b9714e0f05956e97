"""`analyze`: every estimate of the WorkWorlds analysis for one source of result rows.

The primary outcomes are GEE-standardized (see `gee`) with task-cluster GEE bootstrap
intervals (see `bootstrap`); the rest are the study's raw sensitivity figures (see `raw`).
A source that cannot support the contrast gets an `Analysis` whose `reason` says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from worldkit.analysis import raw
from worldkit.analysis.bootstrap import (
    default_workers,
    gee_bootstrap,
    percentile,
    task_draws,
)
from worldkit.analysis.executions import Executions, executions, support_problem
from worldkit.analysis.gee import OutcomeData, Separation, fit, outcome_data, separation
from worldkit.analysis.models import Analysis, BootstrapInterval, Contrast, GeeEstimate
from worldkit.record.results import ResultRow

__all__ = ["DEFAULT_REPLICATES", "DEFAULT_SEED", "analyze", "analyze_executions"]

DEFAULT_REPLICATES = 2_000
DEFAULT_SEED = 20_270_908
"""The public WorkWorlds artifact's bootstrap seed."""


def _point(rows: OutcomeData, outcome: str) -> tuple[GeeEstimate, np.ndarray | None]:
    problem = separation(rows, outcome)
    if problem is None and len(np.unique(rows.task)) < 2:
        problem = "too few task clusters with an observed outcome (need at least 2)"
    if problem is not None:
        return GeeEstimate(executions=len(rows.y), contrast=None, reason=problem), None
    try:
        fitted = fit(rows.y, rows.x, rows.task, rows.agents)
    except Separation as error:
        return GeeEstimate(executions=len(rows.y), contrast=None, reason=str(error)), None
    except (np.linalg.LinAlgError, ValueError) as error:
        return GeeEstimate(executions=len(rows.y), contrast=None,
                           reason=f"the GEE could not be fitted ({error})"), None
    estimate = GeeEstimate(
        executions=len(rows.y),
        contrast=Contrast(full=fitted.full, curated=fitted.curated, difference=fitted.difference),
        working_correlation=fitted.working_correlation,
        coefficients=dict(zip(fitted.names, map(float, fitted.params), strict=True)),
    )
    return estimate, fitted.params


def _with_interval(estimate: GeeEstimate, values: np.ndarray | None, replicates: int,
                   seed: int, saturated: int = 0) -> GeeEstimate:
    if estimate.contrast is None or values is None:
        return estimate
    bounds = percentile(values, replicates)
    valid = int(np.isfinite(values).sum())
    if bounds is None:
        contrast = estimate.contrast.model_copy(update={
            "interval_reason": f"only {valid} of {replicates} bootstrap refits gave a finite "
                               "estimate"})
    else:
        contrast = estimate.contrast.model_copy(update={"interval": BootstrapInterval(
            lower=bounds[0], upper=bounds[1], replicates=replicates, valid=valid, seed=seed,
            method="gee", saturated=saturated)})
    return estimate.model_copy(update={"contrast": contrast})


def analyze_executions(data: Executions, source: str, *, replicates: int = DEFAULT_REPLICATES,
                       seed: int = DEFAULT_SEED, workers: int | None = None,
                       gee_replicates: int | None = None) -> Analysis:
    """Every estimate for one source's executions (`replicates=0` skips the bootstraps;
    `gee_replicates`, when given, sets the GEE bootstrap's count apart from the raw ones)."""
    gee_count = replicates if gee_replicates is None else gee_replicates
    head = dict(source=source, tasks=list(data.tasks), agents=list(data.agents),
                runs=data.runs, executions=len(data), replicates=replicates, seed=seed)
    problem = support_problem(data)
    if problem is not None:
        return Analysis(reason=problem, **head)
    # Only tasks that hold both conditions are clusters of the contrast.
    both = [t for t in range(len(data.tasks))
            if {bool(v) for v in data.curated[data.task == t]} == {False, True}]
    if len(both) < len(data.tasks):
        data = executions_subset(data, both)
        head.update(tasks=list(data.tasks), agents=list(data.agents), runs=data.runs,
                    executions=len(data))
    rows = {"pass": outcome_data(data, "pass"), "access": outcome_data(data, "access")}
    points = {key: _point(value, key) for key, value in rows.items()}
    jobs = {key: (rows[key], params) for key, (_, params) in points.items() if params is not None}
    boots: dict[str, np.ndarray] = {}
    flags: dict[str, np.ndarray] = {}
    if gee_count > 0 and jobs:
        draws = task_draws(data.tasks, gee_count, seed)
        boots = gee_bootstrap(jobs, len(data.tasks), draws,
                              workers=default_workers() if workers is None else workers,
                              saturated=flags)
    estimates = {key: _with_interval(points[key][0], boots.get(key), gee_count, seed,
                                     int(flags[key].sum()) if key in flags else 0)
                 for key in rows}
    raw_pass, raw_access = raw.pooled(data)
    equal_pass, equal_access = raw.equal_task(data)
    deltas = raw.task_deltas(data)
    tasks = raw.by_task(data)
    packets, gap = raw.packets(data, replicates, seed)
    return Analysis(
        **head,
        passed=estimates["pass"],
        access=estimates["access"],
        pass_given_access=raw.pass_given_access(data, replicates, seed),
        raw_pass=raw_pass,
        raw_access=raw_access,
        equal_task_pass=equal_pass,
        equal_task_access=equal_access,
        leave_one_task_out=raw.leave_one_task_out(data),
        unknown_recoding=raw.unknown_recoding(data),
        by_task=tasks,
        positive_tasks=sum(d.difference > 0 for d in deltas),
        reversals=[d for d in deltas if d.difference < 0],
        search_reduced_tasks=sum(bool(t.search_reduced) for t in tasks),
        packets=packets,
        packet_gap=gap,
        by_agent=raw.by_agent(data),
    )


def executions_subset(data: Executions, keep_tasks: list[int]) -> Executions:
    """The executions of some tasks, with tasks renumbered over those kept."""
    mask = np.isin(data.task, keep_tasks)
    sub = data.subset(mask)
    recode = np.full(len(data.tasks), -1)
    recode[keep_tasks] = np.arange(len(keep_tasks))
    return replace(sub, tasks=tuple(data.tasks[t] for t in keep_tasks), task=recode[sub.task])


def analyze(rows: Iterable[ResultRow], *, replicates: int = DEFAULT_REPLICATES,
            seed: int = DEFAULT_SEED, workers: int | None = None,
            gee_replicates: int | None = None) -> list[Analysis]:
    """One `Analysis` per source of the rows, in source order."""
    by_source: dict[str, list[ResultRow]] = {}
    for row in rows:
        by_source.setdefault(row.source, []).append(row)
    return [analyze_executions(executions(members), source, replicates=replicates, seed=seed,
                               workers=workers, gee_replicates=gee_replicates)
            for source, members in sorted(by_source.items())]
