"""Invariants of the Structure Score: names, order and wrappers change nothing (Hypothesis)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.infoorg.scoring import score_trees

NAMES = st.sampled_from(["a", "b", "c", "d"])


@st.composite
def tree_pairs(draw: st.DrawFn) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    n = draw(st.integers(min_value=1, max_value=14))
    records = [f"R{i}" for i in range(n)]
    path = st.lists(NAMES, max_size=4)
    reference = {r: draw(path) for r in records}
    output = {r: draw(path) for r in records}
    return reference, output


def rename(paths: dict[str, list[str]], seed: int) -> dict[str, list[str]]:
    """Give every folder (identified by its full path) a fresh name, injectively."""
    prefixes = sorted({tuple(p[: k + 1]) for p in paths.values() for k in range(len(p))})
    random.Random(seed).shuffle(prefixes)
    fresh = {prefix: f"folder-{i}" for i, prefix in enumerate(prefixes)}
    return {r: [fresh[tuple(p[: k + 1])] for k in range(len(p))] for r, p in paths.items()}


def shuffled(paths: dict[str, list[str]], seed: int) -> dict[str, list[str]]:
    items = list(paths.items())
    random.Random(seed).shuffle(items)
    return dict(items)


def dump(reference: dict, output: dict) -> dict:
    return score_trees(reference, output).model_dump()


@settings(max_examples=300, deadline=None)
@given(tree_pairs(), st.integers(0, 10**6))
def test_folder_names_change_nothing(pair, seed) -> None:
    reference, output = pair
    expected = dump(reference, output)
    assert dump(rename(reference, seed), output) == expected
    assert dump(reference, rename(output, seed + 1)) == expected


@settings(max_examples=200, deadline=None)
@given(tree_pairs(), st.integers(0, 10**6))
def test_sibling_and_record_order_change_nothing(pair, seed) -> None:
    reference, output = pair
    assert dump(shuffled(reference, seed), shuffled(output, seed + 1)) == dump(reference, output)


@settings(max_examples=200, deadline=None)
@given(tree_pairs(), st.lists(st.sampled_from(["wrap", "inbox", "outer"]), min_size=1, max_size=3))
def test_a_wrapper_shared_by_all_records_changes_nothing(pair, wrapper) -> None:
    reference, output = pair
    expected = dump(reference, output)
    assert dump(reference, {r: wrapper + p for r, p in output.items()}) == expected
    assert dump({r: wrapper + p for r, p in reference.items()}, output) == expected


@settings(max_examples=200, deadline=None)
@given(tree_pairs())
def test_identical_trees_score_one_with_category_none(pair) -> None:
    reference, _ = pair
    score = score_trees(reference, reference)
    assert score.category == "none"
    assert score.exact is True and score.clade_f1 == 1.0 and score.E == 1.0
    assert score.S in (1.0, None)  # None only when the reference resolves no triple
    assert all(c.agreed == c.g == c.m and c.o == c.g for c in score.levels.values())


@settings(max_examples=300, deadline=None)
@given(tree_pairs())
def test_counts_are_consistent_and_scores_bounded(pair) -> None:
    score = score_trees(*pair)
    for counts in score.levels.values():
        assert counts.agreed + counts.conflicting + counts.unresolved == counts.g
        assert 0 <= counts.m <= min(counts.g, counts.o)
    for value in (score.S, score.f1_bal, score.E, score.triplet_f1, score.clade_f1):
        assert value is None or 0.0 <= value <= 1.0
    if score.S is not None:
        assert score.S == score.f1_bal * score.E


def test_flat_and_inbox_outputs_score_zero() -> None:
    reference = {"F1": ["m1", "s"], "F2": ["m1", "s"], "F3": ["m2", "s"], "F4": ["m2", "t"]}
    for output in ({r: ["inbox"] for r in reference}, {r: ["all"] for r in reference}):
        score = score_trees(reference, output)
        assert score.S == 0.0 and score.f1_bal == 0.0 and score.triplet_f1 == 0.0


def test_reference_resolving_nothing_leaves_the_score_undefined() -> None:
    reference = {"F1": ["a"], "F2": ["a"], "F3": ["a"]}
    score = score_trees(reference, {"F1": ["x"], "F2": ["x"], "F3": []})
    assert score.valid and score.S is None and score.f1_bal is None
    assert score.unsupported_refinement == 1
