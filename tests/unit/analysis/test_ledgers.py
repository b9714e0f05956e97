"""Reading the public WorkWorlds ledgers into result rows."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from fractions import Fraction
from pathlib import Path

import pytest

from worldkit.analysis.ledgers import read_ledgers, read_task_labels
from worldkit.errors import UsageError
from worldkit.record.results import InvalidResults
from worldkit.report.build import summarize

CRITERION_HEADER = ["run_id", "task_id", "agent_id", "condition", "environment_instance",
                    "criterion_id", "access_label", "access_unknown_reason", "pass",
                    "grader_error", "grading_route", "criterion_record_sha256"]
RUN_HEADER = ["run_id", "task_id", "agent_id", "condition", "environment_instance", "block",
              "scheduled_order_within_task_agent", "status", "criterion_count", "accessed_count",
              "not_accessed_count", "unknown_count", "pass_count", "model_version_string",
              "files_inspected", "tool_calls", "tool_calls_before_first_access",
              "run_record_sha256"]


def _digest(row: dict[str, str]) -> str:
    body = {k: v for k, v in row.items() if not k.endswith("_sha256")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write(path: Path, header: list[str], rows: list[dict[str, str]], digest: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header, lineterminator="\r\n")
        writer.writeheader()
        for row in rows:
            full = {key: row.get(key, "") for key in header}
            full[digest] = _digest(full)
            writer.writerow(full)


def make_ledgers(folder: Path, runs: list[dict], *, edit=None) -> Path:
    """A small ledger release: runs = [{run_id, condition, env, stats, criteria=[(id, access,
    pass)]}], with per-run counts and row digests computed like the real release."""
    folder.mkdir(parents=True, exist_ok=True)
    run_rows, criterion_rows = [], []
    for run in runs:
        key = {"run_id": run["run_id"], "task_id": run.get("task", "T01"),
               "agent_id": run.get("agent", "opus5"), "condition": run["condition"],
               "environment_instance": run["env"]}
        labels = [access for _, access, _ in run["criteria"]]
        run_rows.append({
            **key, "block": "1", "scheduled_order_within_task_agent": "1",
            "status": "completed", "criterion_count": str(len(run["criteria"])),
            "accessed_count": str(labels.count("accessed")),
            "not_accessed_count": str(labels.count("not_accessed")),
            "unknown_count": str(labels.count("unknown")),
            "pass_count": str(sum(passed == "True" for *_, passed in run["criteria"])),
            "model_version_string": "m",
            **dict(zip(("files_inspected", "tool_calls", "tool_calls_before_first_access"),
                       run["stats"], strict=True)),
        })
        for cid, access, passed in run["criteria"]:
            criterion_rows.append({**key, "criterion_id": cid, "access_label": access,
                                   "pass": passed, "grader_error": "False",
                                   "grading_route": "semantic"})
    if edit:
        edit(run_rows, criterion_rows)
    _write(folder / "run_ledger.csv", RUN_HEADER, run_rows, "run_record_sha256")
    _write(folder / "criterion_results.csv", CRITERION_HEADER, criterion_rows,
           "criterion_record_sha256")
    return folder


SMALL = [
    {"run_id": "run-001", "condition": "world_first", "env": "world-first",
     "stats": ("20", "23", "19"),
     "criteria": [("T01-R01", "not_accessed", "False"), ("T01-R02", "accessed", "True"),
                  ("T01-R03", "unknown", "True")]},
    {"run_id": "run-002", "condition": "task_first", "env": "task-first curator 2",
     "stats": ("9", "12", ""),
     "criteria": [("T01-R01", "accessed", "True"), ("T01-R02", "accessed", "False"),
                  ("T01-R03", "accessed", "True")]},
]


def test_small_ledger_maps_conditions_labels_and_figures(tmp_path: Path) -> None:
    rows = read_ledgers(make_ledgers(tmp_path / "study", SMALL))
    first = rows[0]
    assert (first.source, first.run_id, first.condition, first.packet) == (
        "study", "run-001", "full", None)
    assert [(r.criterion_id, r.accessed, r.passed) for r in rows[:3]] == [
        ("T01-R01", False, False), ("T01-R02", True, True), ("T01-R03", None, True)]
    assert (first.inspections, first.tool_calls, first.tool_calls_before_first_access) == (
        20, 23, 19)
    curated = rows[3]
    assert (curated.condition, curated.packet) == ("curated", "curator 2")
    assert curated.tool_calls_before_first_access is None  # empty cell = not recorded


def test_grader_error_means_ungraded(tmp_path: Path) -> None:
    def fail_grading(_runs, criteria):
        criteria[0]["grader_error"] = "True"

    rows = read_ledgers(make_ledgers(tmp_path / "s", SMALL, edit=fail_grading))
    assert rows[0].passed is None


def test_finds_ledgers_in_data_subfolder(tmp_path: Path) -> None:
    make_ledgers(tmp_path / "release" / "data", SMALL)
    rows = read_ledgers(tmp_path / "release")
    assert rows[0].source == "release"
    assert read_task_labels(tmp_path / "release") == {}


def test_row_order_in_the_files_does_not_matter(tmp_path: Path) -> None:
    def shuffle(runs, criteria):
        random.Random(7).shuffle(runs)
        random.Random(7).shuffle(criteria)

    plain = read_ledgers(make_ledgers(tmp_path / "a" / "s", SMALL))
    shuffled = read_ledgers(make_ledgers(tmp_path / "b" / "s", SMALL, edit=shuffle))
    assert plain == shuffled


def test_missing_directory_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no criterion_results.csv and run_ledger.csv"):
        read_ledgers(tmp_path)


def test_edited_row_is_refused_with_file_and_line(tmp_path: Path) -> None:
    folder = make_ledgers(tmp_path / "s", SMALL)
    path = folder / "criterion_results.csv"
    edited = path.read_bytes().replace(b"R02,accessed,,True", b"R02,accessed,,False", 1)
    path.write_bytes(edited)
    with pytest.raises(InvalidResults) as caught:
        read_ledgers(folder)
    assert caught.value.message.startswith(f"file {path}, line 3, field criterion_record_sha256:")
    assert "restore the file" in caught.value.message


@pytest.mark.parametrize(
    ("edit", "where", "says"),
    [
        (lambda runs, crit: crit[1].update(access_label="seen"),
         "criterion_results.csv, line 3, field access_label", "'seen' is not one of"),
        (lambda runs, crit: crit[0].update(run_id="run-999"),
         "criterion_results.csv, line 2, field run_id", "run run-999 is not in run_ledger.csv"),
        (lambda runs, crit: runs[0].update(pass_count="3"),
         "run_ledger.csv, line 2, field pass_count", "states pass_count=3 but"),
        (lambda runs, crit: runs[1].update(tool_calls="many"),
         "run_ledger.csv, line 3, field tool_calls", "'many' is not a non-negative whole"),
        (lambda runs, crit: crit[0].update(agent_id="grok"),
         "criterion_results.csv, line 2, field agent_id", "'grok' here but 'opus5'"),
        (lambda runs, crit: runs.append(dict(runs[0])),
         "run_ledger.csv, line 4, field run_id", "run run-001 is listed again"),
    ],
)
def test_inconsistent_ledgers_are_refused(tmp_path: Path, edit, where, says) -> None:
    folder = make_ledgers(tmp_path / "s", SMALL, edit=edit)
    with pytest.raises(InvalidResults) as caught:
        read_ledgers(folder)
    assert where in caught.value.message
    assert says in caught.value.message


def test_missing_column_is_refused(tmp_path: Path) -> None:
    folder = make_ledgers(tmp_path / "s", SMALL)
    path = folder / "run_ledger.csv"
    path.write_text(path.read_text(encoding="utf-8").replace("tool_calls,", "calls,", 1),
                    encoding="utf-8")
    with pytest.raises(InvalidResults, match=r"line 1: missing column\(s\) tool_calls;"):
        read_ledgers(folder)


# The real release ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def workworld(shared_data: Path) -> Path:
    return shared_data / "workworld"


def test_real_ledger_reproduces_table_e1_counts(workworld: Path) -> None:
    rows = read_ledgers(workworld)
    assert len(rows) == 1728
    full = summarize(r for r in rows if r.condition == "full")
    curated = summarize(r for r in rows if r.condition == "curated")
    for summary, expected in (
        (full, (96, 864, 589, 864, 614, 842, 22, 517, 97, 53, 175)),
        (curated, (96, 864, 664, 864, 767, 848, 16, 634, 133, 18, 63)),
    ):
        assert (summary.runs, summary.executions, summary.passed, summary.graded,
                summary.accessed, summary.observable, summary.unknown, summary.accessed_pass,
                summary.accessed_fail, summary.not_accessed_pass,
                summary.not_accessed_fail) == expected
    # Search burden is a mean over runs (96 per condition), not over criterion rows.
    assert Fraction(full.inspections.total, full.inspections.runs) == Fraction(2749, 96)
    assert (full.tool_calls.total, full.tool_calls_before_first_access.total) == (3276, 1157)
    assert (curated.inspections.total, curated.tool_calls.total,
            curated.tool_calls_before_first_access.total) == (1464, 2229, 753)
    assert round(100 * full.pass_given_access, 1) == 84.2
    assert round(100 * curated.pass_given_access, 1) == 82.7


def test_real_ledger_packets_and_labels(workworld: Path) -> None:
    rows = read_ledgers(workworld)
    assert {r.packet for r in rows if r.condition == "curated"} == {"curator 1", "curator 2"}
    curator1 = summarize(r for r in rows if r.packet == "curator 1")
    assert (curator1.passed, curator1.graded) == (334, 432)  # paper §E.3
    assert read_task_labels(workworld)["T01"] == "stability update"
