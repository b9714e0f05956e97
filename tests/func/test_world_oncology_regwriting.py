"""The `oncology_regwriting` world (issue 17): a regulatory-writing world frozen before the approval
day. Its shape (seats, files per task seat, dated events across the task date, verifier-only later
states), `verify`, and the oracle/noop pipeline on its tasks."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from tests.task_runs import oracle_and_noop, task_conditions
from worldkit._cli.main import run
from worldkit.overlay import find_overlays, load_overlay, reference_bytes
from worldkit.overlay.stats import world_stats
from worldkit.world import load_world

WORLD = "oncology_regwriting"
TASK_DATE = dt.date(2026, 4, 20)
APPROVAL_DAY = dt.date(2026, 5, 15)
OVERLAYS = find_overlays(WORLD)


@pytest.fixture(scope="module")
def state():
    return load_world(WORLD).revision("r1")


def test_the_world_has_its_seats_tasks_and_files(state) -> None:
    overlays = [load_overlay(p) for p in OVERLAYS]
    assert len(state.seats) >= 4 and 3 <= len(overlays) <= 4
    stats = world_stats(load_world(WORLD), TASK_DATE)
    task_seats = {o.seat for o in overlays}
    assert all(stats.files_per_seat[seat] >= 150 for seat in task_seats), stats.files_per_seat
    assert {o.date for o in overlays} == {TASK_DATE}
    assert all(any(c.route == "semantic" for c in o.rubric) and any(c.route == "deterministic" for c in o.rubric)
               for o in overlays)  # fmt: skip
    assert all(set(o.curated) == {"curator-1", "curator-2"} and o.counterfactuals for o in overlays)


def test_dated_events_cross_the_task_date_and_later_states_are_verifier_only(state) -> None:
    later_docs = [d for d in state.documents.values() if d.visible_from > TASK_DATE]
    later_mail = [m for m in state.messages.values() if m.date > TASK_DATE]
    later_events = [e for r in state.records.values() for e in r.events if e.date > TASK_DATE]
    assert later_docs and later_mail and later_events
    hidden = {d.id for d in state.documents.values() if d.verifier_only}
    assert {"D-LBL-APPROVED", "D-APPROVAL-LETTER", "D-REVIEW-REPORT"} <= hidden
    assert all(state.documents[d].visible_from >= APPROVAL_DAY for d in hidden)
    application = state.records["RIM-MAA-ORV-2025-001"]
    assert [e.status for e in application.events if e.date == APPROVAL_DAY] == ["approved"]


def test_reference_files_point_at_the_verifier_only_label(state) -> None:
    overlay = load_overlay(next(p for p in OVERLAYS if load_overlay(p).id == "label-efficacy-update"))
    label = reference_bytes(overlay)["approved-label.md"].decode()
    assert "61/142" in label and "approved label (15 May 2026)" in label


def test_verify_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", "--world", WORLD, "--json"]) == 0, capsys.readouterr().err
    body = json.loads(capsys.readouterr().out)
    assert body["status"] == "pass"
    assert {c["id"] for c in body["checks"] if c["status"] == "fail"} == set()


def _oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    oracle, noop = oracle_and_noop(overlay_path, condition, tmp_path)
    failed = [cid for cid, verdict in oracle["criteria"].items() if verdict != "pass"]
    assert oracle["deterministic_total"] > 0 and failed == [], f"oracle failed {failed}"
    assert [cid for cid, verdict in noop["criteria"].items() if verdict == "pass"] == []


def test_oracle_passes_and_noop_fails_one_task(tmp_path: Path) -> None:
    _oracle_and_noop(next(p for p in OVERLAYS if "label-efficacy-update" in str(p)), "full", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("overlay_path", "condition"), task_conditions(OVERLAYS))
def test_oracle_passes_and_noop_fails_every_task(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    _oracle_and_noop(overlay_path, condition, tmp_path)


@pytest.mark.slow
def test_verify_seeded_catches_every_applicable_fault(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["verify", "--world", WORLD, "--seeded", "--json"]) == 0, capsys.readouterr().err
    seeded = json.loads(capsys.readouterr().out)["seeded"]
    assert seeded["detected"] == seeded["attempted"] - seeded["not_applicable"] > 0
