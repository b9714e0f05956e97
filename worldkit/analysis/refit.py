"""Fast bootstrap refits of the standardized GEE, with statsmodels' own arithmetic.

A task-cluster resample is made of whole tasks, so a task drawn twice is two identical
clusters. `Refit` runs the iteration of statsmodels' `GEE.fit` (binomial family, logit link,
exchangeable working correlation, no weights or offset — the model of `gee.fit`) on such a
resample step for step: the same link inverse and derivative and variance function (the
family's own objects), the same per-cluster exchangeable solve, the same per-cluster matrix
products, the same sums in the same cluster order (task, then draw position) and the same
stopping rule (score norm below `ctol` after at least one correlation update, at most
`maxiter` iterations). What it leaves out is the work whose results a bootstrap replicate does
not use, or repeats:
- each distinct task's per-cluster terms are computed once per iteration and added once per
  copy, in cluster order, so the sums are the same floating-point sums;
- the link, variance and per-row terms are computed once per design cell (condition, agent)
  and gathered onto the rows, since an elementwise operation gives the same bits wherever its
  operand sits, while every sum over a cluster's rows runs on that cluster's rows;
- no model object, pandas grouping or results object is built per replicate, and neither the
  sandwich covariance nor the scale is computed (only the coefficients are standardized);
- the exchangeable solve sums a vector with `np.add.accumulate` (sequential, as the builtin
  `sum` that statsmodels calls there) instead of a Python-level loop.

A replicate that does not converge, or leaves any non-finite term, is handed back (`None`)
so the caller refits it with statsmodels' `GEE` itself: a diverging fit then fails, or
saturates, exactly as it does there. `tests/unit/analysis/test_analysis_refit.py` checks that the
converged refits are bitwise equal to `gee.fit` on the same resamples.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CTOL", "Refit"]

CTOL = 1e-6
"""statsmodels' default convergence tolerance of `GEE.fit`."""


class Refit:
    """Refits of one outcome's GEE on task-cluster resamples.

    `pieces[t]` holds task t's (response, design rows) in the row order `gee.fit` sees them;
    `grid` is the standardization design (the full-projection cells of every agent, then the
    curated ones).
    """

    def __init__(self, pieces: list[tuple[np.ndarray, np.ndarray]], grid: np.ndarray,
                 start: np.ndarray, maxiter: int) -> None:
        from statsmodels.genmod import (
            families,  # imported when refitting, as in `gee.fit`
        )

        family = families.Binomial()
        self._inverse = family.link.inverse
        self._inverse_deriv = family.link.inverse_deriv
        self._variance = family.variance
        self._sizes = [len(y) for y, _ in pieces]
        self._grid = np.asarray(grid, dtype=np.float64)
        self._start = np.asarray(start, dtype=np.float64)
        self._maxiter = maxiter
        rows = [np.asarray(x, dtype=np.float64) for _, x in pieces if len(x)]
        responses = [np.asarray(y, dtype=np.float64) for y, _ in pieces if len(y)]
        self._columns = rows[0].shape[1] if rows else 0
        if not rows:
            self._cells = np.empty((0, 0))
            return
        self._cells, cell = np.unique(np.concatenate(rows), axis=0, return_inverse=True)
        values, value = np.unique(np.concatenate(responses), return_inverse=True)
        # One code per (cell, response value): the residual terms take one value per code.
        combos, code = np.unique(cell.ravel() * len(values) + value, return_inverse=True)
        self._code_cell = combos // len(values)
        self._code_value = values[combos % len(values)]
        bounds = np.cumsum([0] + [n for n in self._sizes if n])
        cells = iter(np.split(cell.ravel(), bounds[1:-1]))
        codes = iter(np.split(code.ravel(), bounds[1:-1]))
        self._cell = [next(cells) if n else None for n in self._sizes]
        self._code = [next(codes) if n else None for n in self._sizes]

    def difference(self, draw: np.ndarray) -> tuple[float, bool] | None:
        """(curated - full standardized difference, saturated) on the resample `draw` (task
        indices in draw order), or None when the fit must be left to statsmodels."""
        clusters = [t for t in np.sort(draw).tolist() if self._sizes[t]]
        if not clusters or max(self._sizes[t] for t in clusters) < 2:
            return None  # statsmodels skips the correlation updates then
        with np.errstate(all="ignore"):
            params = self._iterate(clusters)
            if params is None:
                return None
            n = len(self._grid) // 2
            predicted = self._inverse(np.dot(self._grid, params))
            full = float(predicted[:n].mean())
            curated = float(predicted[n:].mean())
        value = curated - full
        if not np.isfinite(value):
            return None
        saturated = bool(np.any(predicted <= 1e-9) or np.any(predicted >= 1 - 1e-9))
        return value, saturated

    def _cell_terms(self, params: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """Per cell: mean derivative rows, their standardized rows and the standard deviation;
        per (cell, response) code: the standardized residual. None if any is not finite."""
        lpr = np.dot(self._cells, params)  # GEE.update_cached_means
        expval = self._inverse(lpr)
        dmat = self._cells * self._inverse_deriv(lpr)[:, None]  # GEE.mean_deriv
        sdev = np.sqrt(self._variance(expval))
        x1 = dmat / sdev[:, None]
        resid = (self._code_value - expval[self._code_cell]) / sdev[self._code_cell]
        if not (np.isfinite(x1).all() and np.isfinite(resid).all()):
            return None
        return dmat, x1, sdev, resid

    def _iterate(self, clusters: list[int]) -> np.ndarray | None:
        tasks = sorted(set(clusters))
        slot = {t: i for i, t in enumerate(tasks)}
        nobs = sum(self._sizes[t] for t in clusters)
        ddof = self._columns
        # The distinct tasks' rows side by side: per-row terms are gathered for all of them at
        # once, and each task's sums run on its own (contiguous) block of rows.
        ends = np.cumsum([self._sizes[t] for t in tasks]).tolist()
        blocks = list(zip([0, *ends[:-1]], ends, strict=True))
        cell = np.concatenate([self._cell[t] for t in tasks])
        code = np.concatenate([self._code[t] for t in tasks])
        n_cells, n_codes = len(self._cells), len(self._code_cell)
        task_cell = np.concatenate([i * n_cells + self._cell[t] for i, t in enumerate(tasks)])
        task_code = np.concatenate([i * n_codes + self._code[t] for i, t in enumerate(tasks)])
        others = np.array([self._sizes[t] - 1 for t in tasks], dtype=np.float64)
        params = self._start.copy()
        dep = 0.0
        terms = self._cell_terms(params)
        if terms is None:
            return None
        r1 = terms[3].take(code)
        del_params = -1.0
        updates = 0
        for _ in range(self._maxiter):
            # GEE._update_mean_params with Exchangeable.covariance_matrix_solve, per task
            dmat, x1, sdev, resid = terms
            c = dep / (1. - dep)
            c /= 1. + dep * others
            x1_rows = x1.take(cell, axis=0)
            sums = np.array([x1_rows[a:b].sum(0) for a, b in blocks])
            totals = np.array([np.add.accumulate(r1[a:b])[-1] for a, b in blocks])
            vinv_d = (x1 / (1. - dep))[None] - c[:, None, None] * sums[:, None, :]
            vinv_d /= sdev[None, :, None]
            vinv_resid = (resid / (1. - dep))[None] - (c * totals)[:, None]
            vinv_resid /= sdev[self._code_cell][None]
            d_rows = dmat.take(cell, axis=0)
            vd_rows = vinv_d.reshape(-1, vinv_d.shape[2]).take(task_cell, axis=0)
            vr_rows = vinv_resid.ravel().take(task_code)
            terms_of = [(np.dot(d_rows[a:b].T, vd_rows[a:b]), np.dot(d_rows[a:b].T, vr_rows[a:b]))
                        for a, b in blocks]
            bmat, score = 0, 0
            for t in clusters:
                bmat += terms_of[slot[t]][0]
                score += terms_of[slot[t]][1]
            try:
                update = np.linalg.solve(bmat, score)
            except np.linalg.LinAlgError:
                return None
            params += update
            terms = self._cell_terms(params)
            if terms is None:
                return None
            r1 = terms[3].take(code)
            del_params = np.sqrt(np.sum(score ** 2))
            if del_params < CTOL and updates > 0:
                break
            # Exchangeable.update (its standardized residuals are the next iteration's `r1`)
            residsq_sum, scale = 0, 0
            fsum1, fsum2, n_pairs = 0., 0., 0.
            squares = r1 * r1
            task_sums = [(squares[a:b].sum(), r1[a:b].sum()) for a, b in blocks]
            for t in clusters:
                ssr, total = task_sums[slot[t]]
                f = 1.
                scale += f * ssr
                fsum1 += f * self._sizes[t]
                residsq_sum += f * (total ** 2 - ssr) / 2
                npr = 0.5 * self._sizes[t] * (self._sizes[t] - 1)
                fsum2 += f * npr
                n_pairs += npr
            scale /= (fsum1 * (nobs - ddof) / float(nobs))
            residsq_sum /= scale
            dep = residsq_sum / (fsum2 * (n_pairs - ddof) / float(n_pairs))
            updates += 1
        # A fit stopped at the iteration limit keeps its coefficients, as statsmodels' does
        # (with a warning). Non-finite coefficients or terms returned None above: statsmodels
        # then decides whether the fit fails.
        if not np.all(np.isfinite(params)):
            return None
        return params
