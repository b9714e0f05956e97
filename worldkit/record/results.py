"""The normalized result row: one per (run, criterion), whatever the rows were read from.

Execution records (`worldkit.record.execution`) and the public WorkWorlds ledgers
(`worldkit.analysis.ledgers`) both become `ResultRow`s, and every report is computed from rows alone.
Unknowns stay unknown: an ungraded criterion has `passed=None`, an undecidable access label has
`accessed=None`, and a figure the run did not record is `None`. Nothing here guesses.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from worldkit._model import Model
from worldkit.errors import ExitCode, WorldkitError

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "AgentId",
    "Condition",
    "CriterionId",
    "InvalidResults",
    "ResultRow",
    "Route",
    "RunId",
    "TaskId",
    "check_rows",
    "sort_rows",
]

RESULTS_SCHEMA_VERSION = 1

RunId = Annotated[str, Field(min_length=1, description="A run's identifier, unique per source.")]
TaskId = Annotated[str, Field(min_length=1, description="The task (overlay) identifier.")]
AgentId = Annotated[str, Field(min_length=1, description="The candidate agent's identifier.")]
CriterionId = Annotated[str, Field(min_length=1, description="A rubric criterion's identifier.")]
Condition = Literal["full", "curated"]
Route = Literal["deterministic", "semantic"]


class InvalidResults(WorldkitError):
    """Run results (an execution record or a ledger) are malformed or inconsistent.

    The message names the file, the row or field, and how to fix it.
    """

    exit_code = ExitCode.INVALID_INPUT

    def __init__(
        self,
        message: str,
        *,
        file: Path | str | None = None,
        row: int | str | None = None,
        field: str | None = None,
    ) -> None:
        where = ", ".join(
            part
            for part in (
                f"file {file}" if file else "",
                f"line {row}" if isinstance(row, int) else (f"row {row}" if row else ""),
                f"field {field}" if field else "",
            )
            if part
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.file = str(file) if file else None
        self.row = row
        self.field = field


class ResultRow(Model):
    """One criterion of one run, with the run's search-burden figures repeated on every row."""


    schema_version: Literal[1] = RESULTS_SCHEMA_VERSION
    """Version of this row format."""
    source: str = Field(min_length=1)
    """Where the row came from (`runs`, or the ledger directory's name); run ids are unique per
    source, and a report keeps sources apart."""
    run_id: RunId
    """The run this row belongs to."""
    task: TaskId
    """The task the run worked."""
    agent: AgentId
    """The agent that ran."""
    condition: Condition
    """`full` (the whole seat projection) or `curated` (a curated subset of it)."""
    packet: str | None = None
    """For `curated` runs, which curated subset (e.g. a curator's packet); None for `full`."""
    criterion_id: CriterionId
    """The rubric criterion graded on this row."""
    route: Route
    """How the criterion is graded: a `deterministic` check or a `semantic` judge."""
    passed: bool | None
    """Criterion verdict; None when ungraded (no judge, or the grader failed)."""
    accessed: bool | None
    """Whether the run accessed every member of one sufficient evidence set; None when unknown."""
    inspections: int | None = Field(ge=0)
    """File/record inspections in the run (per run); None when not recorded."""
    tool_calls: int | None = Field(ge=0)
    """Total tool calls in the run (per run); None when not recorded."""
    tool_calls_before_first_access: int | None = Field(ge=0)
    """Tool calls before the run's first sufficient evidence access (per run); None when not
    recorded or when the run never reached sufficient access."""

    @model_validator(mode="after")
    def _packet_only_when_curated(self) -> ResultRow:
        if self.condition == "full" and self.packet is not None:
            raise ValueError("packet is only meaningful for the curated condition")
        return self

    @property
    def run_key(self) -> tuple[str, str]:
        """(source, run_id): the identity of the run this row belongs to."""
        return (self.source, self.run_id)


_RUN_FIELDS = (
    "task",
    "agent",
    "condition",
    "packet",
    "inspections",
    "tool_calls",
    "tool_calls_before_first_access",
)


def sort_rows(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Rows in canonical order (source, run, criterion), so input order never shows in output."""
    return sorted(rows, key=lambda row: (row.source, row.run_id, row.criterion_id))


def check_rows(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Return the rows in canonical order after checking they describe coherent runs.

    Raises `InvalidResults` when a criterion appears twice in a run, or when rows of one run
    disagree about its task, agent, condition, packet or per-run figures.
    """
    ordered = sort_rows(rows)
    first: dict[tuple[str, str], ResultRow] = {}
    seen: set[tuple[str, str, str]] = set()
    for row in ordered:
        key = (row.source, row.run_id, row.criterion_id)
        if key in seen:
            raise InvalidResults(
                f"criterion {row.criterion_id} appears twice in run {row.run_id} ({row.source}); "
                "keep one result per criterion and run",
                row=row.run_id,
            )
        seen.add(key)
        head = first.setdefault(row.run_key, row)
        for name in _RUN_FIELDS:
            if getattr(row, name) != getattr(head, name):
                raise InvalidResults(
                    f"run {row.run_id} ({row.source}) has {name}={getattr(head, name)!r} on "
                    f"criterion {head.criterion_id} but {getattr(row, name)!r} on "
                    f"{row.criterion_id}; a run has one value for it",
                    row=row.run_id,
                    field=name,
                )
    return ordered
