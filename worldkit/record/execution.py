"""The execution record a run leaves on disk, and how records become result rows.

`worldkit run` writes one `execution-record.json` per run (via `write_record`); `worldkit report`
finds them under the directories it is given (`find_records`, `load_records`) or in a store
(`worldkit.report.records`) and maps them to `ResultRow`s (`load_rows`, `record_rows`). The record is versioned: a reader refuses a `schema_version` it does not know
rather than guessing. This module never grades and never decides access; it only carries the
verdicts a run already made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from worldkit._model import Model
from worldkit.canon import pretty_json
from worldkit.errors import UsageError
from worldkit.record.results import (
    AgentId,
    CriterionId,
    InvalidResults,
    ResultRow,
    Route,
    RunId,
    TaskId,
    check_rows,
)

__all__ = [
    "RECORD_FILENAME",
    "RECORD_SCHEMA_VERSION",
    "CriterionOutcome",
    "ExecutionRecord",
    "LoadedRecord",
    "RunStats",
    "check_unique",
    "find_records",
    "load_records",
    "load_rows",
    "record_rows",
    "read_record",
    "write_record",
]

RECORD_FILENAME = "execution-record.json"
RECORD_SCHEMA_VERSION = 1
RUNS_SOURCE = "runs"


ConditionSpec = Annotated[str, Field(pattern=r"^(full|curated(:\S+)?)$")]

_PASSED = {"pass": True, "fail": False, "ungraded": None, "grader_error": None, "unknown": None}
_ACCESSED = {"accessed": True, "not_accessed": False, "unknown": None}


class CriterionOutcome(Model):
    """The graded result and evidence-access label of one criterion in one run."""


    id: CriterionId
    """The rubric criterion's identifier."""
    route: Route
    """`deterministic` (a check on the captured state) or `semantic` (a judge)."""
    result: Literal["pass", "fail", "ungraded", "grader_error", "unknown"]
    """The verdict; `ungraded` when no judge ran, `grader_error` when the judge could not decide
    (its endpoint kept failing, its reply could not be read) — never a guess; `unknown` when a
    check needs what was not captured (mail or record changes graded without the event log).
    `ungraded`, `grader_error` and `unknown` count in no pass rate."""
    access: Literal["accessed", "not_accessed", "unknown"]
    """Whether every member of one sufficient evidence set was returned with its mapped
    content; `unknown` when the event log cannot decide."""
    detail: str = ""
    """The check's one-line reason (deterministic) or the judge's (semantic)."""
    graded_by: str = ""
    """Who decided: `check` (deterministic), the judge's id (`openai:MODEL`, `facts`, …), or empty."""
    seen_in_listing: list[str] = Field(default_factory=list)
    """Evidence (`surface:locator`) whose anchor a listing line (a message subject, a record title)
    carried verbatim while the criterion was not accessed; reported only, never counted as access."""


class RunStats(Model):
    """Search-burden figures for the whole run, derived from its event log."""


    inspections: int | None = Field(ge=0)
    """File/record inspections; None when not recorded."""
    tool_calls: int | None = Field(ge=0)
    """All tool calls the agent made; None when not recorded."""
    tool_calls_before_first_access: int | None = Field(ge=0)
    """Tool calls made before the first sufficient evidence access; None when the run never
    reached one or the log cannot tell."""

    @model_validator(mode="after")
    def _before_not_more_than_all(self) -> RunStats:
        before, total = self.tool_calls_before_first_access, self.tool_calls
        if before is not None and total is not None and before > total:
            raise ValueError("tool_calls_before_first_access cannot exceed tool_calls")
        return self


class ExecutionRecord(Model):
    """What one run of one agent on one task produced, as written by `worldkit run`."""


    schema_version: Literal[1]
    """Version of this record format."""
    run_id: RunId
    """Fresh identifier of the run."""
    task: TaskId
    """The task (overlay) the agent worked."""
    agent: AgentId
    """The agent that ran."""
    condition: ConditionSpec
    """`full`, or `curated:NAME` for a curated subset named NAME."""
    criteria: list[CriterionOutcome]
    """One outcome per rubric criterion."""
    stats: RunStats
    """Per-run search-burden figures."""
    inputs: dict[str, Any] = Field(default_factory=dict)
    """Frozen inputs: world, rev, revision digest, date, seat, overlay id and digest."""
    digests: dict[str, str] = Field(default_factory=dict)
    """Projection fingerprint, candidate/verifier package digests, pre/post state digests."""
    workspace_before: dict[str, str] = Field(default_factory=dict)
    """Workspace path → sha256 when the agent started."""
    workspace_after: dict[str, str] = Field(default_factory=dict)
    """Workspace path → sha256 as captured after the agent stopped."""
    deliverables: dict[str, str | None] = Field(default_factory=dict)
    """Deliverable path → sha256 (None when it was not produced)."""
    agent_result: dict[str, Any] = Field(default_factory=dict)
    """What the agent reported (steps, tokens, stop reason); never used for grading."""
    trajectory: list[dict[str, Any]] = Field(default_factory=list)
    """The run's event log (every tool call, hash-chained) as stored."""
    log_anchor: dict[str, Any] | None = None
    """The log's final anchor (`worldkit.store.anchor`: run, session, head seq and hash, and an
    HMAC when `WORLDKIT_LOG_KEY` was set), also in the run folder's `log-anchor.json`."""
    status: Literal["completed", "failed"] = "completed"
    """`failed` when the run could not finish (e.g. the agent's endpoint was down); a failed run
    has no verdicts and gives no result rows."""
    error: str = ""
    """Why a failed run failed."""
    agent_config: dict[str, Any] = Field(default_factory=dict)
    """The agent's configuration: id (`openai:MODEL`), endpoint, budgets, system-prompt digest."""
    judge: dict[str, Any] | None = None
    """The judge's frozen configuration (kind, id, model, endpoint, prompt digest, temperature,
    retries); None when no judge graded the semantic criteria."""
    judge_failure: str = ""
    """When the judge failed: one line naming its endpoint, why, and the criteria left
    `grader_error` (the commands that grade exit 1 with the same line); empty otherwise."""
    calibration: dict[str, Any] | None = None
    """The judge's calibration (`worldkit judge calibrate --out`): its digest, the judge it was run
    on, and its agreement, Cohen's κ and Gwet's AC1 with intervals; None when none was given."""

    @model_validator(mode="after")
    def _criteria_unique(self) -> ExecutionRecord:
        ids = [criterion.id for criterion in self.criteria]
        duplicates = sorted({cid for cid in ids if ids.count(cid) > 1})
        if duplicates:
            raise ValueError(f"criteria listed more than once: {', '.join(duplicates)}")
        return self

    def rows(self, source: str = RUNS_SOURCE) -> list[ResultRow]:
        """The record as normalized result rows, one per criterion (none for a failed run)."""
        if self.status == "failed":
            return []
        condition, _, packet = self.condition.partition(":")
        return [
            ResultRow(
                source=source,
                run_id=self.run_id,
                task=self.task,
                agent=self.agent,
                condition="full" if condition == "full" else "curated",
                packet=packet or None,
                criterion_id=criterion.id,
                route=criterion.route,
                passed=_PASSED[criterion.result],
                accessed=_ACCESSED[criterion.access],
                inspections=self.stats.inspections,
                tool_calls=self.stats.tool_calls,
                tool_calls_before_first_access=self.stats.tool_calls_before_first_access,
            )
            for criterion in sorted(self.criteria, key=lambda c: c.id)
        ]


def write_record(record: ExecutionRecord, path: Path) -> None:
    """Write a record as deterministic JSON (sorted keys, trailing newline)."""
    path.write_text(pretty_json(record.model_dump(mode="json")), encoding="utf-8")


def read_record(path: Path) -> ExecutionRecord:
    """Read and validate one execution record; errors name the file, field and fix."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InvalidResults(f"cannot read: {error.strerror}", file=path) from error
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        where = f" at line {error.lineno}, column {error.colno}" if isinstance(
            error, json.JSONDecodeError
        ) else ""
        raise InvalidResults(
            f"not valid UTF-8 JSON{where}; rewrite it or re-run the task", file=path
        ) from error
    if isinstance(data, dict) and data.get("schema_version") not in (None, RECORD_SCHEMA_VERSION):
        raise InvalidResults(
            f"schema_version {data.get('schema_version')!r} is not supported (this worldkit "
            f"reads version {RECORD_SCHEMA_VERSION}); use the worldkit that wrote it",
            file=path,
            field="schema_version",
        )
    try:
        return ExecutionRecord.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or None
        raise InvalidResults(
            f"{first['msg']}; fix the record or re-run the task ({error.error_count()} "
            "problem(s) in all)",
            file=path,
            field=field,
        ) from error


def find_records(paths: Iterable[Path]) -> list[Path]:
    """Every `execution-record.json` under the given directories (or the files themselves)."""
    found: list[Path] = []
    for path in paths:
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            hits = sorted(path.rglob(RECORD_FILENAME))
            if not hits:
                raise UsageError(
                    f"no {RECORD_FILENAME} under {path}; pass the directory `worldkit run "
                    "--out` wrote its runs to"
                )
            found.extend(hits)
        else:
            raise UsageError(f"{path} does not exist; pass a runs directory or a record file")
    return sorted(set(found))


@dataclass(frozen=True)
class LoadedRecord:
    """An execution record and where it was read from: its file, or a store."""

    record: ExecutionRecord
    """The validated record."""
    origin: str
    """Its file's path, or `STORE_URL#RUN_ID` for a record read from a store (for messages)."""
    path: Path | None = None
    """The record file (whose folder holds the run's staged package); None from a store."""
    store: str | None = None
    """The store it was read from (URL, password hidden); None for a file."""
    campaign_plan: bytes | None = None
    """From a store: the plan (canonical JSON) of the campaign the run is an attempt of, as the
    store holds it, its digest checked; None otherwise (a folder's plan is beside its runs)."""


def load_records(paths: Iterable[Path]) -> list[LoadedRecord]:
    """Every execution record found under `paths`, validated, each run id once."""
    return check_unique([LoadedRecord(read_record(path), str(path), path=path)
                         for path in find_records(paths)])


def check_unique(records: Sequence[LoadedRecord]) -> list[LoadedRecord]:
    """The records, after refusing two of one run id (a copied run folder, or a run that is both
    in a folder and in a store that are reported together)."""
    seen: dict[str, LoadedRecord] = {}
    for loaded in records:
        run_id = loaded.record.run_id
        if run_id in seen:
            raise InvalidResults(
                f"run_id {run_id} is also used by {seen[run_id].origin}; each run needs its own "
                "id — remove the copy (or report the folder and the store apart)",
                file=loaded.path or loaded.origin,
                field="run_id",
            )
        seen[run_id] = loaded
    return list(records)


def record_rows(records: Iterable[LoadedRecord]) -> list[ResultRow]:
    """Result rows of the records, in canonical order."""
    return check_rows(row for loaded in records for row in loaded.record.rows())


def load_rows(paths: Iterable[Path]) -> list[ResultRow]:
    """Result rows of every execution record found under `paths`, in canonical order."""
    return record_rows(load_records(paths))
