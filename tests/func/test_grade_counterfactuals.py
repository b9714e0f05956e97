"""Counterfactual deliverables through `worldkit grade --judge facts` (a workspace, no log), and the
oracle through `worldkit run` with the facts judge: the CLI grades them as the overlays declare.

Without a log `grade` sees no mail or record change, so only the criteria that read workspace
files are compared (and only for variants whose difference is in the files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.overlay import apply_overlay, find_overlays, load_overlay
from worldkit.overlay.discrimination import variant_state

PATHS = {p.parent.name: p for p in find_overlays("pharmaco_demo")}


def _cli(capsys, *argv: str) -> dict:
    assert run([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _file_criteria(overlay) -> set[str]:
    return {c.id for c in overlay.rubric if c.route == "semantic" or (c.check and c.check.workspace_paths())}


@pytest.mark.slow
@pytest.mark.parametrize("task", ["qualification-sweep", "supplier-change-audit"])
def test_grade_cli_grades_the_counterfactual_workspaces_as_declared(capsys, tmp_path: Path, task: str) -> None:
    overlay = load_overlay(PATHS[task])
    projection = apply_overlay(overlay, tmp_path / "package").candidate / "projection"
    files_only = [v for v in overlay.counterfactuals if not v.actions and not v.drop_tools]
    assert {v.kind for v in files_only} == {"correct", "wrong"}
    for variant in files_only:
        built = tmp_path / "built" / variant.id
        variant_state(overlay, projection, built, variant)
        workspace = tmp_path / "ws" / variant.id
        shutil.copytree(built, workspace)
        graded = _cli(capsys, "grade", "--overlay", str(PATHS[task]), "--workspace", str(workspace), "--judge", "facts")
        wanted = _file_criteria(overlay)
        if variant.kind == "correct":
            expected = {c: "pass" for c in wanted}
        else:
            expected = {c: v for c, v in {**{c: "pass" for c in variant.passes},
                                          **{c: "fail" for c in variant.fails}}.items() if c in wanted}  # fmt: skip
        got = {c: graded["criteria"][c] for c in expected}
        assert got == expected, variant.id
        assert all(graded["graded_by"][c] == "facts" for c in expected if overlay.criterion(c).route == "semantic")


@pytest.mark.slow
def test_oracle_and_noop_through_run_with_the_facts_judge(capsys, tmp_path: Path) -> None:
    path = str(PATHS["qualification-sweep"])
    common = ["--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 'store.db'}", "--judge", "facts"]
    oracle = _cli(capsys, "run", "--overlay", path, "--agent", "oracle", *common)
    assert set(oracle["criteria"].values()) == {"pass"}, oracle["criteria"]
    assert oracle["graded_by"]["QS5"] == "facts" and oracle["judge"]["kind"] == "facts"
    noop = _cli(capsys, "run", "--overlay", path, "--agent", "noop", *common)
    assert set(noop["criteria"].values()) == {"fail"}, noop["criteria"]
