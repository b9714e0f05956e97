"""The mutation campaign: seed-deterministic, every family produced, a weak check caught, a sound one passed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from worldkit.mutate import generate, run_campaign
from worldkit.mutate.gate import freeze_overlay_gated, problems
from worldkit.overlay import Overlay
from worldkit.overlay.errors import OverlayProblems

RIGHT = {"csv-semicolon", "csv-tab", "csv-quoted", "encoding-utf-8-bom", "encoding-utf-16", "encoding-cp1252", "xlsx",
         "column-order", "dates-short", "dates-us", "dates-slash", "ids-lowercase", "extra-column", "footnote-excluded",
         "docx", "txt", "dates-iso", "commentary", "hedged", "verbose"}  # fmt: skip
WRONG = {"values-swapped", "date-shifted-day", "date-shifted-month", "status-flipped", "row-dropped", "row-added",
         "wrong-identifier", "wrong-record"}  # fmt: skip
NOTHING = {"empty-workspace", "request-as-deliverable", "question-restated", "header-only-table", "evidence-copies"}


def _bytes(variants: list) -> list[tuple[str, tuple]]:
    return [(v.id, v.files, v.touches) for v in variants]


def test_same_seed_same_bytes_other_seed_other_choices(build_task: Callable[[str], Overlay], projection: Path) -> None:
    model = build_task("test_sound_table")
    first, again = generate(model, projection, seed=3), generate(model, projection, seed=3)
    assert _bytes(first) == _bytes(again)
    other = generate(model, projection, seed=4)
    assert _bytes(other) != _bytes(first)
    assert {v.family for v in other} == {v.family for v in first}


def test_every_family_is_produced(build_task: Callable[[str], Overlay], projection: Path) -> None:
    variants = generate(build_task("test_sound_table"), projection, seed=0)
    families = {kind: {v.family for v in variants if v.kind == kind} for kind in ("right", "wrong", "nothing")}
    assert RIGHT <= families["right"], RIGHT - families["right"]
    assert WRONG <= families["wrong"], WRONG - families["wrong"]
    assert NOTHING <= families["nothing"], NOTHING - families["nothing"]
    assert all(v.touches == ("T1",) for v in variants if v.kind == "wrong" and v.target == "status.csv")


def test_a_sound_check_passes_the_gate(build_task: Callable[[str], Overlay], projection: Path, tmp_path: Path) -> None:
    report = run_campaign(build_task("test_sound_table"), projection, tmp_path / "states", seed=0)
    [tally] = report.tallies
    assert tally.right_passed == tally.right_graded >= 15, tally.misfailed
    assert tally.caught == tally.touching >= 8, tally.escaped
    assert report.nothing_passes == [] and report.ok and problems(report) == []
    assert report.as_json()["schema_version"] == 1


def test_a_weak_check_is_caught(build_task: Callable[[str], Overlay], projection: Path, tmp_path: Path) -> None:
    report = run_campaign(build_task("test_weak_table"), projection, tmp_path / "states", seed=0)
    [tally] = report.tallies
    assert tally.right_passed == tally.right_graded  # it reads every right form; it just never compares values
    assert tally.caught < 0.95 * tally.touching
    assert any("status-flipped" in e for e in tally.escaped) and any("date-shifted" in e for e in tally.escaped)
    assert not report.ok
    assert [p.code for p in problems(report)] == ["mutation-undercaught"]


def test_freeze_refuses_a_weak_rubric(build_task: Callable[[str], Overlay], tmp_path: Path) -> None:
    with pytest.raises(OverlayProblems, match="mutation campaign fails") as raised:
        freeze_overlay_gated(build_task("test_weak_table"), tmp_path / "manifests")
    assert "rubric[T1]: catches" in raised.value.message
    assert not (tmp_path / "manifests").exists()


def test_other_file_formats_only_where_the_request_allows_them(
    build_task: Callable[[str], Overlay], projection: Path
) -> None:
    model = build_task("test_sound_table")
    pinned = model.model_copy(update={"request": "Write `status.csv` (record, status, decided) and `report.md`.\n"})
    families = {v.family for v in generate(pinned, projection, seed=0) if v.kind == "right"}
    assert {"xlsx", "docx", "txt"}.isdisjoint(families) and {"csv-tab", "encoding-utf-16"} <= families
    assert {"xlsx", "docx", "txt"} <= {v.family for v in generate(model, projection, seed=0)}


def test_a_wrong_table_touches_only_the_criteria_declaring_what_changed() -> None:
    from worldkit.mutate.declared import DeclaredRow
    from worldkit.mutate.tables import Table, table_touches

    rows = [DeclaredRow("A", "t.csv", ("id",), {"id": "X-1", "n": 1}, False),
            DeclaredRow("B", "t.csv", ("id",), {"id": "X-2"}, False),
            DeclaredRow("C", "t.csv", ("id",), {"id": "X-9"}, True)]  # fmt: skip
    reference = Table(header=["id", "n", "note"], rows=[["X-1", "1", "a"], ["X-2", "2", "b"]])
    assert table_touches(rows, reference, reference.with_rows([["X-1", "2", "a"], ["X-2", "1", "b"]])) == ("A",)
    assert table_touches(rows, reference, reference.with_rows([["X-1", "1", "z"], ["X-2", "2", "b"]])) == ()
    assert table_touches(rows, reference, reference.with_rows([["X-1", "1", "a"]])) == ("B",)
    assert table_touches(rows, reference, reference.with_rows([*reference.rows, ["x 9", "1", "c"]])) == ()
    assert table_touches(rows, reference, reference.with_rows([*reference.rows, ["X-9", "1", "c"]])) == ("C",)


def test_mail_bodies_a_mail_check_declares_claims_about_are_varied(
    build_task: Callable[[str], Overlay], projection: Path
) -> None:
    from worldkit.overlay.load import parse_overlay
    from tests.fixtures.overlays.paths import GOOD

    raw = build_task("test_sound_table").model_dump(mode="json", exclude_none=True)
    raw["rubric"].append({"id": "T2", "text": "Lee is told CC-1 is approved.", "route": "deterministic",
                          "check": {"type": "mail_sent", "to": "P3", "claims": [{"all": ["CC-1", "approved"]}]}})
    raw["evidence"]["T2"] = raw["evidence"]["T1"]
    raw["reference"]["actions"].append({"tool": "send_message", "args": {
        "to": ["P3"], "subject": "CC-1", "body": "Lee, CC-1 is approved since 1 Apr 2025.\n"}})  # fmt: skip
    variants = generate(parse_overlay(raw, GOOD.parent / "mail.yaml"), projection, seed=0)
    mails = [v for v in variants if v.mails]
    assert {v.target for v in mails} == {"mail 3"} and all(v.files == () for v in mails)
    wrong = {v.family: v.touches for v in mails if v.kind == "wrong"}
    assert wrong["claim-negated"] == wrong["wrong-identifier"] == ("T2",)
    assert wrong["date-shifted-day"] == ()  # no criterion declares the date: a mistake no criterion watches
    assert {"hedged", "dates-iso"} <= {v.family for v in mails if v.kind == "right"}
    negated = next(v for v in mails if v.family == "claim-negated").mails[0][1]
    assert "not" in negated and "CC-1" in negated
