"""The small-sample-corrected interval (`mancl`): the paper's GEE point, a t interval around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from worldkit.analysis.analyze import analyze_executions
from worldkit.analysis.gee import outcome_data
from worldkit.analysis.simulate import SimDesign, SimModel, Spread, draw, planted
from worldkit.analysis.small_sample import robust_interval, small_sample_estimates

DESIGN = SimDesign(criteria=[5, 4, 6, 5, 4, 6], agents=3, repeats=2, packets=2)


def _ledger(seed: int) -> object:
    spread = Spread(task=0.3, criterion=0.4, run=0.2, condition=0.5, criterion_condition=0.3)
    model = SimModel(access_sd=spread, pass_sd=spread)  # moderate: no agent is at its ceiling
    return draw(DESIGN, model, planted(model, DESIGN.agents, 0.15, 0.08), np.random.default_rng(seed))


@pytest.mark.parametrize("outcome", ["pass", "access"])
def test_the_point_is_the_papers_gee_and_the_interval_a_t_interval(outcome: str) -> None:
    data = _ledger(3)
    found = robust_interval(outcome_data(data, outcome), outcome)
    paper = analyze_executions(data, "x", replicates=0)
    estimate = paper.passed if outcome == "pass" else paper.access
    assert found is not None and estimate is not None and estimate.contrast is not None
    assert found.difference == pytest.approx(estimate.contrast.difference, abs=1e-6)
    assert found.df == len(DESIGN.criteria) - 1
    assert found.se > 0
    assert found.upper - found.difference == pytest.approx(found.difference - found.lower)
    assert (found.upper - found.lower) / 2 == pytest.approx(stats.t.ppf(0.975, found.df) * found.se)


def test_the_bias_reduced_sandwich_is_wider_than_the_plain_one() -> None:
    from statsmodels.genmod import cov_struct, families
    from statsmodels.genmod.generalized_estimating_equations import GEE

    rows = outcome_data(_ledger(5), "pass")
    model = GEE(rows.y, rows.x, groups=rows.task, family=families.Binomial(), cov_struct=cov_struct.Exchangeable())
    plain = np.diag(model.fit(cov_type="robust").cov_params())
    reduced = np.diag(model.fit(cov_type="bias_reduced").cov_params())
    assert np.all(reduced > plain)


def test_a_source_without_an_estimate_says_why() -> None:
    data = _ledger(1)
    rows = outcome_data(data, "pass")
    one_task = type(rows)(y=rows.y[rows.task == 0], x=rows.x[rows.task == 0], task=rows.task[rows.task == 0],
                          agents=rows.agents)
    assert robust_interval(one_task, "pass") is None
    assert small_sample_estimates([]) == []


@pytest.mark.slow
def test_the_papers_ledgers(shared_data: Path) -> None:
    from worldkit.analysis.ledgers import read_ledgers

    found = {e.outcome: e for e in small_sample_estimates(read_ledgers(shared_data / "workworld"))}
    assert found["pass"].difference == pytest.approx(0.087, abs=0.001) and found["pass"].df == 7
    assert found["access"].difference == pytest.approx(0.176, abs=0.001)
    # wider than the paper's bootstrap interval (1.0 to 15.6), and the t interval of the same point
    assert found["pass"].upper - found["pass"].lower > 0.146
