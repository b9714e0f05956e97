"""Planted-effect calibration: the stated model plants what it says, and the analysis recovers it."""

from __future__ import annotations

import numpy as np
import pytest

from worldkit.analysis.simulate import SimDesign, SimModel, Spread, draw, planted, simulate
from worldkit.errors import UsageError

SMALL = SimDesign(criteria=[4, 4, 4, 4, 4, 4], agents=2, repeats=2, packets=2)


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize(("access", "passed"), [(0.2, 0.1), (0.0, 0.0), (0.3, 0.0), (-0.1, 0.05)])
def test_planted_effects_are_the_standardized_differences(access: float, passed: float) -> None:
    model = SimModel()
    plant = planted(model, 3, access, passed)
    assert plant.access[1] - plant.access[0] == pytest.approx(access, abs=1e-9)
    assert plant.passed[1] - plant.passed[0] == pytest.approx(passed, abs=1e-9)
    # Checked by brute force, not by the integration the solver uses: large draws of the random effects.
    rng = np.random.default_rng(0)
    z_access = rng.normal(0, model.access_sd.total(False), 400_000)
    z_pass = rng.normal(0, model.pass_sd.total(False), 400_000)
    s_access = rng.normal(0, model.access_sd.condition, 400_000)
    s_pass = rng.normal(0, model.pass_sd.condition, 400_000)
    a_off, p_off = model.agent_offsets(3)
    margins = []
    for curated in (0.0, 1.0):
        cells = []
        for agent in range(3):
            acc = _expit(model.access_intercept + a_off[agent] + (plant.access_condition + s_access) * curated + z_access)
            given = _expit(model.pass_intercept + p_off[agent] + (plant.pass_condition + s_pass) * curated + z_pass)
            cells.append((acc.mean(), (acc * given + (1 - acc) * model.pass_without_access).mean()))
        margins.append(np.mean(cells, axis=0))
    assert margins[1][0] - margins[0][0] == pytest.approx(access, abs=0.005)
    assert margins[1][1] - margins[0][1] == pytest.approx(passed, abs=0.005)


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
    assert report.passed.estimated == 4
    assert report.passed.truth == pytest.approx(0.2)
    assert abs(report.passed.bias) < 0.1
    assert report.access.rejection == 1.0


@pytest.mark.slow
def test_under_no_effect_the_rejection_rate_is_near_five_percent() -> None:
    # Eight task clusters, as the paper; tasks share one condition effect (task × condition variation
    # makes the few-cluster bootstrap interval too narrow, see docs/experiment.md).
    steady = Spread(task=0.8, criterion=1.2, run=0.4)
    design = SMALL.model_copy(update={"criteria": [4] * 8})
    report = simulate(design, SimModel(access_sd=steady, pass_sd=steady), pass_effect=0.0, access_effect=0.0, sims=40,
                      replicates=60, seed=11)
    for metric in (report.passed, report.access):
        assert metric.truth == pytest.approx(0.0, abs=1e-9)
        assert metric.with_interval >= 36
        assert metric.rejection <= 0.2  # 5% nominal; 40 ledgers and 6 task clusters leave room
        assert metric.coverage == pytest.approx(1 - metric.rejection)


def test_sims_and_replicates_are_checked() -> None:
    with pytest.raises(UsageError, match="--sims"):
        simulate(SMALL, SimModel(), pass_effect=0, access_effect=0, sims=1, replicates=10, seed=0)
