"""Size figures of a world at a date: people, seats, files per seat, records, messages, overlays,
and per seat the file formats and the near-duplicate share (files whose masked texts coincide).

Library only (`worldkit world stats` prints it). Files per seat are counted from the seat's
projection plan (the documents on its drives at the date, i.e. the `files/` entries a
materialization would write), without writing anything. Overlays and their criteria are counted
through the overlay package's loader; an overlay that fails to load is reported, not counted.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.access import Policy
from worldkit.errors import WorldkitError
from worldkit.materialize.neardup import seat_near_duplicates
from worldkit.materialize.project import plan_projection
from worldkit.timeline import as_of
from worldkit.world.load import WorldPackage

__all__ = ["WorldStats", "world_stats"]


@dataclass(frozen=True)
class WorldStats:
    """What `world_stats` measured."""

    world: str
    rev: str
    date: dt.date
    people: int
    seats: list[str]
    files_per_seat: dict[str, int]
    records: int
    messages: int
    overlays: int
    criteria: int
    overlay_errors: dict[str, str] = field(default_factory=dict)
    formats_per_seat: dict[str, dict[str, int]] = field(default_factory=dict)
    """seat → file format (`DOCX`, `PDF`, `XLSX`, `EML`, `MD`, `CSV`, …: the extension) → files."""
    near_duplicates_per_seat: dict[str, dict[str, object]] = field(default_factory=dict)
    """seat → the near-duplicate measure of its files (`worldkit.materialize.neardup`): files, in_groups,
    groups, share, largest, largest_example."""

    def as_json(self) -> dict[str, Any]:
        """One JSON object; `people`, `files_per_seat`, `records`, `messages`, `overlays` and
        `criteria` are the stable keys."""
        return {
            "world": self.world,
            "rev": self.rev,
            "date": self.date.isoformat(),
            "people": self.people,
            "seats": self.seats,
            "files_per_seat": dict(sorted(self.files_per_seat.items())),
            "formats_per_seat": {k: dict(sorted(v.items())) for k, v in sorted(self.formats_per_seat.items())},
            "near_duplicates_per_seat": dict(sorted(self.near_duplicates_per_seat.items())),
            "records": self.records,
            "messages": self.messages,
            "overlays": self.overlays,
            "criteria": self.criteria,
            "overlay_errors": dict(sorted(self.overlay_errors.items())),
        }


def _overlay_counts(world_id: str, world_root: Path) -> tuple[int, int, dict[str, str]]:
    """(overlays, criteria, errors) for the world's overlays; zeros when there is no overlay package."""
    try:
        from worldkit.overlay.load import find_world_overlays, load_overlay
    except ImportError:  # the overlay package is optional for a bare world
        return 0, 0, {}
    overlays = criteria = 0
    errors: dict[str, str] = {}
    for path in find_world_overlays(world_id, world_root):
        try:
            overlay = load_overlay(path)
        except WorldkitError as error:
            errors[str(path)] = error.message
            continue
        overlays += 1
        criteria += len(overlay.rubric)
    return overlays, criteria, errors


def world_stats(package: WorldPackage, date: dt.date, rev: str | None = None) -> WorldStats:
    """Counts for `package` at `date` in revision `rev` (default: the latest revision).

    `people` counts the persons of the revision (external contacts included, as they are
    people the world knows); `records` and `messages` count what exists on `date`.
    """
    name = rev or package.revision_names[-1]
    state = package.revision(name)
    snapshot = as_of(state, date)
    policy = Policy(state)
    projections = {seat: plan_projection(state, date, seat, policy) for seat in sorted(state.seats)}
    plans = {seat: projection.documents for seat, projection in projections.items()}
    files = {seat: len(docs) for seat, docs in plans.items()}
    masked: dict[str, str] = {}  # document id → masked text, shared by the seats (one revision, one date)
    near = {seat: seat_near_duplicates(projection, masked).as_json() for seat, projection in projections.items()}
    formats = {seat: dict(Counter(_format(state.documents[d].path) for d in docs)) for seat, docs in plans.items()}
    overlays, criteria, errors = _overlay_counts(package.id, package.root)
    return WorldStats(
        world=package.id,
        rev=name,
        date=date,
        people=len(state.people),
        seats=sorted(state.seats),
        files_per_seat=files,
        records=len(snapshot.records),
        messages=len(snapshot.messages),
        overlays=overlays,
        criteria=criteria,
        overlay_errors=errors,
        formats_per_seat=formats,
        near_duplicates_per_seat=near,
    )


def _format(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].upper() if "." in name else "(none)"
