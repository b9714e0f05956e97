"""The clinical_site world (a hospital research unit during ALD-2207 start-up) and its tasks.

Fast: the world's shape (seats, files per task seat, tasks, later states dated after the task
date), the core verify checks on its frozen manifests, and oracle/noop on one task. Slow: the
whole `verify`, and oracle/noop on every task under every condition.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.task_runs import oracle_and_noop, task_conditions
from worldkit.overlay import find_overlays, load_overlay
from worldkit.overlay.stats import world_stats
from worldkit.verify.runner import verify_world
from worldkit.world.load import load_world

WORLD = "clinical_site"
TASK_DATE = dt.date(2026, 4, 15)
OVERLAYS = find_overlays(WORLD)


def _oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    oracle, noop = oracle_and_noop(overlay_path, condition, tmp_path)
    failed = [cid for cid, verdict in oracle["criteria"].items() if verdict != "pass"]
    assert oracle["deterministic_total"] > 0
    assert failed == [], f"oracle fails {failed}"
    assert [cid for cid, verdict in noop["criteria"].items() if verdict == "pass"] == []


def test_shape_seats_files_tasks_and_later_states() -> None:
    package = load_world(WORLD)
    stats = world_stats(package, TASK_DATE)
    overlays = [load_overlay(p) for p in OVERLAYS]
    assert len(stats.seats) >= 4
    assert 3 <= len(overlays) <= 4
    task_seats = {o.seat for o in overlays}
    assert all(o.date == TASK_DATE for o in overlays)
    assert {seat: n for seat, n in stats.files_per_seat.items() if seat in task_seats and n < 150} == {}
    for overlay in overlays:
        routes = {c.route for c in overlay.rubric}
        assert routes == {"deterministic", "semantic"}, overlay.id
        assert {"curator-1", "curator-2"} <= set(overlay.curated), overlay.id
    state = package.revision("r1")
    later = [d.id for d in state.documents.values() if d.visible_from > TASK_DATE]
    assert {"DOC-HREB-058-APPROVAL", "DOC-ACTIVATION-LETTER"} <= set(later)
    later_events = {r.id for r in state.records.values() if any(e.date > TASK_DATE for e in r.events)}
    assert {"SUB-2026-058", "MS-114-06", "LMS-GCP-twren-2"} <= later_events
    assert any(d.verifier_only for d in state.documents.values())


def test_core_verify_checks_pass(tmp_path: Path) -> None:
    report = verify_world(WORLD, repeats=1, jobs=1, scratch=tmp_path, only=[
        "revision-digests", "manifest-integrity", "revision-pins", "date-conformance", "access-audit",
        "overlay-locks", "separation", "evidence-sufficiency", "rubric-sanity", "reference-access",
    ])  # fmt: skip
    assert [c.id for c in report.checks if c.status != "pass"] == []


def test_oracle_passes_and_noop_fails_consent_task(tmp_path: Path) -> None:
    path = next(p for p in OVERLAYS if load_overlay(p).id == "consent-version-status")
    _oracle_and_noop(path, "full", tmp_path)


@pytest.mark.slow
def test_full_verify_passes(tmp_path: Path) -> None:
    report = verify_world(WORLD, scratch=tmp_path)
    assert report.status == "pass", [c.id for c in report.failed + report.errored]


CASES = task_conditions(OVERLAYS)


@pytest.mark.slow
@pytest.mark.parametrize(("overlay_path", "condition"), CASES)
def test_oracle_and_noop_every_task(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    _oracle_and_noop(overlay_path, condition, tmp_path)
