"""Hand-written deliverables through `worldkit grade --overlay T --workspace DIR --judge facts`.

`tests/fixtures/deliverables/<task>/right/<case>/` holds what a careful employee could hand in
(their own wording, any encoding or office format); `…/wrong/<case>/` a plausible wrong answer
with `expect.yaml` naming the criteria it breaks. None of them is produced by worldkit: the
`.xlsx-source` / `.docx-source` files are hand-written text that this test saves as a workbook or
a Word document (with openpyxl / python-docx) under the deliverable's name, as Excel or Word would.

A right deliverable passes every criterion, except those on mail or record changes, which
`grade` without a log reports as `unknown`; a wrong one fails each criterion it breaks.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from worldkit._cli.main import run

FIXTURES = Path(__file__).parent.parent / "fixtures" / "deliverables"
NEEDS_LOG = {"mail_sent", "mail_not_sent", "record_state_equals", "change_made", "no_prohibited_change"}
CASES = sorted((case.parent.parent.name, case.parent.name, case.name) for case in FIXTURES.glob("*/*/*") if case.is_dir())


def build_workspace(case: Path, workspace: Path) -> None:
    """Copy a case's files into `workspace`, saving `*.xlsx-source` / `*.docx-source` as office files."""
    from docx import Document
    from openpyxl import Workbook

    workspace.mkdir(parents=True)
    for source in sorted(case.iterdir()):
        if source.name == "expect.yaml":
            continue
        if source.name.endswith(".xlsx-source"):
            book = Workbook()
            for row in csv.reader(io.StringIO(source.read_text(encoding="utf-8"))):
                book.active.append([_typed(cell) for cell in row])
            book.save(workspace / source.name.removesuffix(".xlsx-source"))
        elif source.name.endswith(".docx-source"):
            document = Document()
            for block in source.read_text(encoding="utf-8").split("\n\n"):
                if block.startswith("#"):
                    level = len(block) - len(block.lstrip("#"))
                    document.add_heading(block.lstrip("#").strip(), level=level)
                else:
                    document.add_paragraph(block.strip())
            document.save(workspace / source.name.removesuffix(".docx-source"))
        else:
            shutil.copyfile(source, workspace / source.name)


def _typed(cell: str) -> object:
    try:
        return float(cell) if "." in cell else int(cell)
    except ValueError:
        return cell


WORLDS = ("pharmaco_demo", "clinical_site", "diagnostics_pma", "oncology_regwriting")


def _world(task: str) -> str:
    """The shipped world whose overlays include `task`."""
    from worldkit.overlay import find_overlays

    return next(w for w in WORLDS if any(p.parent.name == task for p in find_overlays(w)))


def _grade(capsys: pytest.CaptureFixture[str], task: str, workspace: Path) -> dict:
    code = run(["grade", "--overlay", f"{_world(task)}/{task}", "--workspace", str(workspace), "--judge", "facts",
                "--json"])  # fmt: skip
    assert code == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "kind", "name"), CASES, ids=["/".join(c) for c in CASES])
def test_hand_written_deliverables_grade_as_a_careful_reader_would(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, task: str, kind: str, name: str
) -> None:
    from worldkit.overlay import find_overlays, load_overlay

    overlay = load_overlay(next(p for p in find_overlays(_world(task)) if p.parent.name == task))
    case = FIXTURES / task / kind / name
    build_workspace(case, tmp_path / "workspace")
    graded = _grade(capsys, task, tmp_path / "workspace")["criteria"]
    needs_log = {c.id for c in overlay.rubric if c.check is not None and c.check.type in NEEDS_LOG}
    assert {c for c, v in graded.items() if v == "unknown"} == needs_log, graded
    if kind == "right":
        assert {c: v for c, v in graded.items() if c not in needs_log} == {c: "pass" for c in graded if c not in needs_log}
    else:
        breaks = yaml.safe_load((case / "expect.yaml").read_text(encoding="utf-8"))["fails"]
        assert breaks and {c: graded[c] for c in breaks} == {c: "fail" for c in breaks}


@pytest.mark.slow
def test_the_summary_line_counts_unknown_criteria_apart(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    build_workspace(FIXTURES / "supplier-change-audit" / "right" / "only-after-approval", tmp_path / "workspace")
    code = run(["grade", "--overlay", "pharmaco_demo/supplier-change-audit", "--workspace", str(tmp_path / "workspace"),
                "--judge", "facts"])  # fmt: skip
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  SA8          unknown      unknown" in lines
    assert lines[-1] == "deterministic: 6/7 passed, 1 unknown without the event log (pass --log RUN_ID)"
