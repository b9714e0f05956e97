"""Reader for the public WorkWorlds ledger format (`criterion_results.csv`, `run_ledger.csv`).

The study's ledgers become the same `ResultRow`s our execution records do, so the paper's
numbers and ours come out of one report. Study names map to ours: `world_first` is the `full`
condition, `task_first` the `curated` one (the packet is the curator, from
`environment_instance`). The reader checks what the release promises — each row's own SHA-256,
and that the run ledger's per-run counts match the criterion rows — and refuses rather than
repairs. It never recomputes a verdict or an access label.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import ValidationError

from worldkit.errors import UsageError
from worldkit.record.results import InvalidResults, ResultRow, check_rows

__all__ = ["CRITERION_FILE", "RUN_FILE", "TASK_FILE", "find_ledgers", "read_ledgers",
           "read_task_labels"]

CRITERION_FILE = "criterion_results.csv"
RUN_FILE = "run_ledger.csv"
TASK_FILE = "task_mapping.csv"

_CONDITIONS = {"world_first": "full", "task_first": "curated"}
_ACCESS = {"accessed": True, "not_accessed": False, "unknown": None}
_BOOL = {"True": True, "False": False}
_ROUTES = ("deterministic", "semantic")
_KEY_COLUMNS = ("run_id", "task_id", "agent_id", "condition", "environment_instance")
_CRITERION_COLUMNS = (*_KEY_COLUMNS, "criterion_id", "access_label", "pass", "grader_error",
                      "grading_route")
_COUNT_COLUMNS = ("criterion_count", "accessed_count", "not_accessed_count", "unknown_count",
                  "pass_count")
_STAT_COLUMNS = ("files_inspected", "tool_calls", "tool_calls_before_first_access")
_RUN_COLUMNS = (*_KEY_COLUMNS, *_COUNT_COLUMNS, *_STAT_COLUMNS)
_FIX = "restore the file from the WorkWorlds release (see SOURCE.md)"


def find_ledgers(path: Path) -> Path:
    """The directory holding the two ledgers: `path` itself or its `data/` folder."""
    for candidate in (path, path / "data"):
        if (candidate / CRITERION_FILE).is_file() and (candidate / RUN_FILE).is_file():
            return candidate
    raise UsageError(
        f"no {CRITERION_FILE} and {RUN_FILE} in {path} or {path / 'data'}; pass the directory "
        "of a WorkWorlds ledger release (e.g. ../shared/data/workworld)"
    )


def _rows(file: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) for each data row, after checking the header and each row's digest."""
    try:
        handle = file.open(encoding="utf-8", newline="")
    except OSError as error:
        raise InvalidResults(f"cannot read: {error.strerror}", file=file) from error
    with handle:
        reader = csv.DictReader(handle)
        try:
            header = reader.fieldnames or []
            missing = [name for name in required if name not in header]
            if missing:
                raise InvalidResults(
                    f"missing column(s) {', '.join(missing)}; this is not a WorkWorlds ledger, "
                    f"or it was edited — {_FIX}",
                    file=file,
                    row=1,
                )
            digest_columns = [name for name in header if name.endswith("_sha256")]
            for row in reader:
                if None in row or None in row.values():
                    raise InvalidResults(
                        f"has {len(header)} columns in the header but not on this row; {_FIX}",
                        file=file,
                        row=reader.line_num,
                    )
                _check_digest(row, digest_columns, file, reader.line_num)
                yield reader.line_num, row
        except (UnicodeDecodeError, csv.Error) as error:
            raise InvalidResults(
                f"not a UTF-8 CSV file ({error}); {_FIX}", file=file, row=reader.line_num
            ) from error


def _check_digest(row: dict[str, str], columns: list[str], file: Path, line: int) -> None:
    """Each ledger row carries the SHA-256 of its own values (sorted-key compact JSON)."""
    body = {key: value for key, value in row.items() if not key.endswith("_sha256")}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    actual = hashlib.sha256(text.encode("utf-8")).hexdigest()
    for column in columns:
        if row[column] and row[column] != actual:
            raise InvalidResults(
                f"the row's values do not match its {column}, so it was changed after release; "
                f"{_FIX}",
                file=file,
                row=line,
                field=column,
            )


def _choice(row: dict[str, str], column: str, allowed: dict | tuple, file: Path, line: int):
    value = row[column]
    if value not in allowed:
        options = ", ".join(sorted(allowed))
        raise InvalidResults(
            f"{value!r} is not one of {options}; correct the value or {_FIX}",
            file=file,
            row=line,
            field=column,
        )
    return allowed[value] if isinstance(allowed, dict) else value


def _count(row: dict[str, str], column: str, file: Path, line: int) -> int | None:
    value = row[column].strip()
    if value == "":
        return None
    if not value.isdigit():
        raise InvalidResults(
            f"{value!r} is not a non-negative whole number; correct the value or {_FIX}",
            file=file,
            row=line,
            field=column,
        )
    return int(value)


def _read_runs(file: Path) -> dict[str, tuple[int, dict[str, str]]]:
    runs: dict[str, tuple[int, dict[str, str]]] = {}
    for line, row in _rows(file, _RUN_COLUMNS):
        _choice(row, "condition", _CONDITIONS, file, line)
        if row["run_id"] in runs:
            raise InvalidResults(
                f"run {row['run_id']} is listed again (first on line {runs[row['run_id']][0]}); "
                f"{_FIX}",
                file=file,
                row=line,
                field="run_id",
            )
        runs[row["run_id"]] = (line, row)
    return runs


def _packet(condition: str, environment: str) -> str | None:
    if condition != "curated":
        return None
    return environment.removeprefix("task-first ").strip() or environment


def read_ledgers(path: Path, *, source: str | None = None) -> list[ResultRow]:
    """Result rows from a ledger release directory (or its `data/` folder), in canonical order.

    `source` names the rows in a report; it defaults to the directory's name.
    """
    folder = find_ledgers(path)
    source = source or path.resolve().name
    run_file, criterion_file = folder / RUN_FILE, folder / CRITERION_FILE
    runs = _read_runs(run_file)
    rows: list[ResultRow] = []
    tallies: dict[str, Counter[str]] = {run_id: Counter() for run_id in runs}
    for line, raw in _rows(criterion_file, _CRITERION_COLUMNS):
        run_id = raw["run_id"]
        if run_id not in runs:
            raise InvalidResults(
                f"run {run_id} is not in {RUN_FILE}; the two ledgers must come from the same "
                f"release — {_FIX}",
                file=criterion_file,
                row=line,
                field="run_id",
            )
        run_line, run = runs[run_id]
        for column in _KEY_COLUMNS:
            if raw[column] != run[column]:
                raise InvalidResults(
                    f"{column} is {raw[column]!r} here but {run[column]!r} for run {run_id} on "
                    f"line {run_line} of {RUN_FILE}; {_FIX}",
                    file=criterion_file,
                    row=line,
                    field=column,
                )
        condition = _CONDITIONS[run["condition"]]
        accessed = _choice(raw, "access_label", _ACCESS, criterion_file, line)
        verdict = _choice(raw, "pass", _BOOL, criterion_file, line)
        grader_error = _choice(raw, "grader_error", _BOOL, criterion_file, line)
        route = _choice(raw, "grading_route", _ROUTES, criterion_file, line)
        tally = tallies[run_id]
        tally["criterion_count"] += 1
        tally[f"{raw['access_label']}_count"] += 1
        tally["pass_count"] += verdict
        try:
            rows.append(
                ResultRow(
                    source=source,
                    run_id=run_id,
                    task=raw["task_id"],
                    agent=raw["agent_id"],
                    condition=condition,
                    packet=_packet(condition, run["environment_instance"]),
                    criterion_id=raw["criterion_id"],
                    route=route,
                    # A failed grading is no verdict: the row counts as ungraded.
                    passed=None if grader_error else verdict,
                    accessed=accessed,
                    inspections=_count(run, "files_inspected", run_file, run_line),
                    tool_calls=_count(run, "tool_calls", run_file, run_line),
                    tool_calls_before_first_access=_count(
                        run, "tool_calls_before_first_access", run_file, run_line
                    ),
                )
            )
        except ValidationError as error:
            first = error.errors()[0]
            raise InvalidResults(
                f"{first['msg']}; {_FIX}",
                file=criterion_file,
                row=line,
                field=".".join(str(part) for part in first["loc"]) or None,
            ) from error
    for run_id, (run_line, run) in sorted(runs.items()):
        for column in _COUNT_COLUMNS:
            stated, actual = _count(run, column, run_file, run_line), tallies[run_id][column]
            if stated is not None and stated != actual:
                raise InvalidResults(
                    f"run {run_id} states {column}={stated} but {CRITERION_FILE} has {actual}; "
                    f"the two ledgers disagree — {_FIX}",
                    file=run_file,
                    row=run_line,
                    field=column,
                )
    return check_rows(rows)


def read_task_labels(path: Path) -> dict[str, str]:
    """`task_id` → manuscript label from `task_mapping.csv`, or {} when the release lacks it."""
    file = find_ledgers(path) / TASK_FILE
    if not file.is_file():
        return {}
    return {row["task_id"]: row["task_label"] for _, row in _rows(file, ("task_id", "task_label"))}
