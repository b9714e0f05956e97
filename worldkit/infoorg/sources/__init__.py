"""Source readers and task selection for the three InfoOrgBench families.

`select_tasks(family, source, tasks, seed)` reads a local source directory (a KEP checkout, the
AMI manual annotations, or a Jira REST v2 export) and returns the task selections with their
records and reference paths. Nothing here writes files or assigns opaque record ids.
"""

from __future__ import annotations

from pathlib import Path

from worldkit.errors import UsageError
from worldkit.infoorg.sources.ami import meeting_units
from worldkit.infoorg.sources.jira import subtask_units
from worldkit.infoorg.sources.kep import kep_units
from worldkit.infoorg.sources.records import (
    FAMILIES,
    Family,
    InvalidSource,
    NotEnoughTasks,
    SourceRecord,
    SourceUnit,
    TaskSelection,
)
from worldkit.infoorg.sources.selection import Progress, bundle_tasks, derived_seed, design_tasks


def select_tasks(
    family: Family, source: Path, tasks: int, seed: int, progress: Progress | None = None
) -> list[TaskSelection]:
    """The first `tasks` task selections of `family` from the source directory `source`.

    Recap and Thread take bundles in a fixed candidate order and do not depend on `seed`;
    Design draws its selection with `seed`.
    """
    if not source.exists():
        raise InvalidSource(f"{source}: no such file or directory; pass --source the source folder")
    if tasks < 1:
        raise UsageError(f"--tasks must be at least 1, got {tasks}")
    if family == "design":
        return design_tasks(kep_units(source), tasks, seed, progress)
    if family == "recap":
        return bundle_tasks("recap", meeting_units(source), tasks, progress)
    if family == "thread":
        return bundle_tasks("thread", subtask_units(source), tasks, progress)
    raise InvalidSource(f"unknown family {family!r}; use one of {', '.join(FAMILIES)}")


__all__ = [
    "FAMILIES",
    "Family",
    "InvalidSource",
    "NotEnoughTasks",
    "Progress",
    "SourceRecord",
    "SourceUnit",
    "TaskSelection",
    "derived_seed",
    "select_tasks",
]
