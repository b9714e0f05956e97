"""The near-duplicate measure: masking, grouping, the share, and a seat of a small world."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from tests.builders import WorldSpec
from worldkit.materialize import plan_projection
from worldkit.materialize.neardup import (
    mask_text,
    near_duplicates,
    seat_near_duplicates,
)
from worldkit.world import load_world

SUMMARY = "# Batch {lot}\n\nFilled {day} by {who}; {n} vials, yield {y} %. Deviation {dev}.\n"


def test_mask_hides_names_dates_ids_and_digits_only() -> None:
    text = "Lot ZV-25031 filled 3 Mar 2025 (2025-03-03) by Daniel Ferreira: 43,120 vials; CAPA-2025-0012 open."
    masked = mask_text(text, ["Daniel Ferreira"])
    assert masked == "Lot <ID> filled <DATE> (<DATE>) by <NAME>: #,# vials; <ID> open."
    assert mask_text("Pass-through filter, no digits", []) == "Pass-through filter, no digits"


def test_files_differing_only_in_masked_parts_form_one_group() -> None:
    texts = {
        f"b{k}.md": SUMMARY.format(lot=f"ZV-250{k:02d}", day=f"{k + 1} Feb 2025", who=who, n=44000 - k, y=98.0 + k / 10,
                                   dev=f"DEV-2025-00{k:02d}")
        for k, who in enumerate(["Ana Berg", "Liam Chen", "Ana Berg", "Yemi Adeyemi"])
    }
    texts["own.md"] = "# Batch ZV-25099\n\nFilling paused for a needle change; 40 vials rejected.\n"
    found = near_duplicates(texts, ["Ana Berg", "Liam Chen", "Yemi Adeyemi"])
    assert found.groups == [["b0.md", "b1.md", "b2.md", "b3.md"]]
    assert (found.files, found.in_groups, found.largest) == (5, 4, 4) and found.share == 0.8
    # Without the names masked, the operators tell two of the summaries apart from the rest.
    assert near_duplicates(texts).in_groups == 2


def test_no_files_no_share() -> None:
    found = near_duplicates({})
    assert (found.files, found.share, found.largest, found.groups) == (0, 0.0, 0, [])
    assert found.as_json()["largest_example"] is None


def test_a_seat_of_a_small_world(tmp_path: Path) -> None:
    state = load_world(WorldSpec().write(tmp_path / "world")).revision("r1")
    seat = sorted(state.seats)[0]
    projection = plan_projection(state, dt.date(2025, 12, 31), seat)
    found = seat_near_duplicates(projection)
    assert found.files == len(projection.documents) and found.in_groups <= found.files


def test_seats_sharing_masked_texts_measure_as_each_alone(tmp_path: Path) -> None:
    state = load_world(WorldSpec().write(tmp_path / "world")).revision("r1")
    day = dt.date(2025, 12, 31)
    projections = [plan_projection(state, day, seat) for seat in sorted(state.seats)]
    rendered: list[str] = []
    for projection in projections:
        original = projection.renderer.document_text

        def counted(doc, original=original):  # noqa: ANN001, ANN202
            rendered.append(doc.id)
            return original(doc)

        projection.renderer.document_text = counted  # type: ignore[method-assign]
    shared: dict[str, str] = {}
    together = [seat_near_duplicates(p, shared).as_json() for p in projections]
    seen = [d for p in projections for d in p.documents]
    assert len(seen) > len(set(seen)), "the seats of the fixture share no document"
    assert sorted(rendered) == sorted(set(seen)) and set(shared) == set(seen)  # each shared document once
    rendered.clear()
    assert together == [seat_near_duplicates(p).as_json() for p in projections]
    assert len(rendered) == len(seen)
