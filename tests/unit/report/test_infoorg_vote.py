"""Table 4's Vote tree: built from the co-placements a majority of runs agree on, never from the
reference; wrapper folders and folder names change nothing; it does not depend on run order."""

from __future__ import annotations

import itertools

from worldkit.infoorg.scoring import score_trees
from worldkit.report.infoorg_vote import vote_tree

REFERENCE = {"A1": ("p", "x"), "A2": ("p", "x"), "A3": ("p", "y"), "B1": ("q", "z"), "B2": ("q", "z")}


def _groups(tree: dict[str, tuple[str, ...]], depth: int) -> set[frozenset[str]]:
    found: dict[tuple[str, ...], set[str]] = {}
    for record, path in tree.items():
        found.setdefault(path[:depth], set()).add(record)
    return {frozenset(g) for g in found.values()}


def test_two_of_three_runs_outvote_the_third() -> None:
    wrong = {"A1": ("p", "x"), "A2": ("q", "z"), "A3": ("p", "y"), "B1": ("q", "z"), "B2": ("p", "x")}
    wrapped = {record: ("all", *path) for record, path in REFERENCE.items()}  # a wrapper folder changes nothing
    renamed = {record: (path[0].upper() + "1x", path[1] + "-leaf") for record, path in REFERENCE.items()}
    for trees in itertools.permutations([wrong, wrapped, renamed]):
        tree = vote_tree(list(trees), REFERENCE)
        assert _groups(tree, 1) == {frozenset({"A1", "A2", "A3"}), frozenset({"B1", "B2"})}
        assert _groups(tree, 2) == {frozenset({"A1", "A2"}), frozenset({"A3"}), frozenset({"B1", "B2"})}
        assert score_trees(REFERENCE, tree).S == 1.0


def test_without_a_majority_records_stay_apart_and_a_single_leaf_group_is_one_folder() -> None:
    one = {"A1": ("p", "x"), "A2": ("p", "x"), "A3": ("p", "y"), "B1": ("q", "z"), "B2": ("q", "w")}
    two = {"A1": ("p", "x"), "A2": ("p", "y"), "A3": ("p", "y"), "B1": ("q", "z"), "B2": ("r", "z")}
    three = {"A1": ("p", "x"), "A2": ("s", "x"), "A3": ("s", "x"), "B1": ("q", "z"), "B2": ("t", "t")}
    tree = vote_tree([one, two, three], REFERENCE)
    # A1–A2 and A1–A3 share a parent in two runs, A2–A3 in three: one parent group; of the leaf pairs only
    # A2–A3 (runs two and three) has a majority; B1 and B2 share a parent in one run only.
    assert _groups(tree, 1) == {frozenset({"A1", "A2", "A3"}), frozenset({"B1"}), frozenset({"B2"})}
    assert {len(path) for record, path in tree.items() if record.startswith("B")} == {1}  # one leaf group: one folder
    assert tree["A2"] == tree["A3"] != tree["A1"] and tree["A1"][:1] == tree["A2"][:1]


def test_a_record_missing_from_a_run_gets_no_vote_there() -> None:
    partial = {record: path for record, path in REFERENCE.items() if record != "B2"}
    tree = vote_tree([partial, partial, REFERENCE], REFERENCE)
    assert tree["B1"][:1] != tree["B2"][:1]  # only one of three runs placed B2 with B1
    assert set(tree) == set(REFERENCE)
