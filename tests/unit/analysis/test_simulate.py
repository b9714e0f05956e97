"""Planted-effect calibration: the stated model plants what it says, and the analysis recovers it."""

from __future__ import annotations

import numpy as np
import pytest

from worldkit.analysis.simulate import SimDesign, SimModel, Spread, draw, planted, simulate
from worldkit.errors import UsageError

SMALL = SimDesign(criteria=[4, 4, 4, 4, 4, 4], agents=2, repeats=2, packets=2)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


CORRELATED = SimModel(task_correlation=0.5, condition_correlation=0.8)


@pytest.mark.parametrize(("access", "passed"), [(0.2, 0.1), (0.0, 0.0), (0.15, 0.0), (-0.1, 0.05)])
def test_planted_effects_are_the_standardized_differences(access: float, passed: float) -> None:
    model = CORRELATED
    plant = planted(model, 3, access, passed)
    assert plant.access[1] - plant.access[0] == pytest.approx(access, abs=1e-9)
    assert plant.passed[1] - plant.passed[0] == pytest.approx(passed, abs=1e-9)
    # Checked by brute force, not by the integration the solver uses: large draws of every random
    # effect, the task's access and pass effects correlated as the model says.
    rng = np.random.default_rng(0)
    n = 400_000
    sa, sp = model.access_sd, model.pass_sd

    def pair(sd_a: float, sd_p: float, rho: float) -> tuple[np.ndarray, np.ndarray]:
        z1, z2 = rng.normal(0, 1, (2, n))
        return sd_a * z1, sd_p * (rho * z1 + np.sqrt(1 - rho**2) * z2)

    task_a, task_p = pair(sa.task, sp.task, model.task_correlation)
    slope_a, slope_p = pair(sa.condition, sp.condition, model.condition_correlation)
    rest_a = rng.normal(0, np.sqrt(sa.criterion**2 + sa.run**2 + sa.agent_task**2), n)
    rest_p = rng.normal(0, np.sqrt(sp.criterion**2 + sp.run**2 + sp.agent_task**2), n)
    cc_a, cc_p = rng.normal(0, sa.criterion_condition, n), rng.normal(0, sp.criterion_condition, n)
    a_off, p_off = model.agent_offsets(3)
    margins = []
    for curated in (0.0, 1.0):
        cells = []
        for agent in range(3):
            acc = _expit(model.access_intercept + a_off[agent] + (plant.access_condition + slope_a + cc_a) * curated
                         + task_a + rest_a)
            given = _expit(model.pass_intercept + p_off[agent] + (plant.pass_condition + slope_p + cc_p) * curated
                           + task_p + rest_p)
            cells.append((acc.mean(), (acc * given + (1 - acc) * model.pass_without_access).mean()))
        margins.append(np.mean(cells, axis=0))
    assert margins[1][0] - margins[0][0] == pytest.approx(access, abs=0.004)
    assert margins[1][1] - margins[0][1] == pytest.approx(passed, abs=0.004)


def test_the_planted_effect_is_marginal_not_the_logit_coefficient() -> None:
    # Under random effects a logit coefficient read as a probability difference overstates the
    # population-averaged difference; planting solves on the marginal scale.
    def model(sd: float) -> SimModel:
        return SimModel(access_intercept=0.0, access_agents=[0.0], access_sd=Spread(task=sd), pass_sd=Spread())

    fixed = planted(model(0.0), 1, 0.2, 0.0)
    assert fixed.access_condition == pytest.approx(np.log(0.7 / 0.3))  # no random effects: 50% -> 70%
    wide = planted(model(2.0), 1, 0.2, 0.0)
    assert wide.access == pytest.approx((0.5, 0.7))
    assert wide.access_condition > fixed.access_condition + 0.3


def test_a_large_draw_reproduces_the_stated_variance_components() -> None:
    # Many tasks, two criteria, one agent, no run or agent × task noise and many repeats: each
    # (task, criterion, condition) cell's empirical logit is close to its latent logit, so the
    # between-task spread of the condition effects and their correlation can be read back.
    access_sd = Spread(task=0.6, criterion=0.0, condition=0.7, criterion_condition=0.0)
    pass_sd = Spread(task=0.5, criterion=0.0, condition=0.5, criterion_condition=0.0)
    model = SimModel(access_intercept=0.0, access_agents=[0.0], pass_intercept=0.5, pass_agents=[0.0],
                     access_sd=access_sd, pass_sd=pass_sd, task_correlation=-0.3, condition_correlation=0.8)
    design = SimDesign(criteria=[2] * 400, agents=1, repeats=400, packets=1)
    data = draw(design, model, planted(model, 1, 0.1, 0.05), np.random.default_rng(7))

    def logits(values: np.ndarray, among: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = []
        for curated in (False, True):
            keep = among & (data.curated == curated)
            hits = np.bincount(data.task[keep], weights=values[keep], minlength=400)
            count = np.bincount(data.task[keep], minlength=400)
            share = (hits + 0.5) / (count + 1)
            out.append((np.log(share / (1 - share)), 1 / (count * share * (1 - share))))
        (full, v_full), (cur, v_cur) = out
        return cur - full, full, v_full + v_cur, v_full

    everything = np.ones(len(data), dtype=bool)
    slope_a, full_a, noise_a, noise_full_a = logits(data.accessed, everything)
    slope_p, full_p, noise_p, _ = logits(data.passed, data.accessed == 1)
    assert np.sqrt(slope_a.var() - noise_a.mean()) == pytest.approx(0.7, rel=0.12)
    assert np.sqrt(slope_p.var() - noise_p.mean()) == pytest.approx(0.5, rel=0.15)
    assert np.sqrt(full_a.var() - noise_full_a.mean()) == pytest.approx(0.6, rel=0.12)
    assert np.corrcoef(slope_a, slope_p)[0, 1] == pytest.approx(0.8, abs=0.12)
    assert np.corrcoef(full_a, full_p)[0, 1] == pytest.approx(-0.3, abs=0.12)


def test_an_effect_the_model_cannot_reach_is_refused() -> None:
    with pytest.raises(UsageError, match="cannot be planted"):
        planted(SimModel(), 3, 0.99, 0.0)


def test_a_ledger_has_the_designs_shape_and_depends_only_on_its_seed() -> None:
    model = SimModel(access_sd=Spread(task=0.5), pass_sd=Spread(criterion=0.5))
    plant = planted(model, SMALL.agents, 0.2, 0.1)
    one = draw(SMALL, model, plant, np.random.default_rng([3, 0]))
    two = draw(SMALL, model, plant, np.random.default_rng([3, 0]))
    other = draw(SMALL, model, plant, np.random.default_rng([3, 1]))
    assert len(one) == sum(SMALL.criteria) * SMALL.agents * (SMALL.repeats + SMALL.packets * SMALL.per_packet)
    assert one.runs == SMALL.runs == 48
    assert np.array_equal(one.passed, two.passed) and np.array_equal(one.accessed, two.accessed)
    assert not np.array_equal(one.accessed, other.accessed)
    assert int(one.curated.sum()) == len(one) // 2
    assert set(np.unique(one.packet[one.curated])) == {0, 1}


def test_a_large_planted_effect_is_found() -> None:
    steady = Spread(task=0.8, criterion=1.2, run=0.4)  # no task × condition variation: the effect is the same everywhere
    report = simulate(SMALL, SimModel(access_sd=steady, pass_sd=steady), pass_effect=0.2, access_effect=0.25, sims=4,
                      replicates=50, seed=2)
    assert report.intervals == ["paper", "mancl"]
    for method in report.intervals:
        assert report.passed[method].estimated == 4
        assert report.passed[method].truth == pytest.approx(0.2)
        assert abs(report.passed[method].bias) < 0.1
    assert report.access["paper"].rejection == 1.0
    # the small-sample interval (t with at most 5 df) is wider than the bootstrap's on average
    assert report.access["mancl"].mean_width > report.access["paper"].mean_width


def test_under_no_effect_the_rejection_rate_is_near_five_percent() -> None:
    # Eight task clusters, as the paper, with task × condition and criterion × condition variation;
    # the small-sample-corrected interval (no bootstrap, so many ledgers are cheap).
    design = SMALL.model_copy(update={"criteria": [4] * 8})
    report = simulate(design, SimModel(), pass_effect=0.0, access_effect=0.0, sims=80, replicates=1, seed=11,
                      intervals=["mancl"])
    for metric in (report.passed["mancl"], report.access["mancl"]):
        assert metric.truth == pytest.approx(0.0, abs=1e-9)
        assert metric.with_interval >= 76
        assert metric.rejection <= 0.125  # 5% nominal; 80 ledgers: 0.125 is 3 Monte Carlo SEs above
        assert metric.coverage == pytest.approx(1 - metric.rejection)
        assert metric.above + metric.below == pytest.approx(metric.rejection)  # the misses, by side


def test_sims_and_replicates_are_checked() -> None:
    with pytest.raises(UsageError, match="--sims"):
        simulate(SMALL, SimModel(), pass_effect=0, access_effect=0, sims=1, replicates=10, seed=0)
    with pytest.raises(UsageError, match="choose among paper, mancl"):
        simulate(SMALL, SimModel(), pass_effect=0, access_effect=0, sims=2, replicates=10, seed=0, intervals=["wild"])
