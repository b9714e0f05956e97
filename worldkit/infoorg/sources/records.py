"""What every source reader produces: records with their reference path, grouped into tasks.

A reader fixes each record's text and its source-native path (`meeting/section`,
`parent issue/subtask`, `sig/proposal`) before any opaque identifier exists. This module holds
only the shapes; it never reads files and never assigns identifiers.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from worldkit.errors import ExitCode, WorldkitError

Family = Literal["design", "recap", "thread"]
"""The three InfoOrgBench task families."""

FAMILIES: tuple[Family, ...] = ("design", "recap", "thread")


class SourceRecord(BaseModel):
    """One record as extracted from its source, before shuffling and id assignment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1)
    """The exact record text written to `inbox/<ID>.txt` (UTF-8, no added newline)."""
    path: tuple[str, ...] = Field(min_length=2, max_length=2)
    """Reference folders: (meeting, section), (parent issue, subtask) or (sig, proposal dir)."""
    source: str = Field(min_length=1)
    """Locator of the record in the source tree, e.g. `abstractive/ES2002a.abssumm.xml#ES2002a.x.s.1`."""


class SourceUnit(BaseModel):
    """A complete source unit a task is built from: a meeting, a subtask discussion or a KEP."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    unit_id: str = Field(min_length=1)
    """Source-native identity: meeting id, subtask key, or `<sig>/<dir>` for a KEP."""
    group: str = Field(min_length=1)
    """The top-level group the unit belongs to: the meeting, the parent issue, the SIG."""
    records: tuple[SourceRecord, ...]
    """The unit's records in source order."""


class TaskSelection(BaseModel):
    """The source units chosen for one task, in the order the selection fixed them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(pattern=r"^(design|recap|thread)-[0-9]{3}$")
    """Task identifier, `<family>-NNN`, numbered in selection order from 001."""
    family: Family
    """Which family the task belongs to."""
    units: tuple[SourceUnit, ...] = Field(min_length=1)
    """The complete units whose records make up the task."""

    @property
    def records(self) -> tuple[SourceRecord, ...]:
        """All records of the task, in unit order then source order (before shuffling)."""
        return tuple(record for unit in self.units for record in unit.records)

    @property
    def unit_ids(self) -> tuple[str, ...]:
        return tuple(unit.unit_id for unit in self.units)


class InvalidSource(WorldkitError):
    """A source directory or export cannot be read as the family's source (exit 3)."""

    exit_code = ExitCode.INVALID_INPUT


class NotEnoughTasks(WorldkitError):
    """The source yields fewer eligible tasks than were asked for (exit 3)."""

    exit_code = ExitCode.INVALID_INPUT
