"""`overlay check`: each problem is produced by a deliberately broken overlay and names its item."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fixtures.overlays import make_broken
from tests.fixtures.overlays.paths import BROKEN, FIXTURES, GOOD, TRIAGE
from worldkit.errors import InvalidOverlay
from worldkit.overlay import check_overlay, new_overlay


@pytest.mark.parametrize("good", [GOOD, TRIAGE], ids=["cc1-report", "cc1-triage"])
def test_good_fixtures_have_no_problems(good: Path) -> None:
    report = check_overlay(good)
    # the small fixtures carry no counterfactuals (the PharmaCo overlays do): only that warning
    problems = [p for p in report.problems if p.code != "counterfactual-missing"]
    assert report.ok and problems == [], [p.line() for p in problems]
    assert {p.severity for p in report.problems} <= {"warning"}
    assert report.fingerprint == report.pinned_fingerprint


def test_broken_fixtures_on_disk_are_what_make_broken_writes() -> None:
    expected = make_broken.render()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in BROKEN.glob("*.yaml")}
    assert on_disk == expected, "regenerate with: python -m tests.fixtures.overlays.make_broken"


@pytest.mark.parametrize("name", sorted(make_broken.DEFECTS))
def test_each_broken_fixture_reports_exactly_its_problem(name: str) -> None:
    defect = make_broken.DEFECTS[name]
    report = check_overlay(BROKEN / f"{name}.yaml")
    assert not report.ok
    assert {p.code for p in report.errors} == defect.codes, [p.line() for p in report.errors]
    named = [p for p in report.errors if p.locator == defect.locator]
    assert named, f"no error names {defect.locator}: {[p.line() for p in report.errors]}"
    assert all(p.message and p.fix for p in report.problems)


@pytest.mark.parametrize(("name", "message"), [("invalid-yaml", "not valid YAML"), ("invalid-model", "2 problems")])
def test_invalid_fixtures_raise_invalid_overlay(name: str, message: str) -> None:
    with pytest.raises(InvalidOverlay, match=message):
        check_overlay(BROKEN / f"{name}.yaml")


def _codes(report) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for problem in report.problems:
        found.setdefault(problem.code, []).append(problem.locator)
    return found


def test_warnings_do_not_fail_the_check(mutated) -> None:
    def change(raw: dict) -> None:
        raw["curated"]["curator-1"] = ["records/qms/CC-1.json", "records/qms/CC-1.json"]
        raw["reviewed_overlaps"].append({"sha256": "ab" * 32, "rationale": "stale"})
        raw["truth"]["sources"].append({"surface": "mail", "locator": "M404"})

    report = check_overlay(mutated(change))
    assert report.ok, [p.line() for p in report.errors]
    codes = _codes(report)
    assert codes["curated-duplicate"] == ["curated.curator-1[1]"]
    assert "curated.curator-1" in codes["packet-incomplete"]
    assert codes["overlap-unused"] == ["reviewed_overlaps[1]"]
    assert set(codes["counterfactual-missing"]) == {"counterfactuals"}  # none declared: warnings
    assert codes["truth-source-missing"] == ["truth.sources[2]"]
    assert all(p.severity == "warning" for p in report.problems)


def test_every_problem_is_reported_not_just_the_first(mutated) -> None:
    def change(raw: dict) -> None:
        raw["evidence"]["C1"][0][0]["locator"] = "CC-404"
        raw["deliverable"]["path"] = "/abs/report.md"
        raw["curated"]["curator-1"].append("files/nope.md")
        raw["pinned_fingerprint"] = "1" * 64

    codes = {p.code for p in check_overlay(mutated(change)).errors}
    # the reference does not write the moved deliverable, so the absences are not credited: reference-fails
    assert codes == {"evidence-missing", "deliverable-outside-workspace", "curated-missing", "fingerprint-stale",
                     "reference-fails"}


def test_chat_message_locators_and_reads(mutated) -> None:
    report = check_overlay(mutated(lambda r: r["evidence"]["C2"][1][0].update(locator="chan-qc#CH9")))
    assert [(p.code, p.locator) for p in report.errors] == [("evidence-missing", "evidence.C2[1][0]")]
    report = check_overlay(mutated(lambda r: r["reference"]["actions"][2]["args"].update(id="CH9")))
    assert [(p.code, p.locator) for p in report.errors] == [("reference-action-target-missing", "reference.actions[2]")]


def test_surface_the_seat_does_not_have(tmp_path: Path) -> None:
    path = new_overlay(str(FIXTURES / "world"), "r2", "2025-07-01", "S4", "hr-task", tmp_path / "hr-task.yaml")
    raw = yaml.safe_load(path.read_text())
    assert raw["surfaces"] == ["files", "communication"]  # HR sees no records
    raw["surfaces"].append("records")
    path.write_text(yaml.safe_dump(raw))
    report = check_overlay(path)
    assert [(p.code, p.locator) for p in report.errors if p.code != "placeholder-left"] == [
        ("surface-unavailable", "surfaces[2]")
    ]


def test_report_json_shape() -> None:
    data = check_overlay(BROKEN / "evidence-missing.yaml").as_json()
    asking = sum(p["code"] == "counterfactual-missing" for p in data["problems"])  # the fixture has none
    assert data["ok"] is False and data["errors"] == 1 and data["warnings"] == 2 + asking
    first = next(p for p in data["problems"] if p["severity"] == "error")
    assert first == {
        "code": "evidence-missing",
        "severity": "error",
        "locator": "evidence.C1[0][0]",
        "message": "record CC-404 is not in the candidate view",
        "fix": "point the locator at an item the seat can see on that date (see `worldkit materialize … --json` / "
        "the projection's manifest.json)",
    }


def test_a_placeholder_in_any_text_field_is_an_error_naming_the_field(mutated) -> None:
    def leave_todos(raw: dict) -> None:
        raw["rubric"][12]["guidance"] = "TODO"
        raw["truth"]["facts"].append("CC-1 TODO: check the date")
        raw["reference_files"][1]["text"] = "Notes.\n\nTODO: write the notes.\n"

    report = check_overlay(mutated(leave_todos))
    found = [(p.code, p.locator, p.message) for p in report.errors]
    assert found == [
        ("placeholder-left", "rubric[12].guidance", "still holds the placeholder TODO ('TODO')"),
        ("placeholder-left", "reference_files[1].text", "still holds the placeholder TODO ('TODO: write the notes.')"),
        ("placeholder-left", "truth.facts[1]", "still holds the placeholder TODO ('CC-1 TODO: check the date')"),
    ]


def test_todo_inside_a_word_or_in_lower_case_is_not_a_placeholder(mutated) -> None:
    def words(raw: dict) -> None:
        raw["truth"]["facts"].append("The todo list and TODOS.md are not markers; nor is MASTODON.")

    assert not [p for p in check_overlay(mutated(words)).problems if p.code == "placeholder-left"]


def test_a_revised_packet_states_what_its_first_submission_lacked(mutated) -> None:
    def change(raw: dict, missing: list[str]) -> None:
        final = raw["curated"]["curator-1"]
        raw["curation"] = {"curator-1": {"revised": True, "first_submitted": [p for p in final if p != "records/qms/CC-1.json"],
                                         "missing_criteria": missing}}

    report = check_overlay(mutated(lambda raw: change(raw, ["C2"])))
    wrong = [p for p in report.errors if p.code == "curation-misstated"]
    assert [p.locator for p in wrong] == ["curation.curator-1.missing_criteria"]
    found = wrong[0].fix.split("[", 1)[1].split("]", 1)[0].split(", ")
    assert "C1" in found  # C1's only evidence is CC-1
    right = check_overlay(mutated(lambda raw: change(raw, found)))
    assert "curation-misstated" not in {p.code for p in right.problems}


@pytest.mark.parametrize(("curation", "message"), [
    ({"curator-9": {"revised": False}}, "not under curated"),
    ({"curator-1": {"revised": True}}, "a revised packet lists first_submitted"),
    ({"curator-1": {"first_submitted": ["mail/M1.json"]}}, "set revised: true"),
    ({"curator-1": {"revised": True, "first_submitted": ["mail/M1.json"], "missing_criteria": ["C99"]}}, "unknown criteria C99"),
])
def test_curation_records_are_validated(curation: dict, message: str) -> None:
    from tests.fixtures.overlays.paths import good_raw
    from worldkit.overlay.load import parse_overlay

    raw = good_raw()
    raw["curation"] = curation
    with pytest.raises(InvalidOverlay, match=message):
        parse_overlay(raw)
