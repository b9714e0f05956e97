"""Task selection: complete bundles in a fixed order (Recap/Thread) and seeded Design selection."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.infoorg.sources import select_tasks
from worldkit.infoorg.sources.records import NotEnoughTasks, SourceRecord, SourceUnit
from worldkit.infoorg.sources.selection import (
    MAX_OVERLAP,
    bundle_tasks,
    derived_seed,
    design_tasks,
    overlap,
)


def unit(name: str, group: str, size: int, words: str = "") -> SourceUnit:
    return SourceUnit(
        unit_id=name,
        group=group,
        records=tuple(
            SourceRecord(text=f"{words} {name} record {i}".strip(), path=(group, name),
                         source=f"{name}#{i}")
            for i in range(size)
        ),
    )


def oracle_bundles(units: list[SourceUnit], tasks: int) -> list[tuple[str, ...]]:
    """Brute force over every window: pass 1 lays bundles end to end (the next search starts
    after the last one taken), pass 2 takes every remaining window by start then length."""
    chosen: list[tuple[tuple[str, ...], frozenset[str]]] = []

    def ok(window: list[SourceUnit]) -> frozenset[str] | None:
        records = [r.source for u in window for r in u.records]
        good = (40 <= len(records) <= 60 and len({u.group for u in window}) >= 2
                and len(set(records)) == len(records)
                and all(overlap(frozenset(records), other) <= MAX_OVERLAP for _, other in chosen))
        return frozenset(records) if good else None

    resume = 0
    for start, end in ((s, e) for s in range(len(units)) for e in range(s + 1, len(units) + 1)):
        if start < resume:
            continue
        records = ok(units[start:end])
        if records is not None:
            chosen.append((tuple(u.unit_id for u in units[start:end]), records))
            resume = end
            if len(chosen) == tasks:
                return [ids for ids, _ in chosen]
    for start, end in ((s, e) for s in range(len(units)) for e in range(s + 1, len(units) + 1)):
        records = ok(units[start:end])
        if records is not None:
            chosen.append((tuple(u.unit_id for u in units[start:end]), records))
            if len(chosen) == tasks:
                break
    return [ids for ids, _ in chosen]


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(1, 30), st.integers(0, 3)), min_size=2, max_size=30))
def test_bundles_are_the_first_eligible_windows(sizes: list[tuple[int, int]]) -> None:
    units = [unit(f"u{i:02d}", f"g{group}", size) for i, (size, group) in enumerate(sizes)]
    expected = oracle_bundles(units, 1000)
    if not expected:
        with pytest.raises(NotEnoughTasks):
            bundle_tasks("recap", units, 1)
        return
    chosen = bundle_tasks("recap", units, len(expected))
    assert [t.unit_ids for t in chosen] == expected
    assert [t.task_id for t in chosen] == [f"recap-{i:03d}" for i in range(1, len(chosen) + 1)]
    for task in chosen:
        assert 40 <= len(task.records) <= 60
        assert len({u.group for u in task.units}) >= 2
    for a, b in itertools.combinations(chosen, 2):
        sa, sb = ({r.source for r in t.records} for t in (a, b))
        assert len(sa & sb) / min(len(sa), len(sb)) <= 0.5


def test_not_enough_bundles_says_how_many_there_are() -> None:
    units = [unit("a", "g1", 20), unit("b", "g2", 25)]
    with pytest.raises(NotEnoughTasks, match="yields only 1 eligible bundles.*--tasks 1 or fewer"):
        bundle_tasks("thread", units, 2)


VOCAB = {
    "sig-a": "pod node kubelet container runtime", "sig-b": "pod node kubelet cgroup memory",
    "sig-c": "pod node kubelet container memory", "sig-d": "pod kubelet runtime cgroup node",
    "sig-w": "zebra quartz violin", "sig-x": "harbor lantern meadow",
    "sig-y": "copper tundra sonnet", "sig-z": "orchid glacier pixel",
}


def design_units(keps_per_sig: int = 8) -> list[SourceUnit]:
    return [
        unit(f"{sig}/{n:03d}-kep", sig, 3, words)
        for sig, words in VOCAB.items()
        for n in range(keps_per_sig)
    ]


def test_design_tasks_shape_reuse_and_overlap_limits() -> None:
    chosen = design_tasks(design_units(), 12, seed=7)
    uses: Counter[str] = Counter()
    for task in chosen:
        assert len(task.units) == 12 and len(task.records) == 36
        sigs = Counter(u.group for u in task.units)
        assert len(sigs) == 4 and set(sigs.values()) == {3}
        uses.update(task.unit_ids)
    assert max(uses.values()) <= 3
    for a, b in itertools.combinations(chosen, 2):
        assert len(set(a.unit_ids) & set(b.unit_ids)) <= 6


def test_design_prefers_lexically_similar_sigs(monkeypatch: pytest.MonkeyPatch) -> None:
    from worldkit.infoorg.sources import selection

    similar = {"sig-a", "sig-b", "sig-c", "sig-d"}
    # With the default 10 candidates per task the preference is mild: similar owners are
    # chosen more often than chance (half of all slots) would give.
    chosen = design_tasks(design_units(), 10, seed=0)
    slots = Counter(u.group in similar for t in chosen for u in t.units)
    assert slots[True] > slots[False]
    # With many candidates the most similar set always wins the first task.
    monkeypatch.setattr(selection, "DESIGN_CANDIDATES", 200)
    first = design_tasks(design_units(), 1, seed=0)[0]
    assert {u.group for u in first.units} == similar


def test_design_selection_is_seeded_and_independent_of_input_order() -> None:
    units = design_units()
    shuffled = list(units)
    random.Random(3).shuffle(shuffled)
    assert design_tasks(units, 5, seed=1) == design_tasks(shuffled, 5, seed=1)
    assert design_tasks(units, 5, seed=1) != design_tasks(units, 5, seed=2)
    assert design_tasks(units, 3, seed=1) == design_tasks(units, 5, seed=1)[:3]


def test_design_runs_out_with_a_clear_message() -> None:
    with pytest.raises(NotEnoughTasks, match="yields only .* tasks of 4 SIGs x 3 KEPs"):
        design_tasks(design_units(keps_per_sig=3), 40, seed=0)


def test_derived_seed_is_stable() -> None:
    assert derived_seed("design", 0, 1) == derived_seed("design", 0, 1)
    assert derived_seed("design", 0, 1) != derived_seed("design", 0, 2)
    assert derived_seed("a", "b") == 0xF04CDCED9736A69D  # sha256-based: same on every platform


def test_select_tasks_refuses_a_missing_source(tmp_path: Path) -> None:
    from worldkit.infoorg.sources import InvalidSource

    with pytest.raises(InvalidSource, match="no such file or directory"):
        select_tasks("recap", tmp_path / "nope", 1, 0)
