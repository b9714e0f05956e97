"""Report definitions, execution records as input, and the text/JSON/HTML renderings."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from worldkit.analysis.ledgers import read_ledgers, read_task_labels
from worldkit.canon import pretty_json
from worldkit.errors import UsageError
from worldkit.record.execution import (
    RECORD_FILENAME,
    CriterionOutcome,
    ExecutionRecord,
    RunStats,
    load_rows,
    write_record,
)
from worldkit.record.results import InvalidResults, ResultRow
from worldkit.report.build import (
    build_report,
    load_report,
    render_text,
    report_json,
    summarize,
)
from worldkit.report.html import render_html


def record(run_id: str, condition: str = "full", *, task: str = "T01", agent: str = "oracle",
           criteria: list[tuple[str, str, str]] = (), stats=(10, 12, 4)) -> ExecutionRecord:
    """criteria = [(id, result, access)]; every criterion is deterministic."""
    return ExecutionRecord(
        schema_version=1, run_id=run_id, task=task, agent=agent, condition=condition,
        criteria=[CriterionOutcome(id=cid, route="deterministic", result=result, access=access)
                  for cid, result, access in criteria],
        stats=RunStats(**dict(zip(("inspections", "tool_calls",
                                   "tool_calls_before_first_access"), stats, strict=True))),
    )


def write_runs(root: Path, records: list[ExecutionRecord]) -> Path:
    for item in records:
        folder = root / item.run_id
        folder.mkdir(parents=True)
        write_record(item, folder / RECORD_FILENAME)
    return root


RECORDS = [
    record("r1", criteria=[("C1", "pass", "accessed"), ("C2", "fail", "not_accessed"),
                           ("C3", "ungraded", "accessed"), ("C4", "pass", "unknown")],
           stats=(10, 12, 4)),
    record("r2", criteria=[("C1", "pass", "not_accessed"), ("C2", "fail", "accessed")],
           stats=(20, 30, None)),
    record("r3", "curated:alice", criteria=[("C1", "pass", "accessed"),
                                            ("C2", "pass", "accessed")], stats=(5, 6, 1)),
]


def test_records_become_rows(tmp_path: Path) -> None:
    rows = load_rows([write_runs(tmp_path / "runs", RECORDS)])
    assert len(rows) == 8
    c3 = next(r for r in rows if r.run_id == "r1" and r.criterion_id == "C3")
    assert (c3.source, c3.condition, c3.packet, c3.passed, c3.accessed) == (
        "runs", "full", None, None, True)
    r3 = next(r for r in rows if r.run_id == "r3")
    assert (r3.condition, r3.packet, r3.tool_calls_before_first_access) == ("curated", "alice", 1)


def test_summary_definitions() -> None:
    rows = [row for item in RECORDS[:2] for row in item.rows()]
    s = summarize(rows)
    assert (s.runs, s.executions, s.passed, s.failed, s.ungraded) == (2, 6, 3, 2, 1)
    assert (s.accessed, s.not_accessed, s.unknown) == (3, 2, 1)
    # Joint counts need a verdict and a known label: C3 (ungraded) and C4 (unknown) drop out.
    assert (s.accessed_pass, s.accessed_fail, s.not_accessed_pass, s.not_accessed_fail) == (
        1, 1, 1, 1)
    assert s.pass_rate == 3 / 5
    assert s.access_rate == 3 / 5
    assert s.access_bounds == (3 / 6, 4 / 6)
    assert s.pass_given_access == 1 / 2
    # Means are per run: r1 has 4 rows and r2 has 2, yet each run counts once.
    assert (s.inspections.total, s.inspections.runs, s.inspections.mean) == (30, 2, 15.0)
    assert (s.tool_calls_before_first_access.runs,
            s.tool_calls_before_first_access.missing) == (1, 1)


def cells(text: str, label: str, nth: int = 0) -> list[str]:
    """The cells of the nth text-table line whose first cell is `label`."""
    found = [re.split(r"\s{2,}", line.strip()) for line in text.splitlines()
             if re.split(r"\s{2,}", line.strip())[0] == label]
    return found[nth]


def test_text_report_from_records(tmp_path: Path) -> None:
    text = render_text(build_report(load_rows([write_runs(tmp_path / "runs", RECORDS)])))
    assert cells(text, "Outcome") == ["Outcome", "full", "curated"]
    assert cells(text, "Passed / graded") == ["Passed / graded", "3/5 (60.0%)", "2/2 (100.0%)"]
    assert cells(text, "Ungraded") == ["Ungraded", "1", "0"]
    assert cells(text, "Unknown access labels")[1] == "1 (16.7%)"
    assert cells(text, "Access bounds (unknown as not / as accessed)")[1] == "50.0% – 66.7%"
    assert cells(text, "Mean tool calls before first access") == [
        "Mean tool calls before first access", "4.0 (n=1)", "1.0"]
    assert cells(text, "Outcome", 1) == ["Outcome", "full", "curated (alice)"]
    assert cells(text, "T01") == ["T01", "full", "2", "3/5 (60.0%)", "3/5 (60.0%)", "50.0%",
                                  "15.0", "21.0", "4.0 (n=1)"]
    assert cells(text, "Δ curated - full") == ["Δ curated - full", "+40.0 pp", "+40.0 pp",
                                               "+50.0 pp", "-10.0", "-15.0", "-3.0"]


@pytest.mark.parametrize(("counts", "shown"), [((15, 16, 15, 15), "15.2"),
                                               ((15, 16, 16, 16), "15.8")])
def test_rounding_is_half_to_even_from_exact_values(counts, shown) -> None:
    # Table E1 prints the curated mean of exactly 15.25 inspections as 15.2.
    rows = [row for i, n in enumerate(counts) for row in record(
        f"r{i}", criteria=[("C1", "pass", "accessed")], stats=(n, n, 0)).rows()]
    text = render_text(build_report(rows))
    assert cells(text, "Mean file/record inspections per run")[1] == shown


def test_output_does_not_depend_on_row_order(tmp_path: Path, shared_data: Path) -> None:
    rows = read_ledgers(shared_data / "workworld") + load_rows(
        [write_runs(tmp_path / "runs", RECORDS)])
    shuffled = list(rows)
    random.Random(3).shuffle(shuffled)
    a, b = build_report(rows), build_report(shuffled)
    assert pretty_json(report_json(a)) == pretty_json(report_json(b))
    assert render_html(a) == render_html(b)
    assert render_text(a) == render_text(b)


def test_sources_stay_in_separate_columns(tmp_path: Path, shared_data: Path) -> None:
    rows = read_ledgers(shared_data / "workworld") + load_rows(
        [write_runs(tmp_path / "runs", RECORDS)])
    report = build_report(rows)
    assert report.columns == ["runs full", "runs curated", "workworld full", "workworld curated"]
    assert report.overall["workworld full"].passed == 589


def test_json_carries_counts_and_rates(tmp_path: Path) -> None:
    data = json.loads(pretty_json(report_json(build_report(
        load_rows([write_runs(tmp_path / "runs", RECORDS)])))))
    assert data["schema_version"] == 2
    assert data["columns"] == ["full", "curated"]
    full = data["overall"]["full"]
    assert (full["passed"], full["graded"], full["pass_rate"]) == (3, 5, 0.6)
    assert full["tool_calls"] == {"total": 42, "runs": 2, "missing": 0, "mean": 21.0}
    assert set(data["by_task"]) == {"T01"} and set(data["by_agent"]) == {"oracle"}


def test_html_has_figures_tables_and_provenance(shared_data: Path) -> None:
    folder = shared_data / "workworld"
    page = render_html(load_report(ledgers=folder, replicates=0))
    assert page.startswith("<!doctype html>")
    assert render_html(load_report(ledgers=folder, replicates=0)) == page  # same bytes
    # Six Figure 3 panels, inline; nothing fetched, nothing run.
    assert page.count("<svg") == 6 and "<script" not in page
    assert "http" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
        'xmlns:xlink="http://www.w3.org/1999/xlink"', "")
    assert "<caption>Raw outcomes by condition</caption>" in page
    assert "<td>Pass given access</td><td>517/614 (84.2%)</td><td>634/767 (82.7%)</td>" in page
    assert "<td>T01 stability update</td>" in page
    # Task names, not codes, label the by-task and sensitivity panels (text stays text).
    figures = page.split("<h2>Tables</h2>")[0]
    assert "supplier-change audit" in figures and "T06" not in figures
    assert "without validation defense" in page
    assert "af6e6648d24cbb0d46d91664dbcbe32fbdb782510db9214a52243693bae4bfcc" in page
    assert "claude-opus-5" in page and "run-192" in page
    assert "mancl" not in page  # the small-sample interval only with --interval mancl


def test_html_shows_the_mancl_interval_when_asked(shared_data: Path) -> None:
    folder = shared_data / "workworld"
    page = render_html(load_report(ledgers=folder, replicates=0, interval="mancl"))
    figures, tables = page.split("<h2>Tables</h2>")
    # named in the page's preamble, drawn in panel a under the bootstrap interval, and tabled
    assert "<code>--interval mancl</code>" in figures and "Bell–McCaffrey df" in figures
    assert figures.count("mancl [") == 2 and "then the small-sample-corrected mancl interval" in figures
    assert "<caption>GEE difference with the small-sample-corrected 95% interval (mancl: " in tables
    assert "<td>access</td><td>+17.6</td>" in tables


def test_html_escapes_names(tmp_path: Path) -> None:
    rows = record("r1", agent="<b>x</b>", criteria=[("C1", "pass", "accessed")]).rows()
    page = render_html(build_report(rows))
    assert "<svg" not in page  # no estimates, no figure panels
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


# Bad execution records -------------------------------------------------------------------------

def _bad(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "runs" / "r1"
    folder.mkdir(parents=True)
    (folder / RECORD_FILENAME).write_text(text, encoding="utf-8")
    return folder / RECORD_FILENAME


GOOD = json.loads(pretty_json(RECORDS[0].model_dump(mode="json")))


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.update(schema_version=2), "field schema_version: schema_version 2 is not"),
        (lambda d: d["criteria"][0].update(result="passed"), "field criteria.0.result: Input"),
        (lambda d: d.update(condition="curated alice"), "field condition: String should match"),
        (lambda d: d["criteria"].append(d["criteria"][0]), "criteria listed more than once: C1"),
        (lambda d: d["stats"].update(tool_calls_before_first_access=99), "cannot exceed"),
        (lambda d: d.update(extra=1), "field extra: Extra inputs are not permitted"),
    ],
)
def test_invalid_record_names_file_and_field(tmp_path: Path, change, says) -> None:
    data = json.loads(json.dumps(GOOD))
    change(data)
    path = _bad(tmp_path, json.dumps(data))
    with pytest.raises(InvalidResults) as caught:
        load_rows([tmp_path / "runs"])
    assert caught.value.message.startswith(f"file {path}")
    assert says in caught.value.message


def test_record_that_is_not_json(tmp_path: Path) -> None:
    path = _bad(tmp_path, '{"run_id": ')
    with pytest.raises(InvalidResults, match=r"not valid UTF-8 JSON at line 1, column 12"):
        load_rows([path])


def test_duplicate_run_ids_name_both_files(tmp_path: Path) -> None:
    write_runs(tmp_path / "a", [RECORDS[0]])
    write_runs(tmp_path / "b", [RECORDS[0]])
    with pytest.raises(InvalidResults, match="run_id r1 is also used by"):
        load_rows([tmp_path / "a", tmp_path / "b"])


def test_directory_without_records(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no execution-record.json under"):
        load_rows([tmp_path])


def test_written_record_is_canonical(tmp_path: Path) -> None:
    path = tmp_path / RECORD_FILENAME
    write_record(RECORDS[2], path)
    text = path.read_text(encoding="utf-8")
    assert text == pretty_json(json.loads(text))
    assert ExecutionRecord.model_validate_json(text) == RECORDS[2]


def test_rows_of_one_run_must_agree() -> None:
    base = RECORDS[2].rows()
    clash = base[1].model_copy(update={"tool_calls": 99})
    from worldkit.record.results import check_rows

    with pytest.raises(InvalidResults, match="run r3 .* has tool_calls=6 on criterion C1 but 99"):
        check_rows([base[0], clash])
    with pytest.raises(InvalidResults, match="criterion C1 appears twice in run r3"):
        check_rows([base[0], base[0]])
    assert isinstance(base[0], ResultRow)
