"""The `diagnostics_pma` world (Calder Point Diagnostics, PMA P250031): its figures, its dated
later states kept on the verifier side, a verify of the frozen world, and oracle/noop on its tasks.

Fast: stats, the pre-approval snapshot, a verify of the world's core checks and oracle/noop of
one task. Slow: the full verify with `--seeded` and `--mutations`, and oracle/noop of every task
under every condition."""

from __future__ import annotations

import datetime as dt
import json
from functools import cache
from pathlib import Path

import pytest

from tests.task_runs import oracle_and_noop, task_conditions
from worldkit._cli.main import run
from worldkit.access import Policy
from worldkit.materialize import plan_projection
from worldkit.overlay import find_overlays, load_overlay
from worldkit.world import load_world

WORLD = "diagnostics_pma"
TASK_DATE = dt.date(2026, 4, 15)
TASK_SEATS = {"EMP-RA-001", "EMP-AV-001", "EMP-CLIN-001", "EMP-QA-001"}
OVERLAYS = find_overlays(WORLD)


def _json(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 0) -> dict:
    assert run(argv) == code, capsys.readouterr()
    return json.loads(capsys.readouterr().out)


@cache
def _documents(date: dt.date, seat: str) -> frozenset[str]:
    state = load_world(WORLD).revision("r1")
    return frozenset(plan_projection(state, date, seat, Policy(state)).documents)


def test_stats_four_seats_and_150_files_per_task_seat(capsys: pytest.CaptureFixture[str]) -> None:
    info = _json(capsys, ["world", "stats", WORLD, "--json"])
    assert len(info["files_per_seat"]) >= 4
    assert TASK_SEATS <= set(info["files_per_seat"])
    for seat in TASK_SEATS:
        assert info["files_per_seat"][seat] >= 150, seat
    assert info["records"] > 0 and info["messages"] > 0
    assert info["overlays"] == 4 and info["criteria"] == 24


def test_four_tasks_on_four_seats_with_both_routes() -> None:
    overlays = [load_overlay(p) for p in OVERLAYS]
    assert sorted(o.id for o in overlays) == ["analytical-summary", "clinical-performance", "labeling-review", "lot-disposition"]
    assert {o.seat for o in overlays} == TASK_SEATS
    assert all(o.date == TASK_DATE for o in overlays)
    for overlay in overlays:
        routes = [c.route for c in overlay.rubric]
        assert "deterministic" in routes and "semantic" in routes, overlay.id
        assert sorted(overlay.curated) == ["curator-1", "curator-2"], overlay.id


def test_the_candidate_state_is_the_pre_approval_snapshot() -> None:
    """The approval (Sep 2026), IFU v5 (May 2026) and the supplement (2027) are dated after the
    task date; the approval order and approved labeling are verifier-only at every date."""
    later = {"D-IFU-V5", "D-APPROVAL-LETTER", "D-S001-COVER", "D-CSR-V10"}
    verifier_only = {"D-APPROVED-IFU", "D-APPROVAL-ORDER", "D-S001-APPROVAL"}
    ra_now = _documents(TASK_DATE, "EMP-RA-001")
    assert {"D-IFU-V4", "D-IUS-V3", "D-M1-COVER"} <= ra_now
    assert not (later | verifier_only) & ra_now
    ra_after = _documents(dt.date(2027, 12, 31), "EMP-RA-001")
    assert {"D-IFU-V5", "D-APPROVAL-LETTER", "D-S001-COVER"} <= ra_after
    assert not verifier_only & ra_after
    assert "D-CSR-V10" in _documents(dt.date(2026, 5, 1), "EMP-CLIN-001")


def test_permissions_separate_the_seats() -> None:
    ra, av = _documents(TASK_DATE, "EMP-RA-001"), _documents(TASK_DATE, "EMP-AV-001")
    clin, qa = _documents(TASK_DATE, "EMP-CLIN-001"), _documents(TASK_DATE, "EMP-QA-001")
    assert "D-EDC-EXPORT" in clin and "D-EDC-EXPORT" not in ra  # confidential subject-level data
    assert "D-CSR-V09" in ra  # internal clinical documents are RA's too
    assert "D-IFU-V4" not in av and "D-IFU-V4" not in qa  # the RA drive is RA's
    assert "D-BUDGET" in ra and "D-BUDGET" not in clin  # readable_by one person besides the executives
    assert "D-LRS-V2" in qa and not {"D-LRS-V2"} & (ra | av | clin)  # the Quality drive is Quality's


def test_verify_core_checks_pass(capsys: pytest.CaptureFixture[str]) -> None:
    only = "revision-digests,manifest-integrity,revision-pins,date-conformance,access-audit,evidence-sufficiency,rubric-sanity"
    body = _json(capsys, ["verify", "--world", WORLD, "--only", only, "--json"])
    assert body["status"] == "pass"
    assert {c["id"]: c["status"] for c in body["checks"]} == dict.fromkeys(only.split(","), "pass")


def _oracle_and_noop(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    oracle, noop = oracle_and_noop(overlay_path, condition, tmp_path)
    assert oracle["deterministic_total"] > 0
    assert oracle["deterministic_passed"] == oracle["deterministic_total"]
    assert [cid for cid, verdict in oracle["criteria"].items() if verdict != "pass"] == []
    assert [cid for cid, verdict in noop["criteria"].items() if verdict == "pass"] == []


def test_oracle_passes_and_noop_fails_labeling_review(tmp_path: Path) -> None:
    (path,) = [p for p in OVERLAYS if load_overlay(p).id == "labeling-review"]
    _oracle_and_noop(path, "full", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize(("overlay_path", "condition"), task_conditions(OVERLAYS))
def test_oracle_and_noop_every_task(overlay_path: Path, condition: str, tmp_path: Path) -> None:
    _oracle_and_noop(overlay_path, condition, tmp_path)


@pytest.mark.slow
def test_full_verify_seeded_and_mutations(capsys: pytest.CaptureFixture[str]) -> None:
    body = _json(capsys, ["verify", "--world", WORLD, "--seeded", "--mutations", "20", "--json"])
    assert body["status"] == "pass"
    assert {c["status"] for c in body["checks"]} <= {"pass", "skip"}
    seeded = body["seeded"]
    assert seeded["attempted"] == seeded["detected"] + seeded.get("not_applicable", 0) > 0
