"""The moments the pilot fit matches: independent of row order, and moved by the parameters they fit."""

from __future__ import annotations

import numpy as np
import pytest

from worldkit.analysis.pilot import task_moments
from worldkit.analysis.simulate import SimDesign, SimModel, Spread, draw, planted

DESIGN = SimDesign(criteria=[6, 5, 7, 6, 5, 6, 7, 5], agents=3, repeats=4, packets=2)


def _ledger(model: SimModel, seed: int) -> object:
    return draw(DESIGN, model, planted(model, DESIGN.agents, 0.15, 0.08), np.random.default_rng(seed))


def test_moments_do_not_depend_on_the_order_of_runs() -> None:
    # Executions carry no criterion id: a criterion is its position among its run's rows, so the
    # runs are shuffled as blocks.
    data = _ledger(SimModel(), 1)
    runs = np.random.default_rng(0).permutation(np.unique(data.run))
    shuffled = data.subset(np.concatenate([np.flatnonzero(data.run == r) for r in runs]))
    assert task_moments(shuffled).model_dump() == pytest.approx(task_moments(data).model_dump(), abs=1e-12)


def test_task_condition_spread_and_correlation_show_in_the_moments() -> None:
    def mean(model: SimModel) -> dict[str, float]:
        found = [task_moments(_ledger(model, k)) for k in range(40)]
        return {f: float(np.mean([getattr(m, f) for m in found])) for f in ("access_difference_sd", "difference_correlation")}

    base = Spread(task=0.3, criterion=0.4, run=0.2)
    flat = mean(SimModel(access_sd=base, pass_sd=base, condition_correlation=0.0))
    varied = base.model_copy(update={"condition": 1.2})
    wide = mean(SimModel(access_sd=varied, pass_sd=varied, condition_correlation=0.95))
    assert wide["access_difference_sd"] > 1.5 * flat["access_difference_sd"]
    # access moves pass even with independent task effects; correlated effects move them together more
    assert 0.2 < flat["difference_correlation"] < wide["difference_correlation"] - 0.2
