"""Task-cluster bootstrap: resample whole tasks with replacement (numpy `default_rng(seed)`).

Two resamplers, as in the study's public analysis code:
- the GEE bootstrap draws each replicate's tasks with `rng.choice(tasks, n, replace=True)`,
  one replicate after another, and refits the standardized GEE on the resample stacked in
  draw order, warm started from the full-data coefficients (at most 60 iterations). A task
  drawn twice is two clusters, ordered by task, then draw position. A replicate whose fit fails
  or is not finite is dropped and counted. The refit is `refit.Refit`, statsmodels' GEE
  iteration without its per-replicate overheads (same results to the last bit), which hands
  the few fits that go non-finite back to statsmodels' `GEE` itself;
- the raw bootstrap draws all replicates at once with `rng.integers(0, n, (replicates, n))`
  and sums per-task counts (pass given access, and each curator against the full projection).
The interval is the 2.5th and 97.5th percentile (numpy's default linear interpolation).
Replicates are independent, so running them in worker processes gives the same numbers as
running them in one.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from worldkit.analysis.gee import OutcomeData, fit, standardization_grid
from worldkit.analysis.refit import Refit

__all__ = ["MIN_VALID_SHARE", "count_bootstrap", "default_workers", "gee_bootstrap", "percentile",
           "task_draws"]

BOOT_MAXITER = 60
MIN_VALID_SHARE = 4
"""A bootstrap needs at least max(50, replicates / 4) usable replicates (else no interval)."""
_CHUNK = 25


def task_draws(tasks: Sequence[str], replicates: int, seed: int) -> np.ndarray:
    """(replicates, n_tasks) task indices, one `rng.choice` per replicate."""
    rng = np.random.default_rng(seed)
    names = np.asarray(tasks)
    index = {name: i for i, name in enumerate(tasks)}
    draws = np.empty((replicates, len(tasks)), dtype=np.int64)
    for r in range(replicates):
        draws[r] = [index[name] for name in rng.choice(names, len(tasks), replace=True)]
    return draws


def percentile(values: np.ndarray, replicates: int) -> tuple[float, float] | None:
    """The 95% percentile interval of the finite values, or None when too few are finite."""
    finite = values[np.isfinite(values)]
    if len(finite) < max(min(50, replicates), replicates // MIN_VALID_SHARE) or not len(finite):
        return None
    lower, upper = np.quantile(finite, [0.025, 0.975])
    return float(lower), float(upper)


# GEE bootstrap ----------------------------------------------------------------------------------

_STATE: dict[str, object] = {}


def _init(state: dict[str, object]) -> None:
    _STATE.clear()
    _STATE.update(state)


def _replicate(key: str, draw: np.ndarray) -> tuple[float, bool]:
    pieces, start, agents, refit = _STATE[key]  # type: ignore[misc]
    quick = refit.difference(draw)
    if quick is not None:
        return quick
    n = len(draw)
    # Rows stacked in draw order; cluster k of task t is labelled t * n + k, so clusters sort by
    # task, then draw position. Both orders change the floating-point sums a refit makes, and
    # fits near divergence amplify that: this is the study's order.
    y = np.concatenate([pieces[t][0] for t in draw])
    x = np.concatenate([pieces[t][1] for t in draw])
    groups = np.concatenate([np.full(len(pieces[t][0]), t * n + k) for k, t in enumerate(draw)])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = fit(y, x, groups, agents, start=start, maxiter=BOOT_MAXITER, strict=False)
    except Exception:  # noqa: BLE001 - a failed refit is a dropped replicate, counted by caller
        return float("nan"), False
    value = fitted.difference
    return (value, fitted.saturated) if np.isfinite(value) else (float("nan"), False)


def _chunk(job: tuple[str, int, int]) -> tuple[str, int, list[tuple[float, bool]]]:
    key, first, last = job
    draws: np.ndarray = _STATE["draws"]  # type: ignore[assignment]
    return key, first, [_replicate(key, draws[r]) for r in range(first, last)]


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def gee_bootstrap(outcomes: dict[str, tuple[OutcomeData, np.ndarray]], n_tasks: int,
                  draws: np.ndarray, workers: int = 1,
                  saturated: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Refit each outcome's GEE on every replicate of `draws`; nan marks a dropped replicate.

    `outcomes` maps a name to (rows, warm-start coefficients). With `workers` > 1 the
    replicates of all outcomes are spread over that many processes. When `saturated` is given,
    it receives, per outcome, which kept replicates came from a diverged (saturated) fit.
    """
    state: dict[str, object] = {"draws": draws}
    for key, (rows, start) in outcomes.items():
        pieces = rows.per_task(n_tasks)
        refit = Refit(pieces, standardization_grid(len(rows.agents)), start, BOOT_MAXITER)
        state[key] = (pieces, start, rows.agents, refit)
    replicates = len(draws)
    jobs = [(key, first, min(first + _CHUNK, replicates))
            for key in outcomes for first in range(0, replicates, _CHUNK)]
    results = {key: np.full(replicates, np.nan) for key in outcomes}
    flags = {key: np.zeros(replicates, dtype=bool) for key in outcomes}
    workers = max(1, min(workers, len(jobs) or 1))
    if workers == 1:
        _init(state)
        done = list(map(_chunk, jobs))
        _STATE.clear()
    else:
        with ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_init,
                                 initargs=(state,)) as pool:
            done = list(pool.map(_chunk, jobs))
    for key, first, values in done:
        results[key][first:first + len(values)] = [value for value, _ in values]
        flags[key][first:first + len(values)] = [flag for _, flag in values]
    if saturated is not None:
        saturated.update(flags)
    return results


def default_workers() -> int:
    """One worker per available CPU."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


# Raw (count) bootstrap --------------------------------------------------------------------------

def count_bootstrap(counts: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray],
                    replicates: int, seed: int) -> np.ndarray:
    """`statistic` of the summed per-task counts (rows = tasks) on each replicate."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(low=0, high=len(counts), size=(replicates, len(counts)))
    sampled = counts[draws].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(statistic(sampled), dtype=float)
