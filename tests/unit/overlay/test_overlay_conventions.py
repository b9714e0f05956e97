"""Issue 17 authoring rules for overlays: a reference file may be a world verifier-only document,
and every place that takes a path names the other two path conventions in its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from worldkit.errors import InvalidOverlay
from worldkit.overlay import load_overlay, reference_bytes
from worldkit.overlay.apply import apply_overlay
from worldkit.overlay.author import pin_overlay
from worldkit.overlay.load import parse_overlay
from worldkit.overlay.problems import check_overlay
from worldkit.scaffold import new_world

LABEL = """\
  - id: D-LABEL-FINAL
    path: Memos/final-label.md
    system: drive
    text: "# Final label\\n\\nThe approved window is five working days (verifier side).\\n"
    department: QA
    visible_from: 2025-09-15
    verifier_only: true
"""


@pytest.fixture()
def project(tmp_path: Path) -> dict:
    made = new_world("conv", tmp_path)
    content = made.world / "data" / "content.yaml"
    text = content.read_text(encoding="utf-8")
    content.write_text(text.rstrip("\n") + "\n" + LABEL, encoding="utf-8")  # the last of its documents
    overlay = made.overlays / "first-task.yaml"
    return {"overlay": overlay, "raw": yaml.safe_load(overlay.read_text(encoding="utf-8"))}


def _write(project: dict, raw: dict) -> Path:
    project["overlay"].write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return project["overlay"]


def test_a_reference_file_is_a_world_verifier_only_document(project: dict, tmp_path: Path) -> None:
    raw = project["raw"]
    raw["reference_files"].append({"name": "final-label.md", "document": "D-LABEL-FINAL"})
    pin_overlay(_write(project, raw))  # the new document changed the revision digest
    overlay = load_overlay(project["overlay"])
    found = reference_bytes(overlay)
    assert found["final-label.md"] == b"# Final label\n\nThe approved window is five working days (verifier side).\n"
    report = check_overlay(overlay)
    assert report.ok, [p.line() for p in report.errors]
    package = apply_overlay(overlay, tmp_path / "pkg")
    written = package.out / "verifier" / "reference" / "files" / "final-label.md"
    assert written.read_bytes() == found["final-label.md"]
    assert not any(p.name == "final-label.md" for p in (package.out / "candidate").rglob("*"))


@pytest.mark.parametrize(
    ("document", "match"),
    [
        ("D-NOPE", r"has no document 'D-NOPE'; its verifier-only documents are: D-LABEL-FINAL"),
        ("D-MEMO", r"document D-MEMO is not verifier_only"),
    ],
)
def test_a_reference_document_must_be_a_verifier_only_world_document(project: dict, document: str, match: str) -> None:
    raw = project["raw"]
    raw["reference_files"].append({"name": "x.md", "document": document})
    overlay = load_overlay(_write(project, raw))
    with pytest.raises(InvalidOverlay, match=match):
        reference_bytes(overlay)
    problems = [p for p in check_overlay(overlay).errors if p.code == "reference-file-missing"]
    assert len(problems) == 1 and problems[0].locator == "reference_files[x.md]"


def test_a_reference_file_names_one_source() -> None:
    from worldkit.overlay.models import ReferenceFile

    with pytest.raises(ValueError, match="exactly one of `text`, `path` or `document`"):
        ReferenceFile(name="x.md", text="a", document="D-1")


CONVENTIONS = "tool calls (`read_file` in reference.actions) use the drive path without `files/`"


def test_an_evidence_locator_without_files_names_the_conventions(project: dict) -> None:
    raw = project["raw"]
    raw["evidence"]["C2"] = [[{"surface": "files", "locator": "Shared/Memos/review-window.md"}]]
    with pytest.raises(InvalidOverlay) as caught:
        parse_overlay(raw, project["overlay"])
    message = caught.value.message
    assert "did you mean 'files/Shared/Memos/review-window.md'?" in message and CONVENTIONS in message
    assert "workspace-relative" in message


def _codes(project: dict, raw: dict) -> dict[str, str]:
    report = check_overlay(load_overlay(_write(project, raw)))
    return {p.code: f"{p.message} | {p.fix}" for p in report.errors}


def test_a_read_file_with_a_projection_path_says_drop_files(project: dict) -> None:
    raw = project["raw"]
    raw["reference"]["actions"][0] = {"tool": "read_file", "args": {"path": "files/Shared/Memos/review-window.md"}}
    found = _codes(project, raw)["reference-action-target-missing"]
    assert "did you mean 'Shared/Memos/review-window.md'?" in found and CONVENTIONS in found


def test_a_curated_path_without_files_says_add_files(project: dict) -> None:
    raw = project["raw"]
    raw["curated"]["curator-1"][0] = "Shared/Memos/review-window.md"
    found = _codes(project, raw)["curated-missing"]
    assert "did you mean 'files/Shared/Memos/review-window.md'?" in found and CONVENTIONS in found


def test_a_deliverable_under_workspace_says_drop_workspace(project: dict) -> None:
    raw = project["raw"]
    raw["deliverable"]["path"] = "workspace/answer.md"
    found = _codes(project, raw)["deliverable-not-writable"]
    assert "did you mean 'answer.md'?" in found and CONVENTIONS in found


def test_a_check_on_a_projection_path_says_it_reads_the_workspace(project: dict) -> None:
    raw = project["raw"]
    raw["rubric"][1]["check"]["path"] = "files/Shared/answer.md"
    found = _codes(project, raw)["check-path-not-writable"]
    assert "written to the workspace, not the seat's projection" in found and CONVENTIONS in found


def test_a_write_file_under_workspace_says_drop_workspace(project: dict) -> None:
    raw = project["raw"]
    write = next(a for a in raw["reference"]["actions"] if a["tool"] == "write_file")
    write["args"]["path"] = "workspace/answer.md"
    found = _codes(project, raw)["reference-action-target-missing"]
    assert "write_file 'workspace/answer.md': did you mean 'answer.md'?" in found
