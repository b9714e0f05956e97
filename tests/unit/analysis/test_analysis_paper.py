"""The WorkWorlds paper's figures, recomputed from the public ledgers.

Point estimates, raw sensitivity figures and the raw (count) bootstraps (2,000 replicates,
summed counts) are fast. The GEE bootstrap intervals are asserted once, through the CLI, in
tests/func/test_report_paper.py (marked slow).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.analysis import analyze
from worldkit.analysis.ledgers import find_ledgers, read_ledgers
from worldkit.analysis.models import Analysis
from worldkit.analysis.packets import read_matched_packets, summarize_packets


def one(value: float) -> str:
    """A proportion as the paper prints it: percent with one decimal."""
    return f"{100 * value:.1f}"


@pytest.fixture(scope="module")
def ledger_rows(shared_data: Path):
    return read_ledgers(shared_data / "workworld")


@pytest.fixture(scope="module")
def quick(ledger_rows) -> Analysis:
    """Everything except the GEE bootstrap's full replicate count (raw bootstraps: 2,000)."""
    [result] = analyze(ledger_rows, replicates=2_000, workers=1, gee_replicates=0)
    return result


def test_gee_point_estimates_match_the_artifact(quick: Analysis) -> None:
    passed, access = quick.passed.contrast, quick.access.contrast
    assert (one(passed.full), one(passed.curated), one(passed.difference)) == ("68.0", "76.7", "8.7")
    assert (one(access.full), one(access.curated), one(access.difference)) == ("72.8", "90.4", "17.6")
    # The public analysis_results.json, to the last printed digit.
    assert passed.difference == pytest.approx(0.0869685977290876, abs=1e-12)
    assert access.difference == pytest.approx(0.17571272183295994, abs=1e-12)
    assert quick.passed.coefficients["condition[full]"] == pytest.approx(-0.45200800496937743,
                                                                        abs=1e-10)
    assert quick.access.working_correlation == pytest.approx(0.0014304598894662054, abs=1e-10)
    assert quick.access.executions == 1690


def test_sensitivity_figures(quick: Analysis) -> None:
    assert one(quick.equal_task_pass.difference) == "8.4"
    loto = quick.leave_one_task_out
    assert (one(loto.pass_range[0]), one(loto.pass_range[1])) == ("6.4", "11.8")
    assert min(loto.passed, key=loto.passed.get) == "T06"
    assert max(loto.passed, key=loto.passed.get) == "T03"
    recoding = quick.unknown_recoding
    assert one(recoding.all_accessed.difference) == "17.0"
    assert one(recoding.all_not_accessed.difference) == "17.7"
    assert one(recoding.adversarial_lower.difference) == "15.2"
    assert one(recoding.adversarial_upper.difference) == "19.6"
    assert quick.positive_tasks == 7
    assert [(d.task, one(d.difference)) for d in quick.reversals] == [("T03", "-13.0")]
    assert quick.search_reduced_tasks == 7
    assert one(quick.packet_gap) == "6.6"


def test_per_task_and_agent_figures(quick: Analysis) -> None:
    t06 = next(t for t in quick.by_task if t.task == "T06")
    assert one(t06.passed.difference) == "27.1" and t06.executions == {"full": 96, "curated": 96}
    agents = {a.agent: a for a in quick.by_agent}
    assert agents["opus5"].pass_counts == {"full": (229, 288), "curated": (247, 288)}
    assert [one(agents[a].passed.difference) for a in ("opus5", "grok", "sol")] == [
        "6.2", "12.8", "6.9"]
    assert [one(agents[a].access.difference) for a in ("opus5", "grok", "sol")] == [
        "12.8", "17.5", "22.3"]


def test_curators_and_raw_bootstraps(quick: Analysis) -> None:
    c1, c2 = quick.packets
    assert (c1.packet, c1.passed, c1.graded) == ("curator 1", 334, 432)
    assert (one(c1.contrast.difference), one(c1.contrast.interval.lower),
            one(c1.contrast.interval.upper)) == ("9.1", "2.3", "14.7")
    assert (c1.positive, c1.tasks) == (6, 8)
    assert [(d.task, one(d.difference)) for d in c1.reversals] == [("T03", "-8.3"), ("T08", "-3.3")]
    assert (one(c2.contrast.difference), one(c2.contrast.interval.lower),
            one(c2.contrast.interval.upper)) == ("8.2", "-0.8", "17.2")
    assert (c2.positive, c2.tasks) == (7, 8)
    assert [(d.task, one(d.difference)) for d in c2.reversals] == [("T03", "-17.6")]
    given = quick.pass_given_access
    assert (one(given.full), one(given.curated)) == ("84.2", "82.7")
    assert given.interval.lower == pytest.approx(-0.0626150460184074, abs=1e-12)
    assert given.interval.upper == pytest.approx(0.026907299047976053, abs=1e-12)


def test_table_1_from_matched_results(shared_data: Path) -> None:
    summary = summarize_packets(read_matched_packets(find_ledgers(shared_data / "workworld")))
    assert (summary.packets, summary.size_median, summary.size_range) == (16, 9.0, (7, 11))
    assert {k: f"{v:.1f}" for k, v in summary.size_mean_by_packet.items()} == {
        "curator 1": "9.0", "curator 2": "9.1"}
    assert (summary.pairs_differing, summary.task_pairs) == (5, 8)
    assert f"{summary.jaccard_mean:.2f}" == "0.87" and summary.jaccard_range == (0.7, 1.0)
    assert (summary.initially_sufficient, summary.criterion_packet_pairs) == (128, 144)
    assert (summary.revised, summary.adjudicator_added, summary.finally_sufficient) == (2, 0, 144)
