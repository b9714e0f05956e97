"""Power: more repeats give narrower intervals and reject a real effect at least as often."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.analysis.power import fit_pilot, power, stated_design
from worldkit.analysis.simulate import PAPER_DESIGN, SimDesign, SimModel, Spread
from worldkit.errors import UsageError

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("interval", ["mancl", "paper"])
def test_power_is_monotone_in_repeats(interval: str) -> None:
    # Modest task x condition variation, so that repeats (not only tasks) narrow the interval.
    spread = Spread(task=0.5, criterion=0.6, run=0.3, condition=0.2, criterion_condition=0.3, agent_task=0.2)
    model = SimModel(access_sd=spread, pass_sd=spread, condition_correlation=0.5)
    design = SimDesign(criteria=[4, 4, 4, 4, 4, 4, 4, 4], agents=2, repeats=1, packets=2)
    sims = 12 if interval == "mancl" else 6
    report = power(design, model, [1, 3, 8], pass_effect=0.12, access_effect=0.2, sims=sims, replicates=40, seed=4,
                   source="stated assumptions", interval=interval)  # fmt: skip
    assert report.interval == interval
    rows = report.rows
    assert [r.repeats for r in rows] == [1, 3, 8]
    assert rows[0].runs < rows[1].runs < rows[2].runs
    for outcome in ("passed", "access"):
        widths = [getattr(r, outcome).mean_width for r in rows]
        powers = [getattr(r, outcome).rejection for r in rows]
        assert widths[0] > widths[1] > widths[2]
        assert powers[0] <= powers[1] <= powers[2]


def test_repeats_are_checked() -> None:
    with pytest.raises(UsageError, match="--repeats"):
        power(PAPER_DESIGN, SimModel(), [0], pass_effect=0.1, access_effect=0.1, sims=2, replicates=10, seed=0, source="x")
    with pytest.raises(UsageError, match="choose among"):
        power(PAPER_DESIGN, SimModel(), [2], pass_effect=0.1, access_effect=0.1, sims=2, replicates=10, seed=0,
              source="x", interval="wild")


def test_the_shipped_campaign_design_is_the_papers_shape() -> None:
    design = stated_design(str(ROOT / "campaigns" / "pharmaco-matched.yaml"))
    assert sum(design.criteria) == 72 and len(design.criteria) == 8
    assert (design.agents, design.repeats, design.packets) == (2, 6, 2)
    assert design.runs == 192
    assert stated_design("paper").runs == 192
    assert stated_design("paper", tasks=4, repeats=2).criteria == [11, 11, 9, 14]
    with pytest.raises(UsageError, match="no such file"):
        stated_design("nowhere.yaml")


@pytest.mark.slow
def test_the_papers_ledgers_fit_as_a_pilot(shared_data: Path) -> None:
    from worldkit.analysis.ledgers import read_ledgers

    pilot = fit_pilot(read_ledgers(shared_data / "workworld"))
    assert pilot.design == PAPER_DESIGN
    assert pilot.pass_effect == pytest.approx(0.087, abs=0.001)  # the paper's 8.7 points
    assert pilot.access_effect == pytest.approx(0.176, abs=0.001)  # and 17.6
    assert len(pilot.model.access_agents) == 3
    # the fitted model reproduces the pilot's between-task spread of the condition effects
    assert pilot.simulated.pass_difference_sd == pytest.approx(pilot.observed.pass_difference_sd, rel=0.1)
    assert pilot.simulated.access_difference_sd == pytest.approx(pilot.observed.access_difference_sd, rel=0.1)
    assert pilot.model.condition_correlation > 0.5
