"""The fast Structure Score equals the brute-force O(n³) definition on many random tree pairs."""

from __future__ import annotations

import random

import pytest

from worldkit.infoorg._oracle import (
    SHAPES,
    brute_force_score,
    perturb,
    random_hierarchy,
)
from worldkit.infoorg.scoring import score_trees

FIELDS = ("S", "f1_bal", "E", "triplet_f1", "clade_f1")
EXACT_FIELDS = ("category", "exact", "unsupported_refinement")


def assert_same_as_oracle(reference: dict, output: dict) -> None:
    fast = score_trees(reference, output)
    slow = brute_force_score(reference, output)
    assert fast.valid
    levels = {depth: counts.model_dump() for depth, counts in fast.levels.items()}
    context = f"reference={reference} output={output}"
    assert levels == slow["levels"], context
    for name in FIELDS:
        got, want = getattr(fast, name), slow[name]
        if want is None:
            assert got is None, (name, context)
        else:
            assert got == pytest.approx(want, abs=1e-12), (name, context)
    for name in EXACT_FIELDS:
        assert getattr(fast, name) == slow[name], (name, context)


def _pairs(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(1, 20)
        records = [f"R{i}" for i in range(n)]
        reference = random_hierarchy(rng, records, rng.choice(("random", "two_level", "chain")))
        if rng.random() < 0.5:
            output = perturb(rng, reference, rng.randint(0, 3))
        else:
            output = random_hierarchy(rng, records, rng.choice(SHAPES))
        yield reference, output


def test_fast_equals_oracle_on_1200_random_pairs() -> None:
    checked = 0
    for reference, output in _pairs(1200, seed=20261110):
        assert_same_as_oracle(reference, output)
        checked += 1
    assert checked == 1200


@pytest.mark.parametrize("ref_shape", SHAPES)
@pytest.mark.parametrize("out_shape", SHAPES)
def test_degenerate_shapes_against_oracle(ref_shape: str, out_shape: str) -> None:
    rng = random.Random(f"{ref_shape}/{out_shape}")
    for n in (1, 2, 3, 4, 7, 12):
        records = [f"R{i}" for i in range(n)]
        reference = random_hierarchy(rng, records, ref_shape)
        output = random_hierarchy(rng, records, out_shape)
        assert_same_as_oracle(reference, output)
        assert_same_as_oracle(output, reference)


def test_records_in_inner_folders_and_deep_chains() -> None:
    reference = {
        "a": ["p"], "b": ["p", "x"], "c": ["p", "x"], "d": ["p", "y", "z", "w"],
        "e": ["p", "y", "z", "w"], "f": ["q"], "g": [],
    }  # fmt: skip
    output = {
        "a": ["p", "x"], "b": ["p", "x"], "c": ["p"], "d": ["r", "s", "t"],
        "e": ["r", "s"], "f": [], "g": ["q"],
    }  # fmt: skip
    assert_same_as_oracle(reference, output)
    assert_same_as_oracle(output, reference)


def test_oracle_counts_by_hand() -> None:
    """Three records: the oracle itself against a count done on paper."""
    slow = brute_force_score({"a": ["x"], "b": ["x"], "c": ["y"]}, {"a": [], "b": [], "c": []})
    assert slow["levels"] == {
        0: dict(g=1, o=0, m=0, agreed=0, conflicting=0, unresolved=1)
    }
    assert slow["f1_bal"] == 0.0
