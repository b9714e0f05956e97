"""The pipeline's end-to-end check on every pharmaco_demo task: the oracle passes every
criterion (semantic ones by the offline facts judge) and noop passes nothing (an absence is credited only when the
deliverable exists), under the full view and under each curated packet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.task_runs import oracle_and_noop, task_conditions
from worldkit.overlay import find_overlays, load_overlay

OVERLAYS = find_overlays("pharmaco_demo")
CASES = task_conditions(OVERLAYS)


@pytest.mark.slow
@pytest.mark.parametrize(("overlay_path", "condition"), CASES)
def test_oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    oracle, noop = oracle_and_noop(overlay_path, condition, tmp_path)
    assert oracle["deterministic_total"] > 0
    failed = [cid for cid, verdict in oracle["criteria"].items() if verdict != "pass"]
    assert oracle["deterministic_passed"] == oracle["deterministic_total"], f"oracle failed {failed}"
    assert failed == [], f"the facts judge fails the oracle on {failed}"
    assert [cid for cid, verdict in noop["criteria"].items() if verdict == "pass"] == []


def test_the_panel_has_eight_tasks_on_six_seats() -> None:
    overlays = [load_overlay(p) for p in OVERLAYS]
    assert len(overlays) == 8
    assert len({o.seat for o in overlays}) == 6
    assert sum(len(o.rubric) for o in overlays) == 72
