"""The pipeline's end-to-end check on every pharmaco_demo task: the oracle passes every
criterion (semantic ones by the offline facts judge) and noop passes nothing (an absence is credited only when the
deliverable exists), under the full view and under each curated packet."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.overlay import find_overlays, load_overlay
from worldkit.run.judge import make_judge
from worldkit.run.runner import run_task

OVERLAYS = find_overlays("pharmaco_demo")
CASES = [
    pytest.param(path, condition, id=f"{load_overlay(path).id}-{condition}")
    for path in OVERLAYS
    for condition in ["full", *(f"curated:{name}" for name in sorted(load_overlay(path).curated))]
]


@pytest.mark.slow
@pytest.mark.parametrize(("overlay_path", "condition"), CASES)
def test_oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    overlay = load_overlay(overlay_path)
    store = f"sqlite:///{tmp_path / 'store.db'}"
    facts = make_judge("facts")
    oracle = run_task(overlay, "oracle", condition=condition, runs_dir=tmp_path / "runs", store_url=store,
                      judge=facts).summary()  # fmt: skip
    assert oracle["deterministic_total"] > 0
    failed = [cid for cid, verdict in oracle["criteria"].items() if verdict != "pass"]
    assert oracle["deterministic_passed"] == oracle["deterministic_total"], f"oracle failed {failed}"
    assert failed == [], f"the facts judge fails the oracle on {failed}"
    noop = run_task(overlay, "noop", condition=condition, runs_dir=tmp_path / "runs", store_url=store,
                    judge=facts).summary()  # fmt: skip
    assert [cid for cid, verdict in noop["criteria"].items() if verdict == "pass"] == []


def test_the_panel_has_eight_tasks_on_six_seats() -> None:
    overlays = [load_overlay(p) for p in OVERLAYS]
    assert len(overlays) == 8
    assert len({o.seat for o in overlays}) == 6
    assert sum(len(o.rubric) for o in overlays) == 72
