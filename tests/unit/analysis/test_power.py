"""Power: more repeats give narrower intervals and reject a real effect at least as often."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.analysis.power import fit_pilot, power, stated_design
from worldkit.analysis.simulate import PAPER_DESIGN, SimDesign, SimModel
from worldkit.errors import UsageError

ROOT = Path(__file__).resolve().parents[3]


def test_power_is_monotone_in_repeats() -> None:
    design = SimDesign(criteria=[4, 4, 4, 4, 4, 4], agents=2, repeats=1, packets=2)
    report = power(design, SimModel(), [1, 6], pass_effect=0.15, access_effect=0.25, sims=6, replicates=50, seed=4,
                   source="stated assumptions")  # fmt: skip
    few, many = report.rows
    assert (few.repeats, many.repeats) == (1, 6)
    assert many.runs > few.runs
    assert many.passed.mean_width < few.passed.mean_width
    assert many.access.mean_width < few.access.mean_width
    assert many.passed.rejection >= few.passed.rejection


def test_repeats_are_checked() -> None:
    with pytest.raises(UsageError, match="--repeats"):
        power(PAPER_DESIGN, SimModel(), [0], pass_effect=0.1, access_effect=0.1, sims=2, replicates=10, seed=0, source="x")


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
