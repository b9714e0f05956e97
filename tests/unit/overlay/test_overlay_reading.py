"""Checks read like a careful grader: tables in any dialect, numbers as numbers, enumerations with
declared synonyms, dates in written forms, claims instead of bare mentions, and nothing done
passes nothing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from worldkit.overlay.checks import CHECKS
from worldkit.overlay.claims import Claim, windows
from worldkit.overlay.context import GradingContext
from worldkit.overlay.grading import evaluate_check
from worldkit.overlay.models import Criterion, Overlay
from worldkit.overlay.tables import TableError, read_table
from worldkit.overlay.values import (
    dates_in,
    fold_enum,
    numbers_in,
    parse_date,
    parse_number,
)

SWEEP = {
    "type": "csv_rows", "path": "sweep.csv", "key": ["equipment_id"],
    "rows": [{"equipment_id": "SC-03", "status": "overdue"}, {"equipment_id": "SC-05", "status": "ok"},
             {"equipment_id": "HPLC-07", "status": "overdue"}],
    "columns": {"status": {"synonyms": {"overdue": ["past due"], "open-deviation": ["open deviation"]}}},
}  # fmt: skip


def _ctx(tmp_path: Path, files: dict[str, str | bytes], sent: list | None = None, events: list | None = None):
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (workspace / name).write_bytes(data)
    (tmp_path / "projection").mkdir(exist_ok=True)
    return GradingContext(workspace=workspace, records={}, sent=sent or [], events=events, projection=tmp_path / "projection")


def _check(spec: dict):
    return CHECKS[spec["type"]].model_validate(spec)


@pytest.mark.parametrize(
    ("text", "number"),
    [("2.49", 2.49), (" 2.49 % ", 2.49), ("2,49", 2.49), ("1,140", 1140), ("1 140", 1140), ("+0.010", 0.01),
     ("\u22120.02", -0.02), ("36 M", 36), ("~48 months", 48), ("< 0.05", None), ("n/a", None), ("", None)],
)  # fmt: skip
def test_numbers_are_read_as_a_person_means_them(text: str, number: float | None) -> None:
    assert parse_number(text) == number


def test_numbers_in_running_text_skip_identifier_digits() -> None:
    assert numbers_in("ZV-23005 at 36 months: 2.49 %, CAPA-2025-0005, 1,140 units, Cpk 1.62–1.81") == [
        36, 2.49, 1140, 1.62, 1.81,
    ]


@pytest.mark.parametrize("written", ["2026-03-20", "20 Mar 2026", "20 March 2026", "March 20, 2026",
                                     "20/03/2026", "20.03.2026", "20-Mar-2026"])  # fmt: skip
def test_dates_in_their_common_written_forms(written: str) -> None:
    assert parse_date(written) == dt.date(2026, 3, 20)
    assert dates_in(f"due on {written}.") == [dt.date(2026, 3, 20)]


def test_enumerations_fold_case_and_separators() -> None:
    assert fold_enum("Open deviation") == fold_enum("OPEN_DEVIATION") == fold_enum("open-deviation")


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbfequipment_id,status\r\nSC-03,overdue\r\nSC-05,ok\r\nHPLC-07,overdue\r\n",
        b"equipment_id, status\nSC-03, overdue\nSC-05, ok\nHPLC-07, overdue\n",
        b'"Status";"Equipment ID"\n"Overdue";"SC-03"\n"OK";"SC-05"\n"past due";"hplc 07"\n',
        b"Equipment_ID\tStatus\nSC-03\tOVERDUE\n\nSC-05\tok\nHPLC-07\tOverdue\n",
        b"| equipment_id | status |\n|---|---|\n| SC-03 | overdue |\n| SC-05 | ok |\n| HPLC-07 | overdue |\n",
    ],
    ids=["bom-crlf", "space-after-comma", "semicolon-quoted-reordered", "tab-blank-line", "markdown"],
)
def test_a_table_passes_in_any_dialect(tmp_path: Path, data: bytes) -> None:
    result = _check(SWEEP).evaluate(_ctx(tmp_path, {"sweep.csv": data}))
    assert result.passed, result.detail


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("equipment_id,status\nSC-03,overdue\nHPLC-07,overdue\n", "no row for equipment_id 'SC-05'"),
        ("equipment_id,status\nSC-03,overdue\nSC-05,overdue\nHPLC-07,overdue\n", "status 'overdue', expected 'ok'"),
        ("equipment_id,status\nSC-03,overdue\nSC-03,ok\nSC-05,ok\nHPLC-07,overdue\n", "2 rows for equipment_id"),
        ("equipment_id,state\nSC-03,overdue\n", "no column status"),
        ("just a sentence\n", "not a header row"),
    ],
    ids=["missing-row", "wrong-status", "duplicate-row", "renamed-column", "not-a-table"],
)
def test_a_table_fails_on_any_wrong_or_missing_row(tmp_path: Path, data: str, why: str) -> None:
    result = _check(SWEEP).evaluate(_ctx(tmp_path, {"sweep.csv": data}))
    assert not result.passed and why in result.detail


def test_table_numbers_dates_absent_rows_and_row_claims(tmp_path: Path) -> None:
    numbers = _check({"type": "csv_rows", "path": "t.csv", "key": ["lot", "months"],
                      "rows": [{"lot": "ZV-23005", "months": 36, "total_imp_pct": 2.49, "date": dt.date(2026, 2, 12)}],
                      "absent": [{"lot": "ZV-23007", "months": 36}],
                      "columns": {"total_imp_pct": {"tolerance": 0.005}}})  # fmt: skip
    good = "Lot;Months;Total_Imp_Pct;Date\nzv-23005;36 M;2,490;12 Feb 2026\nZV-23007;24;1.90;2025-03-01\n"
    assert numbers.evaluate(_ctx(tmp_path, {"t.csv": good})).passed
    wrong = "lot,months,total_imp_pct,date\nZV-23005,36,2.94,2026-02-12\nZV-23007,36,2.3,2026-02-12\n"
    detail = numbers.evaluate(_ctx(tmp_path, {"t.csv": wrong})).detail
    assert "expected 2.49" in detail and "ZV-23007" in detail and "must not be listed" in detail
    by_content = _check({"type": "csv_rows", "path": "f.csv", "key": ["*"],
                         "rows": [{"*": {"claim": ["SCN-WB-2025-12"]}, "classification": "major"}]})  # fmt: skip
    found = "finding_id,evidence,classification\nF4,SCN WB-2025-12 not assessed,Major\n"
    assert by_content.evaluate(_ctx(tmp_path, {"f.csv": found})).passed
    assert not by_content.evaluate(_ctx(tmp_path, {"f.csv": found.replace("Major", "minor")})).passed


def test_read_table_refuses_text_without_a_header() -> None:
    with pytest.raises(TableError):
        read_table("\n\n")


CPK = {"type": "claims", "path": "r.md",
       "claims": [{"says": "batch Cpk 1.50", "all": [{"regex": "cpk"}, {"number": 1.5, "tolerance": 0.005}]},
                  {"says": "the CAPA and its effectiveness", "all": ["CAPA-2025-0005", {"regex": "effective"}]}],
       "forbid": [{"all": ["pump 3", {"number": 1.41}]}]}  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["Batch Cpk 1.50 on all data. CAPA-2025-0005 was effective.",
     "**Cpk 1.5** (all data)\n\nThe effectiveness check of CAPA 2025-0005 closed.",
     "| Data | Cpk |\n|---|---|\n| all data | 1,50 |\n\ncapa2025\u20110005: effective."],
)
def test_claims_match_flexibly(tmp_path: Path, text: str) -> None:
    result = _check(CPK).evaluate(_ctx(tmp_path, {"r.md": text}))
    assert result.passed, result.detail


@pytest.mark.parametrize(
    ("text", "why"),
    [("See CAPA-2025-0005. Cpk 1.50.", "does not state: the CAPA and its effectiveness"),
     ("Cpk 1.50. CAPA-2025-0005 effective. Pump 3: 1.41.", "states what it must not"),
     ("Cpk 1.05. CAPA-2025-0005 effective.", "does not state: batch Cpk 1.50"),
     ("Cpk: see the report. 1.50 is the batch value. CAPA-2025-00051 effective.", "does not state")],
    ids=["bare-mention", "forbidden-value", "other-number", "terms-in-different-sentences"],
)
def test_claims_never_pass_on_a_mention(tmp_path: Path, text: str, why: str) -> None:
    result = _check(CPK).evaluate(_ctx(tmp_path, {"r.md": text}))
    assert not result.passed and why in result.detail


def test_sentence_windows_keep_abbreviations_and_initials() -> None:
    assert windows("Rev. C applies. Tell M. Oyelaran. Done.", "sentence") == ["Rev. C applies.", "Tell M. Oyelaran.", "Done."]
    assert Claim.model_validate({"all": [{"regex": "rev\\.? ?C"}, "applies"]}).match("Rev. C applies.") is not None


def test_mail_sent_requires_its_claims(tmp_path: Path) -> None:
    check = _check({"type": "mail_sent", "to": "isorensen",
                    "claims": [{"all": [{"regex": "P8-update"}], "within": "document"},
                               {"all": ["ZV-23007", {"regex": "open|outstanding"}]}]})  # fmt: skip
    empty = {"to": ["isorensen"], "subject": "Shelf life", "body": "FYI"}
    full = {"to": ["Ingrid <isorensen>"], "subject": "Draft", "body": "P8-update.md is ready. Open: ZV-23007 36M."}
    assert not check.evaluate(_ctx(tmp_path, {}, sent=[empty])).passed
    assert check.evaluate(_ctx(tmp_path, {}, sent=[empty, full])).passed


def _overlay_with(check: dict) -> tuple[Overlay, Criterion]:
    from tests.fixtures.overlays.paths import good_raw
    from worldkit.overlay.load import parse_overlay

    raw = good_raw()
    raw["rubric"] = [{"id": "N1", "text": "Nothing prohibited.", "route": "deterministic", "check": check}]
    raw["evidence"] = {"N1": raw["evidence"][next(iter(raw["evidence"]))]}
    overlay = parse_overlay(raw)
    return overlay, overlay.rubric[0]


@pytest.mark.parametrize("check", [{"type": "no_prohibited_change"}, {"type": "mail_not_sent", "to": "list-all"},
                                   {"type": "not_contains", "path": "report.md", "text": "x", "case": "insensitive",
                                    "missing_ok": True}])  # fmt: skip
def test_an_absence_is_credited_only_when_the_deliverable_exists(tmp_path: Path, check: dict) -> None:
    overlay, criterion = _overlay_with(check)
    assert overlay.deliverable.path
    nothing = evaluate_check(overlay, criterion, _ctx(tmp_path / "a", {}, events=[]))
    assert nothing is not None and not nothing.passed and "nothing done passes nothing" in nothing.detail
    done = evaluate_check(overlay, criterion, _ctx(tmp_path / "b", {overlay.deliverable.path: "The report."}, events=[]))
    assert done is not None and done.passed, done.detail


def test_passes_when_nothing_done_is_gone() -> None:
    assert "passes_when_nothing_done" not in Criterion.model_fields
    with pytest.raises(ValueError, match="passes_when_nothing_done"):
        Criterion.model_validate({"id": "C1", "text": "t", "route": "deterministic", "passes_when_nothing_done": True,
                                  "check": {"type": "no_prohibited_change"}})  # fmt: skip


SITES = {
    "type": "csv_rows", "path": "sites.csv", "key": ["site"],
    "rows": [{"site": "02", "tp": 46}, {"site": "pooled", "tp": 143}],
    "columns": {"site": {"synonyms": {"02": ["Site 2", "Eastmoor"], "pooled": ["all sites"]}}},
}  # fmt: skip


@pytest.mark.parametrize(
    ("data", "passes"),
    [
        ("site,tp\n02,46\npooled,143\n", True),
        ("site,tp\nSite 2,46\nAll sites,143\n", True),  # a key column's declared synonyms name its rows
        ("site,tp\nEastmoor,46\npooled,143\n", True),
        ("site,tp\nSite 3,46\npooled,143\n", False),  # not a declared spelling
        ("site,tp\n02,46\nSite 2,46\npooled,143\n", False),  # the same row twice, under two spellings
    ],
)
def test_key_column_synonyms_select_rows(tmp_path: Path, data: str, passes: bool) -> None:
    assert _check(SITES).evaluate(_ctx(tmp_path, {"sites.csv": data})).passed is passes


def test_key_column_without_synonyms_matches_identifiers_only(tmp_path: Path) -> None:
    spec = {**SITES, "columns": {}}
    assert _check(spec).evaluate(_ctx(tmp_path, {"sites.csv": "site,tp\n02,46\npooled,143\n"})).passed
    assert not _check(spec).evaluate(_ctx(tmp_path, {"sites.csv": "site,tp\nSite 2,46\npooled,143\n"})).passed
