"""The small-sample-corrected interval (`mancl`): the paper's GEE point, a t interval around it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from worldkit.analysis.analyze import analyze_executions
from worldkit.analysis.gee import outcome_data
from worldkit.analysis.simulate import SimDesign, SimModel, Spread, draw, planted
from worldkit.analysis.small_sample import bell_mccaffrey_df, mover_interval, robust_interval, small_sample_estimates

DESIGN = SimDesign(criteria=[5, 4, 6, 5, 4, 6], agents=3, repeats=2, packets=2)


def _ledger(seed: int) -> object:
    spread = Spread(task=0.3, criterion=0.4, run=0.2, condition=0.5, criterion_condition=0.3)
    model = SimModel(access_sd=spread, pass_sd=spread)  # moderate: no agent is at its ceiling
    return draw(DESIGN, model, planted(model, DESIGN.agents, 0.15, 0.08), np.random.default_rng(seed))


@pytest.mark.parametrize("outcome", ["pass", "access"])
def test_the_point_is_the_papers_gee_and_the_interval_movers_around_it(outcome: str) -> None:
    data = _ledger(3)
    found = robust_interval(outcome_data(data, outcome), outcome)
    paper = analyze_executions(data, "x", replicates=0)
    estimate = paper.passed if outcome == "pass" else paper.access
    assert found is not None and estimate is not None and estimate.contrast is not None
    assert found.difference == pytest.approx(estimate.contrast.difference, abs=1e-6)
    assert 1 < found.df < len(DESIGN.criteria) - 1  # tasks of 4 to 6 criteria: fewer df than G − 1
    assert found.se > 0 and found.lower < found.difference < found.upper
    # MOVER leans, but its width is close to the delta method's ± t·SE
    assert (found.upper - found.lower) / 2 == pytest.approx(stats.t.ppf(0.975, found.df) * found.se, rel=0.1)


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
    assert found["pass"].difference == pytest.approx(0.087, abs=0.001) and 5 < found["pass"].df < 7
    assert found["access"].difference == pytest.approx(0.176, abs=0.001)
    # wider than the paper's bootstrap interval (1.0 to 15.6), and the t interval of the same point
    assert found["pass"].upper - found["pass"].lower > 0.146


def _brute_force_df(x: np.ndarray, groups: np.ndarray, params: np.ndarray, alpha: float, c: np.ndarray) -> float:
    """The Bell–McCaffrey df written out with the full n × n matrices (H, Φ, the block-diagonal
    Mancl–DeRouen adjustment) to check the cluster-by-cluster computation against."""
    mu = 1 / (1 + np.exp(-(x @ params)))
    w = mu * (1 - mu)
    d = w[:, None] * x
    same = groups[:, None] == groups[None, :]
    phi = np.sqrt(np.outer(w, w)) * np.where(same, alpha, 0.0) + np.diag(w * (1 - alpha))
    vinv = np.linalg.inv(phi)  # block-diagonal, so its inverse is too
    binv = np.linalg.inv(d.T @ vinv @ d)
    hat = d @ binv @ d.T @ vinv
    adjust = np.linalg.inv(np.eye(len(x)) - np.where(same, hat, 0.0))  # blocks (I − H_gg)⁻¹
    contributions = (np.unique(groups)[:, None] == groups[None, :]).astype(float)  # G × n cluster sums
    m = (contributions * (c @ binv @ d.T @ vinv @ adjust)[None, :]) @ (np.eye(len(x)) - hat)
    weights = m @ phi @ m.T
    return float(np.trace(weights) ** 2 / np.trace(weights @ weights))


def test_bell_mccaffrey_df_is_g_minus_1_for_alike_clusters() -> None:
    # every cluster holds the same covariate rows: the sandwich is an average of G exchangeable
    # terms less one constraint, exactly (G − 1)·χ²/(G − 1)
    one = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    x = np.tile(one, (6, 1))
    groups = np.repeat(np.arange(6), len(one))
    params, c = np.array([0.3, -0.8, 0.5]), np.array([0.05, -0.2, 0.1])
    for alpha in (0.0, 0.3):
        assert bell_mccaffrey_df(x, groups, params, alpha, c) == pytest.approx(5.0, abs=1e-9)


def test_bell_mccaffrey_df_of_unequal_clusters_matches_the_full_matrix_formula() -> None:
    rng = np.random.default_rng(7)
    sizes = [2, 3, 4, 7, 12]
    groups = np.repeat(np.arange(len(sizes)), sizes)
    n = len(groups)
    x = np.column_stack([np.ones(n), rng.random(n) < 0.5, rng.random(n) < 0.4]).astype(float)
    params, c = np.array([0.4, -1.1, 0.6]), np.array([0.02, -0.21, 0.04])
    for alpha in (0.0, 0.25):
        found = bell_mccaffrey_df(x, groups, params, alpha, c)
        assert found == pytest.approx(_brute_force_df(x, groups, params, alpha, c), rel=1e-9)
        assert 1 <= found < len(sizes) - 1


def test_mover_by_hand() -> None:
    # two margins of 0.5, SE 0.1 each, uncorrelated: each margin's logit interval is
    # expit(±q·0.1/0.25), symmetric about 0.5, and the difference's half-width is √2 times its half
    q = 2.0
    half = 1 / (1 + np.exp(-0.8)) - 0.5
    lower, upper = mover_interval((0.5, 0.5), np.diag([0.01, 0.01]), q)
    assert (lower, upper) == pytest.approx((-np.sqrt(2) * half, np.sqrt(2) * half), abs=1e-12)


def test_mover_is_the_delta_method_when_the_margins_are_precise_and_leans_near_a_ceiling() -> None:
    cov = np.array([[4e-6, 1e-6], [1e-6, 3e-6]])
    lower, upper = mover_interval((0.4, 0.6), cov, 2.0)
    se = np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    assert (lower, upper) == pytest.approx((0.2 - 2 * se, 0.2 + 2 * se), abs=1e-5)
    lower, upper = mover_interval((0.6, 0.95), np.diag([0.002, 0.0004]), 2.0)
    assert upper - 0.35 < 0.35 - lower  # the curated margin cannot pass 1: less room above
