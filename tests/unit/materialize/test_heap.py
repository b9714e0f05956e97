"""`heap_frozen`: while a projection is planned and written, what was alive before (the loaded world)
is out of the collector's sight; after it, nothing stays frozen, and a process that froze objects
itself (the CLI's start-up) keeps exactly its own frozen set."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from worldkit._heap import (
    anything_frozen,
    collector_paused,
    freeze_process,
    heap_frozen,
    thaw_all,
)
from worldkit.materialize import materialize, write
from worldkit.world.synthetic import write_synthetic_world


@pytest.fixture
def thawed() -> Iterator[None]:
    """A heap with nothing frozen (restored as it was after the test)."""
    frozen = anything_frozen()
    thaw_all()
    yield
    thaw_all()
    if frozen:
        freeze_process()


def test_what_was_alive_is_frozen_in_the_block_and_thawed_after(thawed: None) -> None:
    before = [object()]  # a tracked object alive before the block
    with heap_frozen():
        assert gc.get_freeze_count() > 0
        inside = gc.get_freeze_count()
        after_start = [object()]
        assert gc.get_freeze_count() == inside  # what the block allocates stays in sight
    assert gc.get_freeze_count() == 0
    del before, after_start


def test_a_process_that_froze_objects_keeps_its_own_frozen_set(thawed: None) -> None:
    gc.freeze()
    own = gc.get_freeze_count()
    with heap_frozen():
        assert gc.get_freeze_count() == own
    assert gc.get_freeze_count() == own


def test_nothing_is_frozen_with_the_collector_off(thawed: None) -> None:
    with collector_paused():
        assert not gc.isenabled()
        with heap_frozen():
            assert gc.get_freeze_count() == 0
    assert gc.isenabled()


def test_materialize_plans_and_writes_with_the_world_frozen(
    thawed: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = write_synthetic_world(tmp_path / "w", 50)
    seen = []
    real_plan, real_write = write.plan_projection, write.write_projection
    monkeypatch.setattr(write, "plan_projection", lambda *a, **k: (seen.append(gc.get_freeze_count()), real_plan(*a, **k))[1])
    monkeypatch.setattr(write, "write_projection", lambda *a, **k: (seen.append(gc.get_freeze_count()), real_write(*a, **k))[1])
    materialize(world, "r1", "2026-01-01", "EMP-1", tmp_path / "out")
    assert len(seen) == 2 and all(count > 0 for count in seen)
    assert gc.get_freeze_count() == 0


def test_a_process_frozen_set_is_known_without_walking_it(thawed: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """`freeze_process` records its freeze, so `heap_frozen` leaves that set alone without asking
    `gc.get_freeze_count` (a walk of every frozen object); `thaw_all` forgets it."""
    freeze_process()
    own = gc.get_freeze_count()
    walks = []
    monkeypatch.setattr(gc, "get_freeze_count", lambda real=gc.get_freeze_count: (walks.append(1), real())[1])
    assert anything_frozen()
    with heap_frozen():
        pass
    assert walks == []
    monkeypatch.undo()
    assert gc.get_freeze_count() == own
    thaw_all()
    assert not anything_frozen() and gc.get_freeze_count() == 0


def test_a_freeze_by_other_code_is_found_and_kept(thawed: None) -> None:
    gc.freeze()  # not through worldkit: only the walk finds it
    assert anything_frozen()
    own = gc.get_freeze_count()
    with heap_frozen():
        pass
    assert gc.get_freeze_count() == own
