"""The PharmaCo rubrics discriminate: for every task, each counterfactual deliverable grades as its
overlay declares, through the grading function `worldkit run` uses (`run.grading.grade_captured`)
with the offline `facts` judge; nothing done passes 0 of 72; the reference passes every criterion.

The per-task counts are printed (`-s`) as one JSON line each, for the closing note."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldkit.grade.grading import Captured, grade_captured
from worldkit.grade.judge import make_judge
from worldkit.mcp.state import scan_workspace
from worldkit.overlay import apply_overlay, find_overlays, load_overlay
from worldkit.overlay.discrimination import (
    NOTHING_DONE,
    REFERENCE,
    discriminate,
    variant_state,
)
from worldkit.overlay.models import Counterfactual, Overlay
from worldkit.overlay.toolconfig import ToolConfig

PATHS = find_overlays("pharmaco_demo")
PER_TASK = {"stability-update": 11, "authority-response": 14, "shelf-life-assessment": 5, "qualification-sweep": 5,
            "overwrap-position": 11, "validation-defense": 9, "records-integrity": 9, "supplier-change-audit": 8}  # fmt: skip


def _grade(overlay: Overlay, candidate: Path, workspace: Path, variant: Counterfactual) -> dict[str, str]:
    """The variant's final state graded as a run is: checks, then the judge for semantic criteria."""
    ctx = variant_state(overlay, candidate / "projection", workspace, variant)
    captured = Captured(
        overlay=overlay, candidate=candidate, workspace=workspace, events=None, context=ctx,
        request=(candidate / "request.md").read_text(encoding="utf-8"),
        config=ToolConfig.model_validate_json((candidate / "tool-config.json").read_bytes()),
        workspace_before={}, workspace_after=scan_workspace(workspace), state_before="", state_after=None,
    )  # fmt: skip
    grades = grade_captured(captured, make_judge("facts"))
    for outcome in grades.outcomes:
        assert outcome.graded_by == ("check" if outcome.route == "deterministic" else "facts"), outcome
    return {o.id: o.result for o in grades.outcomes}


def test_the_panel_keeps_its_72_criteria() -> None:
    overlays = {load_overlay(p).id: load_overlay(p) for p in PATHS}
    assert {k: len(v.rubric) for k, v in overlays.items()} == PER_TASK
    assert sum(PER_TASK.values()) == 72


@pytest.mark.parametrize("path", PATHS, ids=[p.parent.name for p in PATHS])
def test_counterfactuals_grade_as_declared(path: Path, tmp_path: Path) -> None:
    overlay = load_overlay(path)
    semantic = [c.id for c in overlay.rubric if c.route == "semantic"]
    deterministic = [c.id for c in overlay.rubric if c.route == "deterministic"]
    assert sorted(overlay.truth.criteria) == sorted(semantic), "every semantic criterion has facts"
    correct = [v for v in overlay.counterfactuals if v.kind == "correct"]
    wrong = [v for v in overlay.counterfactuals if v.kind == "wrong"]
    assert len(correct) >= 2
    assert set(deterministic) <= {c for v in wrong for c in v.fails}, "every deterministic criterion has a wrong variant"

    candidate = apply_overlay(overlay, tmp_path / "package").candidate
    implicit = [
        Counterfactual(id=REFERENCE, kind="correct", description="the reference solution"),
        Counterfactual(id=NOTHING_DONE, kind="wrong", base="nothing", description="nothing done",
                       fails=[c.id for c in overlay.rubric]),
    ]  # fmt: skip
    misgraded: list[str] = []
    tally = {"correct": [0, 0], "wrong": [0, 0]}
    for variant in [*implicit, *overlay.counterfactuals]:
        verdicts = _grade(overlay, candidate, tmp_path / "ws" / variant.id, variant)
        expected = {c: "pass" for c in verdicts} if variant.kind == "correct" else {
            **{c: "pass" for c in variant.passes}, **{c: "fail" for c in variant.fails}}  # fmt: skip
        wrong_here = [f"{variant.id} {c}: {verdicts[c]} (declared {e})" for c, e in expected.items() if verdicts[c] != e]
        misgraded += wrong_here
        if variant.id not in (REFERENCE, NOTHING_DONE):
            tally[variant.kind][0 if not wrong_here else 1] += 1
        if variant.id == NOTHING_DONE:
            assert [c for c, v in verdicts.items() if v == "pass"] == [], "nothing done passes nothing"
    assert misgraded == []
    print(json.dumps({"task": overlay.id, "criteria": len(overlay.rubric), "correct_variants": len(correct),
                      "correct_as_declared": tally["correct"][0], "wrong_variants": len(wrong),
                      "wrong_as_declared": tally["wrong"][0]}))  # fmt: skip


def test_the_discrimination_report_names_the_criterion_and_variant(tmp_path: Path) -> None:
    """A check weakened back to a bare mention is caught, with criterion and variant named."""
    overlay = load_overlay(next(p for p in PATHS if p.parent.name == "validation-defense"))
    rubric = [
        c.model_copy(update={"check": c.check.model_validate({"type": "claims", "path": "OBS-04-response.md",
                                                              "claims": ["CAPA-2025-0005"]})})
        if c.id == "VD5" else c
        for c in overlay.rubric
    ]  # fmt: skip
    weakened = overlay.model_copy(update={"rubric": rubric})
    candidate = apply_overlay(overlay, tmp_path / "package").candidate
    found = discriminate(weakened, candidate / "projection", tmp_path / "scratch")
    assert [(m.criterion, m.variant, m.got) for m in found.misgrades] == [("VD5", "capa-bare-mention", "pass")]
    assert "VD5 misgrades wrong variant capa-bare-mention" in found.misgrades[0].line()
