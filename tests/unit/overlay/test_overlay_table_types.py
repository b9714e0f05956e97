"""Tables compared field by field: identifiers, dates, numbers with units, enumerations, free text;
excluded rows, header-only tables; and checks on mail or records graded without a log."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from worldkit.overlay.check_base import CheckField
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.values import fold_id, parse_date

CHECK = TypeAdapter(CheckField)


def grade(tmp_path: Path, spec: dict, text: str, *, state_known: bool = True) -> CheckResult:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "t.csv").write_text(text, encoding="utf-8")
    context = GradingContext(workspace=workspace, records={}, sent=[], events=None, projection=tmp_path,
                             state_known=state_known)  # fmt: skip
    return CHECK.validate_python(spec).evaluate(context)


STABILITY = {
    "type": "csv_rows", "path": "t.csv", "key": ["lot", "months"],
    "rows": [{"lot": "ZV-23005", "months": 36, "total_imp_pct": 2.49},
             {"lot": "ZV-23005", "months": 24, "total_imp_pct": 2.05}],
    "columns": {"months": {"unit": "month"}, "total_imp_pct": {"unit": "%", "tolerance": 0.005}},
}  # fmt: skip


@pytest.mark.parametrize("table", [
    "lot,months,total_imp_pct\nZV-23005,36,2.49\nZV-23005,24,2.05\n",
    "Lot;Months;Total_Imp_Pct\nzv 23005;36 M;2,49 %\nZV23005;24 months;2,05\n",
    "months,lot,total_imp_pct\n24,ZV-23005,2.05 %\n36-month,ZV-23005,2.490\n",
])  # fmt: skip
def test_right_tables_in_any_spelling_pass(tmp_path: Path, table: str) -> None:
    result = grade(tmp_path, STABILITY, table)
    assert result.passed is True, result.detail


@pytest.mark.parametrize(("table", "why"), [
    ("lot,months,total_imp_pct\nZV-23005,36,2.49 mg/mL\nZV-23005,24,2.05 mg/mL\n", "total_imp_pct '2.49 mg/mL'"),
    ("lot,months,total_imp_pct\nZV-23005,36,2.05\nZV-23005,24,2.49\n", "total_imp_pct '2.05'"),
    ("lot,months,total_imp_pct\n", "header and no data rows"),
    ("lot,months,total_imp_pct\nZV-23005,36,2.49\n", "no row for lot 'ZV-23005', months 24"),
])  # fmt: skip
def test_wrong_tables_fail_naming_the_wrong_cell(tmp_path: Path, table: str, why: str) -> None:
    result = grade(tmp_path, STABILITY, table)
    assert result.passed is False and why in result.detail, result.detail


SEPARATORS = st.sampled_from(["", " ", "-", "\u2011", "_", "/", "."])


@settings(max_examples=60)
@given(prefix=st.sampled_from(["ZV", "zv", "Zv"]), sep=SEPARATORS, number=st.integers(10000, 99999))
def test_any_spelling_of_an_identifier_is_the_identifier(prefix: str, sep: str, number: int) -> None:
    assert fold_id(f"{prefix}{sep}{number}") == fold_id(f"ZV-{number}")
    assert fold_id(f"{prefix}{sep}{number}") != fold_id(f"ZV-{number + 1}")


@settings(max_examples=80)
@given(day=st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2040, 12, 31)),
       form=st.sampled_from(["%Y-%m-%d", "%d %b %Y", "%d %B %Y", "%B %d, %Y", "%d/%m/%Y", "%d.%m.%Y", "%d-%b-%Y"]))  # fmt: skip
def test_any_written_form_of_a_day_is_that_day(day: dt.date, form: str) -> None:
    assert parse_date(day.strftime(form)) == day
    assert parse_date((day + dt.timedelta(days=1)).strftime(form)) != day


AUDIT = {
    "type": "csv_rows", "path": "t.csv", "key": ["*"],
    "rows": [{"*": {"claim": [{"any": ["QAG-WB-2026-01", "quality agreement"]}],
                    "forbid": [[{"any": ["ZV-25031", "first GMP use", "first used"]},
                                {"date_other_than": ["2025-11-04", "2026-01-15"]}]]},
              "first_use": dt.date(2025, 11, 4), "classification": "major"}],
    "columns": {"first_use": {"type": "date"}, "classification": {"synonyms": {"major": ["maj"]}}},
}  # fmt: skip


@pytest.mark.parametrize(("table", "passed"), [
    ("finding,first_use,classification\nQuality agreement QAG-WB-2026-01 signed 15 Jan 2026 after first use in ZV-25031 (4 Nov 2025),04/11/2025,Major\n", True),
    ("finding,first_use,classification\nQuality agreement signed after the first GMP use,\"November 4, 2025\",maj\n", True),
    ("finding,first_use,classification\nQuality agreement signed after the first GMP use,2025-12-04,major\n", False),
    ("finding,first_use,classification\nQAG-WB-2026-01 signed 15 Jan 2026 after first use in ZV-25031 on 4 Dec 2025,2025-11-04,major\n", False),
    ("finding,first_use,classification\nQAG-WB-2026-01 signed late,2025-11-04,minor\n", False),
])  # fmt: skip
def test_dates_and_free_text_facts(tmp_path: Path, table: str, passed: bool) -> None:
    result = grade(tmp_path, AUDIT, table)
    assert result.passed is passed, result.detail


FINDINGS = {
    "type": "csv_rows", "path": "t.csv", "key": ["record_id"],
    "rows": [{"record_id": "STB-12M", "finding": {"claim": [{"regex": "same (analyst|person)|self[- ]approv"}]}},
             {"record_id": "STB-18M", "finding": {"claim": [{"regex": "chang|modif|alter"}]}}],
    "absent": [{"record_id": "STB-36M"}],
}  # fmt: skip


def test_a_finding_attached_to_the_wrong_row_fails(tmp_path: Path) -> None:
    right = "record_id,finding\nSTB-12M,Reported and approved by the same analyst\nSTB-18M,Value changed after approval\n"
    swapped = "record_id,finding\nSTB-12M,Value changed after approval\nSTB-18M,Reported and approved by the same analyst\n"
    assert grade(tmp_path, FINDINGS, right).passed is True
    result = grade(tmp_path, FINDINGS, swapped)
    assert result.passed is False and "STB-12M" in result.detail and "STB-18M" in result.detail


@pytest.mark.parametrize("extra", [
    "STB-36M,Correction verified and approved; not a finding\n",
    "STB-36M,Excluded - compliant correction\n",
    "STB-36M*,Correction of a transcription error\n* reviewed and compliant: not a finding\n",
    "Note: STB-36M was reviewed; the correction is compliant and is not counted as a finding.\n",
])  # fmt: skip
def test_rows_a_note_names_as_excluded_are_not_rows(tmp_path: Path, extra: str) -> None:
    table = "record_id,finding\nSTB-12M,Same analyst approved\nSTB-18M,Value changed\n" + extra
    result = grade(tmp_path, FINDINGS, table)
    assert result.passed is True, result.detail


def test_a_listed_row_without_an_exclusion_fails(tmp_path: Path) -> None:
    table = "record_id,finding\nSTB-12M,Same analyst approved\nSTB-18M,Value changed\nSTB-36M,Correction\n"
    assert grade(tmp_path, FINDINGS, table).passed is False


def test_declared_columns_must_exist_even_for_absent_only_checks(tmp_path: Path) -> None:
    spec = {"type": "csv_rows", "path": "t.csv", "key": ["*"], "absent": [{"*": {"claim": ["ZV-25031"]}}],
            "columns": {"lot": {"type": "identifier"}}}  # fmt: skip
    assert grade(tmp_path, spec, "lot,months\nZV-23004,0\n").passed is True
    assert grade(tmp_path, spec, "Ingrid asked you, see her mail, to prepare\nthe sections\n").passed is False
    assert grade(tmp_path, spec, "lot,months\n").passed is False


@pytest.mark.parametrize("spec", [
    {"type": "mail_sent", "to": "isorensen"},
    {"type": "mail_not_sent", "to": "x-authority"},
    {"type": "record_state_equals", "record": "CC-1", "status": "Closed"},
])  # fmt: skip
def test_checks_on_mail_and_records_are_unknown_without_a_log(tmp_path: Path, spec: dict) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    context = GradingContext(workspace=workspace, records={}, sent=[], events=None, projection=tmp_path, state_known=False)
    result = CHECK.validate_python(spec).evaluate(context)
    assert result.passed is None and result.detail.startswith("unknown:")


AGREEMENT = {
    "type": "csv_rows", "path": "t.csv", "key": ["*"],
    "rows": [{"*": {"claim": [{"any": ["QAG-WB-2026-01", "quality agreement"]}]}, "classification": "major"}],
}  # fmt: skip


@pytest.mark.parametrize(("table", "passed"), [
    ("id,finding,classification\nF1,QAG-WB-2026-01 signed after first use,major\n", True),
    ("id,finding,classification\nF1,qag wb 2026 01 signed after first use,major\n", True),
    ("id,finding,classification\nF1,Quality agreement signed after first use,major\n", True),
    ("id,finding,classification\nF1,Quality agreement QAG-WB-2026-02 signed after first use,major\n", False),
    ("id,finding,classification\nF1,Quality agreement QAG WB 2025 01 signed late,major\n", False),
])  # fmt: skip
def test_a_declared_identifier_written_wrong_fails_its_row(tmp_path: Path, table: str, passed: bool) -> None:
    result = grade(tmp_path, AGREEMENT, table)
    assert result.passed is passed, result.detail
