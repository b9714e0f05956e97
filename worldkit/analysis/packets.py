"""The curated packets' characteristics, as the paper's Table 1 reports them.

Two readers feed one summary: the public release's `matched_results.json` (its
`packet_construction` list: curator submissions, revisions, adjudication) and worldkit's own
overlays (their `curated` packets, with the seat's full projection as the denominator of the
retained share). Sizes count unique sources; Jaccard compares two packets' source sets for the
same task (the release's as-submitted sets, an overlay's packets as written). Never edits a
packet; refuses a file that is not what it claims to be.
"""

from __future__ import annotations

import json
import statistics
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from worldkit._model import Model
from worldkit.record.results import InvalidResults

__all__ = ["MATCHED_FILE", "PacketSummary", "PacketRow", "read_matched_packets", "summarize_packets"]

MATCHED_FILE = "matched_results.json"


class PacketRow(Model):
    """One curated packet of one task."""


    task: str
    """Task id."""
    packet: str
    """Curator / packet name."""
    sources: list[str]
    """The packet's final sources (sorted, unique)."""
    submitted: list[str] | None = None
    """The sources as first submitted, where the record keeps them."""
    criteria: int | None = None
    """Criteria of the task."""
    initially_missing: int | None = None
    """Criteria the submitted packet could not support."""
    finally_missing: int | None = None
    """Criteria the final packet cannot support."""
    revised: bool | None = None
    """The packet went back to its curator for completeness."""
    adjudicator_added: int | None = None
    """Sources an adjudicator added."""
    seat_files: int | None = None
    """Files the seat's full projection holds (the retained share's denominator)."""


class PacketSummary(Model):
    """Table 1: packet sizes, curator agreement, completeness and retained share."""


    packets: int
    """Curated packets."""
    size_median: float
    """Median final packet size."""
    size_range: tuple[int, int]
    """Smallest and largest final packet size."""
    size_mean_by_packet: dict[str, float]
    """Packet (curator) name → mean final size over its tasks."""
    task_pairs: int
    """Tasks with at least two packets."""
    pairs_differing: int
    """Of those, tasks whose packets hold different source sets."""
    jaccard_by_task: dict[str, float]
    """Task → mean pairwise Jaccard of its packets' source sets."""
    jaccard_mean: float | None
    """Mean over tasks."""
    jaccard_range: tuple[float, float] | None
    """Smallest and largest."""
    criterion_packet_pairs: int | None = None
    """Criterion × packet pairs (where criteria are known)."""
    initially_sufficient: int | None = None
    """Pairs the packet supported as first submitted."""
    finally_sufficient: int | None = None
    """Pairs the final packet supports."""
    revised: int | None = None
    """Packets sent back for completeness."""
    adjudicator_added: int | None = None
    """Sources added by an adjudicator, in all."""
    retained_share: dict[str, float] = Field(default_factory=dict)
    """`task/packet` → final size / seat files, where the seat's file count is known."""
    retained_range: tuple[float, float] | None = None
    """Smallest and largest retained share."""


def _jaccard(left: set[str], right: set[str]) -> float:
    union = left | right
    return len(left & right) / len(union) if union else 1.0


def _total(values: list[int | None]) -> int | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def summarize_packets(rows: list[PacketRow]) -> PacketSummary | None:
    """Table 1 over packets (None without any)."""
    if not rows:
        return None
    sizes = [len(row.sources) for row in rows]
    names = sorted({row.packet for row in rows})
    by_task: dict[str, list[PacketRow]] = {}
    for row in sorted(rows, key=lambda r: (r.task, r.packet)):
        by_task.setdefault(row.task, []).append(row)
    jaccard: dict[str, float] = {}
    differing = 0
    for task, members in by_task.items():
        if len(members) < 2:
            continue
        sets = [set(m.submitted if m.submitted is not None else m.sources) for m in members]
        pairs = [_jaccard(a, b) for a, b in combinations(sets, 2)]
        jaccard[task] = statistics.fmean(pairs)
        differing += any(a != b for a, b in combinations(sets, 2))
    criteria = [row.criteria for row in rows]
    total = _total(criteria)
    missing = _total([row.initially_missing for row in rows])
    final_missing = _total([row.finally_missing for row in rows])
    share = {f"{row.task}/{row.packet}": len(row.sources) / row.seat_files
             for row in rows if row.seat_files}
    revised = [row.revised for row in rows]
    return PacketSummary(
        packets=len(rows),
        size_median=float(statistics.median(sizes)),
        size_range=(min(sizes), max(sizes)),
        size_mean_by_packet={name: statistics.fmean(len(r.sources) for r in rows
                                                    if r.packet == name) for name in names},
        task_pairs=len(jaccard),
        pairs_differing=differing,
        jaccard_by_task=jaccard,
        jaccard_mean=statistics.fmean(jaccard.values()) if jaccard else None,
        jaccard_range=(min(jaccard.values()), max(jaccard.values())) if jaccard else None,
        criterion_packet_pairs=total,
        initially_sufficient=None if total is None or missing is None else total - missing,
        finally_sufficient=None if total is None or final_missing is None
        else total - final_missing,
        revised=None if any(r is None for r in revised) else sum(bool(r) for r in revised),
        adjudicator_added=_total([row.adjudicator_added for row in rows]),
        retained_share=share,
        retained_range=(min(share.values()), max(share.values())) if share else None,
    )


# The public release's matched_results.json --------------------------------------------------

class _Source(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    surface: str = Field(min_length=1)
    locator: str = Field(min_length=1)


class _Construction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")
    task_id: str = Field(min_length=1)
    curator_id: str = Field(min_length=1)
    as_submitted_sources: list[_Source]
    final_sources: list[_Source]
    total_criteria: int = Field(ge=0)
    missing_criteria: int = Field(ge=0)
    missing_criteria_after_adjudication: int | None = Field(default=None, ge=0)
    generic_revision_requested: bool
    repair_sources_added: list[_Source]
    submitted_packet_size: int = Field(ge=0)
    final_packet_size: int = Field(ge=0)


class _Matched(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")
    packet_construction: list[_Construction]


_FIX = "restore the file from the WorkWorlds release (see SOURCE.md)"


def _keys(sources: list[_Source]) -> list[str]:
    return sorted({f"{s.surface}:{s.locator}" for s in sources})


def read_matched_packets(folder: Path) -> list[PacketRow] | None:
    """Packets from `matched_results.json` in a ledger folder (None when the file is absent).

    Checks that each packet's stated sizes match its source lists.
    """
    file = folder / MATCHED_FILE
    if not file.is_file():
        return None
    try:
        data = _Matched.model_validate(json.loads(file.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidResults(f"not readable UTF-8 JSON ({error}); {_FIX}", file=file) from error
    except ValidationError as error:
        first = error.errors()[0]
        raise InvalidResults(f"{first['msg']}; {_FIX}", file=file,
                             field=".".join(str(p) for p in first["loc"])) from error
    rows = []
    for index, packet in enumerate(data.packet_construction):
        final, submitted = _keys(packet.final_sources), _keys(packet.as_submitted_sources)
        for stated, actual, name in ((packet.final_packet_size, len(final), "final_packet_size"),
                                     (packet.submitted_packet_size, len(submitted),
                                      "submitted_packet_size")):
            if stated != actual:
                raise InvalidResults(
                    f"packet {packet.task_id}/{packet.curator_id} states {name}={stated} but "
                    f"lists {actual} unique sources; {_FIX}",
                    file=file, field=f"packet_construction.{index}.{name}")
        rows.append(PacketRow(
            task=packet.task_id, packet=packet.curator_id.replace("-", " "), sources=final,
            submitted=submitted, criteria=packet.total_criteria,
            initially_missing=packet.missing_criteria,
            finally_missing=packet.missing_criteria_after_adjudication,
            revised=packet.generic_revision_requested,
            adjudicator_added=len(packet.repair_sources_added),
        ))
    return rows
