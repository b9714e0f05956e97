"""Rendered bytes of shared sources are reused across seats, never across revisions or dates,
identical to a fresh rendering, and bounded in memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize, pack
from worldkit.materialize.memo import (
    _MEMO,
    ENTRY_OVERHEAD,
    RenderMemo,
    current_memo,
    fresh_renders,
)
from worldkit.world import load_world


@pytest.fixture(autouse=True)
def _no_packs() -> Iterator[None]:
    """The memo is what these tests watch: a projection's pack (tested in test_pack) would serve a repeat
    first. Its own patch, so a test's `monkeypatch.undo()` keeps it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pack, "folder", lambda: None)
        yield


def _world(tmp_path: Path) -> Path:
    return WorldSpec().write(tmp_path / "worlds" / "mini")


def test_a_second_seat_reuses_the_shared_files_and_gets_the_same_bytes(tmp_path: Path) -> None:
    package = load_world(_world(tmp_path))
    _MEMO.clear()
    first = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "s1")
    misses = _MEMO.misses
    hits = _MEMO.hits
    second = materialize(package, "r1", "2025-07-01", "S2", tmp_path / "s2")
    assert _MEMO.hits > hits  # S2 sees the shared drive, the QMS and the list mail too
    with fresh_renders():
        assert current_memo() is None
        before = (_MEMO.hits, _MEMO.misses)
        again = materialize(package, "r1", "2025-07-01", "S2", tmp_path / "s2-fresh")
        assert (_MEMO.hits, _MEMO.misses) == before
    assert again.manifest == second.manifest
    assert first.manifest.files != second.manifest.files
    assert misses > 0


def test_revisions_and_dates_never_share_bytes(tmp_path: Path) -> None:
    package = load_world(_world(tmp_path))
    _MEMO.clear()
    r1 = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "r1")
    r2 = materialize(package, "r2", "2025-07-01", "S1", tmp_path / "r2")
    sop = "files/Shared/SOPs/SOP-001.md"
    assert (r1.out / sop).read_text() == "SOP v1\n"
    assert (r2.out / sop).read_text() == "SOP v1 (corrected)\n"
    early = materialize(package, "r2", "2025-03-02", "S1", tmp_path / "early")
    with fresh_renders():
        fresh = materialize(package, "r2", "2025-03-02", "S1", tmp_path / "early-fresh")
    assert early.manifest == fresh.manifest


def test_the_memo_is_bounded_by_bytes() -> None:
    per_entry = 100 + ENTRY_OVERHEAD  # its content and what its key and node cost
    memo = RenderMemo(budget=8 * per_entry)
    for n in range(50):
        memo.bytes_for(("d", "2025-01-01", f"p{n}", f"s{n}"), lambda: (b"x" * 100, "2025-01-01T12:00:00Z"))
    assert memo.size <= 8 * per_entry and len(memo) == 8
    assert memo.bytes_for(("d", "2025-01-01", "p49", "s49"), lambda: (b"never", "")) == (b"x" * 100, "2025-01-01T12:00:00Z")
    big = b"y" * (memo.budget // 8 + 1)
    assert memo.bytes_for(("d", "2025-01-01", "big", "big"), lambda: (big, "t"))[0] == big
    assert ("d", "2025-01-01", "big", "big") not in memo._items  # larger than budget/8: not kept


def test_the_memo_is_bounded_by_entries() -> None:
    memo = RenderMemo(max_entries=5)
    for n in range(20):
        memo.bytes_for(("d", "2025-01-01", f"p{n}", f"s{n}"), lambda: (b"x", "2025-01-01T12:00:00Z"))
    assert len(memo) == 5 and ("d", "2025-01-01", "p19", "s19") in memo._items


def test_a_projection_larger_than_the_memo_streams_past_it(tmp_path: Path, monkeypatch) -> None:
    package = load_world(_world(tmp_path))
    _MEMO.clear()
    monkeypatch.setattr(_MEMO, "max_entries", 1)
    before = (_MEMO.hits, _MEMO.misses)
    streamed = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "streamed")
    assert (_MEMO.hits, _MEMO.misses) == before and len(_MEMO) == 0
    monkeypatch.undo()
    kept = materialize(package, "r1", "2025-07-01", "S1", tmp_path / "kept")
    assert _MEMO.misses > before[1] and len(_MEMO) > 0
    assert streamed.manifest == kept.manifest
