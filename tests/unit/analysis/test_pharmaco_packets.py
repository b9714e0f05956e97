"""The PharmaCo overlays' curated packets as the paper's Table 1: sizes, curator agreement, revisions."""

from __future__ import annotations

import pytest

from worldkit.analysis.overlay_packets import packet_rows
from worldkit.analysis.packets import summarize_packets
from worldkit.overlay import find_overlays, load_overlay
from worldkit.overlay.models import Overlay


def _overlays() -> list[Overlay]:
    return [load_overlay(path) for path in find_overlays("pharmaco_demo")]


def test_table_1_of_the_pharmaco_packets_is_the_papers() -> None:
    overlays = _overlays()
    assert len(overlays) == 8
    summary = summarize_packets([row for overlay in overlays for row in packet_rows(overlay)])
    assert summary is not None
    assert summary.packets == 16 and summary.size_median == 9.0 and summary.size_range == (7, 11)
    assert summary.task_pairs == 8 and summary.pairs_differing == 5
    assert summary.jaccard_mean == pytest.approx(0.87, abs=0.01)
    assert summary.revised == 2
    assert (summary.criterion_packet_pairs, summary.initially_sufficient) == (144, 128)


def test_every_packet_records_how_it_came_about() -> None:
    for overlay in _overlays():
        assert sorted(overlay.curation) == sorted(overlay.curated), overlay.id
        for name, record in overlay.curation.items():
            final = {item.path for item in overlay.packet(name)}
            first = set(overlay.first_submission(name))
            assert (first != final) == record.revised, (overlay.id, name)
            assert bool(record.missing_criteria) == record.revised, (overlay.id, name)  # revised for completeness
