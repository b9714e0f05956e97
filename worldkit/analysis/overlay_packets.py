"""Table 1 for worldkit's own runs: the curated packets of the overlays the runs worked.

Each execution record names its overlay (`inputs.overlay_path`) and the overlay's digest
(`inputs.overlay_sha256`); the overlay is loaded and must still have that digest. The seat's
file count comes from the staged projection of a `full` run of the same overlay, whose manifest
must verify and carry the fingerprint the record froze; a record read from a store (no run
folder) gives the count its run froze (`inputs.seat_files`). Refuses a changed overlay; leaves
the retained share unknown when no full run of the overlay gives the count. An overlay's
`curation` records give each packet's first submission (what the curators' Jaccard compares),
whether it was revised, and the criteria the first submission could not support (checked by
`overlay check`).
"""

from __future__ import annotations

from pathlib import Path

from worldkit.analysis.packets import PacketRow
from worldkit.errors import WorldkitError
from worldkit.materialize.manifest import read_manifest
from worldkit.overlay import Overlay, load_overlay, overlay_digest
from worldkit.record.execution import LoadedRecord
from worldkit.record.results import InvalidResults
from worldkit.run.folder import seat_file_count

__all__ = ["overlay_packets", "packet_rows"]

_PROJECTION = Path("package") / "candidate" / "projection"


def _seat_files(found: list[LoadedRecord]) -> int | None:
    for loaded in found:
        record = loaded.record
        if record.condition != "full":
            continue
        if loaded.path is None:
            frozen = record.inputs.get("seat_files")
            if isinstance(frozen, int) and not isinstance(frozen, bool):
                return frozen
            continue
        folder = loaded.path.parent / _PROJECTION
        if not (folder / "manifest.json").is_file():
            continue
        manifest = read_manifest(folder)
        if manifest.fingerprint != record.digests.get("fingerprint"):
            raise InvalidResults(
                f"the staged projection's fingerprint {manifest.fingerprint[:12]}… is not the "
                f"{str(record.digests.get('fingerprint'))[:12]}… the run recorded; the run folder "
                "was changed after the run — re-run it", file=folder / "manifest.json")
        return seat_file_count(folder)
    return None


def overlay_packets(records: list[LoadedRecord]) -> tuple[list[PacketRow], list[str],
                                                         dict[str, str]]:
    """Packet rows of the overlays behind these records, notes on what could not be read, and
    each overlay's title by task id."""
    by_overlay: dict[tuple[str, str], list[LoadedRecord]] = {}
    notes: list[str] = []
    for loaded in records:
        inputs = loaded.record.inputs
        key = (str(inputs.get("overlay_path") or ""), str(inputs.get("overlay_sha256") or ""))
        by_overlay.setdefault(key, []).append(loaded)
    rows: list[PacketRow] = []
    titles: dict[str, str] = {}
    for (source, digest), found in sorted(by_overlay.items()):
        task = found[0].record.task
        if not source or not digest:
            notes.append(f"task {task}: the records do not name the overlay file and digest, so "
                         "its packets are not reported")
            continue
        try:
            overlay = load_overlay(source)
        except WorldkitError as error:
            notes.append(f"task {task}: overlay {source} cannot be read ({error.message})")
            continue
        actual = overlay_digest(overlay)
        if actual != digest:
            raise InvalidResults(
                f"overlay {source} now has digest {actual[:12]}… but the runs used "
                f"{digest[:12]}…; report on the overlay the runs used (restore it)",
                file=found[0].path or found[0].origin, field="inputs.overlay_sha256")
        titles[overlay.id] = overlay.title
        if not overlay.curated:
            continue
        seat_files = _seat_files(found)
        if seat_files is None:
            notes.append(f"task {task}: no staged full-projection run, so the share of the "
                         "seat's files is not reported")
        rows.extend(packet_rows(overlay, seat_files))
    return rows, notes, titles


def packet_rows(overlay: Overlay, seat_files: int | None = None) -> list[PacketRow]:
    """One Table 1 row per curated packet of `overlay` (`seat_files`: the seat's files, if known)."""
    rows = []
    for name in sorted(overlay.curated):
        paths = sorted({item.path for item in overlay.packet(name)})
        record = overlay.curation.get(name)
        rows.append(PacketRow(
            task=overlay.id, packet=name, sources=paths, criteria=len(overlay.rubric), seat_files=seat_files,
            submitted=None if record is None else sorted(set(overlay.first_submission(name))),
            revised=None if record is None else record.revised,
            initially_missing=None if record is None else len(record.missing_criteria),
        ))
    return rows
