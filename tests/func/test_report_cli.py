"""`worldkit report` end to end: the public WorkWorlds ledger, execution records, JSON, HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from worldkit._cli.main import run
from worldkit.record.execution import (
    RECORD_FILENAME,
    CriterionOutcome,
    ExecutionRecord,
    RunStats,
    write_record,
)

# The paper's Table E1 figures as the report prints them from the public ledger.
TABLE_E1 = """Raw outcomes by condition

  Outcome                                                   full           curated
 {RULE}
  Runs                                                        96                96
  Criterion executions                                       864               864
  Passed / graded                                589/864 (68.2%)   664/864 (76.9%)
  Ungraded                                                     0                 0
  Accessed / observable                          614/842 (72.9%)   767/848 (90.4%)
  Unknown access labels                                22 (2.5%)         16 (1.9%)
  Access bounds (unknown as not / as accessed)     71.1% – 73.6%     88.8% – 90.6%
  Pass given access                              517/614 (84.2%)   634/767 (82.7%)
  Accessed, pass                                             517               634
  Accessed, fail                                              97               133
  Not accessed, pass                                          53                18
  Not accessed, fail                                         175                63
  Mean file/record inspections per run                      28.6              15.2
  Mean tool calls per run                                   34.1              23.2
  Mean tool calls before first access                       12.1               7.8
""".replace("{RULE}", "─" * 82)


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_ledger_report_prints_table_e1(capsys, shared_data: Path) -> None:
    code, out, err = report(capsys, "--ledgers", str(shared_data / "workworld"),
                            "--no-estimates")
    assert (code, err) == (0, "")
    assert out.startswith(TABLE_E1)
    for title in ("Raw outcomes by curated packet", "By task", "By agent"):
        assert f"\n{title}\n" in out
    # Table E2 (by task) and E3 (by agent) raw figures come out of the same rows.
    lines = [re.split(r"\s{2,}", line.strip()) for line in out.splitlines()]
    assert ["T01 stability update", "full", "12", "85/132 (64.4%)", "96/126 (76.2%)", "78.1%",
            "30.8", "35.8", "12.3"] in lines
    assert ["opus5", "full", "32", "229/288 (79.5%)", "228/281 (81.1%)", "91.2%", "25.0",
            "30.5", "12.7"] in lines


def test_ledger_report_as_json(capsys, shared_data: Path) -> None:
    code, out, _ = report(capsys, "--ledgers", str(shared_data / "workworld"), "--json",
                          "--replicates", "20", "--workers", "1")
    assert code == 0
    data = json.loads(out)
    assert data["schema_version"] == 2
    [analysis] = data["analyses"]
    assert (analysis["source"], analysis["replicates"], analysis["seed"]) == (
        "workworld", 20, 20270908)
    assert round(100 * analysis["passed"]["contrast"]["difference"], 1) == 8.7
    assert analysis["passed"]["contrast"]["interval"]["replicates"] == 20
    assert data["packets"]["workworld"]["pairs_differing"] == 5
    [provenance] = data["provenance"]
    assert provenance["kind"] == "ledgers" and len(provenance["run_ids"]) == 192
    assert provenance["files"]["criterion_results.csv"] == (
        "af6e6648d24cbb0d46d91664dbcbe32fbdb782510db9214a52243693bae4bfcc")
    assert provenance["judges"] == ["claude-opus-5"]
    full, curated = data["overall"]["full"], data["overall"]["curated"]
    assert (full["passed"], full["graded"], full["accessed"], full["observable"]) == (
        589, 864, 614, 842)
    assert (curated["accessed_pass"], curated["accessed_fail"], curated["not_accessed_pass"],
            curated["not_accessed_fail"]) == (634, 133, 18, 63)
    assert curated["inspections"]["mean"] == 15.25
    assert round(full["tool_calls_before_first_access"]["mean"], 3) == 12.052


def test_html_report(capsys, shared_data: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "report.html"
    code, out, err = report(capsys, "--ledgers", str(shared_data / "workworld"),
                            "--html", str(out_file), "--replicates", "0")
    assert code == 0
    assert err == f"wrote {out_file}\n"
    assert out.startswith(TABLE_E1)
    page = out_file.read_text(encoding="utf-8")
    assert "<table>" in page and page.count("<svg") == 6 and "<script" not in page
    assert "<td>Accessed / observable</td><td>614/842 (72.9%)</td><td>767/848 (90.4%)</td>" in page


def _record(run_id: str, condition: str, result: str, access: str) -> ExecutionRecord:
    return ExecutionRecord(
        schema_version=1, run_id=run_id, task="pharma-T1", agent="oracle", condition=condition,
        criteria=[CriterionOutcome(id="R01", route="deterministic", result=result, access=access),
                  CriterionOutcome(id="R02", route="semantic", result="ungraded", access=access)],
        stats=RunStats(inspections=4, tool_calls=6, tool_calls_before_first_access=2),
    )


def test_runs_directories(capsys, tmp_path: Path) -> None:
    for run_id, condition, result, access in (("a", "full", "pass", "accessed"),
                                              ("b", "curated:qa", "fail", "not_accessed")):
        folder = tmp_path / "runs" / run_id
        folder.mkdir(parents=True)
        write_record(_record(run_id, condition, result, access), folder / RECORD_FILENAME)
    code, out, err = report(capsys, str(tmp_path / "runs"), "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["columns"] == ["full", "curated"]
    assert data["overall"]["full"]["passed"] == 1 and data["overall"]["full"]["ungraded"] == 1
    assert data["overall"]["curated"]["not_accessed_fail"] == 1
    assert list(data["by_packet"]) == ["curated (qa)", "full"]
    # One task: the estimates say why they are missing instead of printing a number.
    [analysis] = data["analyses"]
    assert analysis["passed"] is None
    assert analysis["reason"].startswith("too few task clusters: 1 task(s) ran under both")
    code, out, _ = report(capsys, str(tmp_path / "runs"))
    assert "Estimates (runs): not computed — too few task clusters: 1 task(s)" in out
    assert "Note: task pharma-T1: the records do not name the overlay file" in out


def test_bad_record_is_a_one_line_error(capsys, tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "x"
    folder.mkdir(parents=True)
    (folder / RECORD_FILENAME).write_text('{"schema_version": 1, "run_id": "x"}', encoding="utf-8")
    code, out, err = report(capsys, str(tmp_path / "runs"))
    assert (code, out) == (3, "")
    assert err == (f"error: file {folder / RECORD_FILENAME}, field task: Field required; fix the "
                   "record or re-run the task (5 problem(s) in all)\n")


def test_nothing_to_report_is_a_usage_error(capsys) -> None:
    code, out, err = report(capsys)
    assert (code, out) == (2, "")
    assert err == "error: nothing to report: give one or more RUNS (folders or stores) or --ledgers DIR\n"


def test_missing_ledger_directory(capsys, tmp_path: Path) -> None:
    code, _, err = report(capsys, "--ledgers", str(tmp_path))
    assert code == 2
    assert err.startswith(f"error: no criterion_results.csv and run_ledger.csv in {tmp_path}")


def test_help(capsys) -> None:
    code, out, _ = report(capsys, "--help")
    assert code == 0
    assert "Usage: worldkit report [OPTIONS] [RUNS]..." in out
    for option in ("--ledgers", "--json", "--html", "--replicates", "--seed", "--workers",
                   "--no-estimates", "--store", "--run-id"):
        assert option in out


def test_a_store_without_records_is_reported_as_what_it_holds(capsys, store_url: str, tmp_path: Path) -> None:
    """A store holding run logs but no execution records (logs of servers, of an older worldkit):
    the report says so instead of failing on the file or printing empty tables — by --store, by
    a store file, by a URL."""
    from worldkit.store import EventLog, Store

    with Store.open(store_url) as store:
        for run_id in ("run-a", "run-b"):
            with EventLog(store, run_id, "EMP-QC-001") as log:
                log.append("list_files", {"offset": 0}, "ok", "a" * 64)
    given = [("--store", store_url)]
    if store_url.startswith("sqlite:///"):
        given.append((store_url.removeprefix("sqlite:///"),))  # the store file among RUNS_DIR
    else:
        given.append((store_url,))  # a URL among RUNS_DIR
    for args in given:
        code, out, err = report(capsys, *args)
        assert (code, out) == (2, ""), err
        assert "is a worldkit store: it holds the event logs of 2 run(s) (run-a, run-b) but no " \
               "execution records" in err
        assert "report the run folders `worldkit run --out DIR` wrote" in err
        assert err.count("\n") == 1 and "Traceback" not in err
