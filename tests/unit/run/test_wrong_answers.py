"""The searcher's wrong answers: the reference deliverable with one criterion spoiled, graded by the
rubric's own checks (code the perturbation does not share). Tests that stage the PharmaCo task are
slow: in a fresh cache they materialize the world first."""

from __future__ import annotations

import csv
import io
import random
import tempfile
from pathlib import Path

import pytest

from worldkit.overlay import load_overlay, resolve_overlay
from worldkit.overlay.discrimination import grade_state
from worldkit.overlay.grading import replay_actions, seed_workspace
from worldkit.overlay.models import OracleAction, Overlay
from worldkit.run.runner import run_task
from worldkit.run.wrong_answers import Deliverable, ReferencePerturbation, reference_deliverable

ROOT = Path(__file__).resolve().parents[3]
SWEEP = ROOT / "overlays" / "pharmaco_demo" / "qualification-sweep"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> tuple[Overlay, Path]:
    tmp = tmp_path_factory.mktemp("sweep")
    overlay = load_overlay(resolve_overlay(SWEEP))
    result = run_task(overlay, "noop", runs_dir=tmp / "runs", store_url=f"sqlite:///{tmp / 'store.db'}")
    return overlay, result.run_dir / "package" / "candidate" / "projection"


def _grade(overlay: Overlay, projection: Path, deliverable: Deliverable) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch) / "workspace"
        seed_workspace(overlay, workspace)
        actions = [OracleAction(tool=tool, args=args) for tool, args in deliverable.actions()]
        ctx, _ = replay_actions(overlay, projection, workspace, actions)
        return {criterion: verdict for criterion, (verdict, _) in grade_state(overlay, ctx).items()}


def _rows(deliverable: Deliverable) -> dict[str, str]:
    table = csv.DictReader(io.StringIO(deliverable.files["qualification-sweep.csv"]))
    return {row["equipment_id"]: row["status"] for row in table}


@pytest.mark.slow  # stages PharmaCo (materializes the world in a fresh cache)
def test_the_reference_passes_everything(sweep: tuple[Overlay, Path]) -> None:
    overlay, projection = sweep
    assert set(_grade(overlay, projection, reference_deliverable(overlay)).values()) == {"pass"}


@pytest.mark.slow  # stages PharmaCo (materializes the world in a fresh cache)
@pytest.mark.parametrize("criterion", ["QS1", "QS2", "QS3", "QS4", "QS5"])
def test_a_spoiled_criterion_fails_and_the_others_still_pass(sweep: tuple[Overlay, Path], criterion: str) -> None:
    overlay, projection = sweep
    spoiled = ReferencePerturbation().spoil(overlay, criterion, reference_deliverable(overlay), random.Random(0))
    verdicts = _grade(overlay, projection, spoiled)
    assert verdicts[criterion] == "fail"
    assert {c: v for c, v in verdicts.items() if c != criterion} == {c: "pass" for c in verdicts if c != criterion}


@pytest.mark.slow  # stages PharmaCo (materializes the world in a fresh cache)
def test_a_wrong_status_is_another_status_of_the_enumeration(sweep: tuple[Overlay, Path]) -> None:
    overlay, _ = sweep
    reference = reference_deliverable(overlay)
    spoiled = ReferencePerturbation().spoil(overlay, "QS2", reference, random.Random(0))
    before, after = _rows(reference), _rows(spoiled)
    assert before["SC-04"] == "open-deviation"
    assert after["SC-04"] in {"ok", "overdue"}
    assert {k: v for k, v in after.items() if k != "SC-04"} == {k: v for k, v in before.items() if k != "SC-04"}


@pytest.mark.slow  # stages PharmaCo (materializes the world in a fresh cache)
def test_a_semantic_criterion_loses_its_sentences_but_not_the_table(sweep: tuple[Overlay, Path]) -> None:
    overlay, _ = sweep
    reference = reference_deliverable(overlay)
    spoiled = ReferencePerturbation().spoil(overlay, "QS5", reference, random.Random(0))
    assert _rows(spoiled) == _rows(reference)
    memo = spoiled.files["qualification-sweep.md"]
    assert "raise a deviation for SC-03" in reference.files["qualification-sweep.md"]
    assert "raise a deviation for SC-03" not in memo
    assert "SC-07 passed its PQ" in memo  # a sentence no required fact needs stays


def test_a_mail_criterion_is_spoiled_by_not_sending() -> None:
    overlay = load_overlay(resolve_overlay(ROOT / "overlays" / "pharmaco_demo" / "stability-update"))
    reference = reference_deliverable(overlay)
    assert reference.messages
    spoiled = ReferencePerturbation().spoil(overlay, "SU11", reference, random.Random(0))
    assert spoiled.messages == ()
    assert spoiled.files == reference.files
