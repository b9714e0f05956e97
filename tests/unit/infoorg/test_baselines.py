"""Text-only baselines (Appendix F): the trees they produce, how they are applied, their scores."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.fixtures.jira_export import write_jira_export
from worldkit.infoorg.baselines import (
    RANDOM_SEEDS,
    average_linkage,
    baseline_trees,
    cosine_distances,
    fixed_cut_tree,
    flat_tree,
    move_on_disk,
    move_with_organizer,
    random_shape_trees,
    run_baselines,
    run_task,
    silhouette_cut,
    two_level_tree,
)
from worldkit.infoorg.packets import build_packets, write_packets
from worldkit.infoorg.reference import load_reference
from worldkit.infoorg.scoring import score_trees
from worldkit.infoorg.tree import folder_name_problem
from worldkit.infoorg.validity import check_workspace

TOPICS = {
    ("fruit", "red"): "apple cherry strawberry raspberry",
    ("fruit", "yellow"): "banana lemon pineapple mango",
    ("fruit", "green"): "lime kiwi grape pear",
    ("tools", "cut"): "saw knife chisel scissors",
    ("tools", "fix"): "hammer wrench screwdriver pliers",
    ("tools", "measure"): "ruler caliper tape level",
}


def corpus() -> tuple[list[str], list[str], dict[str, tuple[str, ...]]]:
    """36 records in 2 x 3 obvious groups: six records per leaf group, shared parent words."""
    ids, texts, reference = [], [], {}
    for (parent, leaf), words in TOPICS.items():
        vocab = words.split()
        for i in range(6):
            rid = f"F{len(ids) + 1:03d}"
            ids.append(rid)
            texts.append(f"{parent} kit: {vocab[i % 4]} and {vocab[(i + 1) % 4]} {leaf} {parent}")
            reference[rid] = (parent, leaf)
    return ids, texts, reference


def assert_valid_tree(tree: dict[str, tuple[str, ...]], ids: list[str]) -> None:
    assert sorted(tree) == sorted(ids)
    assert all(folder_name_problem(name) is None for path in tree.values() for name in path)


def test_cosine_distances() -> None:
    d = cosine_distances(["apple pie", "apple pie", "zebra", "..."])
    assert d.shape == (4, 4) and np.allclose(d, d.T) and np.allclose(np.diag(d), 0)
    assert d[0, 1] == pytest.approx(0) and d[0, 2] == pytest.approx(1) and d[3, 0] == 1
    assert np.all(cosine_distances(["!", "?"]) == np.array([[0, 1], [1, 0]]))


def test_stop_words_are_removed_before_tf_idf_unless_asked_not_to() -> None:
    texts = ["the cat sat on the mat", "the dog ran to the door"]
    assert cosine_distances(texts)[0, 1] == pytest.approx(1)  # nothing but stop words shared
    assert cosine_distances(texts, stop_words=None)[0, 1] < 1


def test_flat_and_fixed_cuts() -> None:
    ids, texts, reference = corpus()
    linkage = average_linkage(cosine_distances(texts))
    assert set(flat_tree(ids).values()) == {("records",)}
    assert score_trees(reference, flat_tree(ids)).S == 0
    fixed = fixed_cut_tree(ids, linkage)
    assert_valid_tree(fixed, ids)
    assert all(len(path) == 2 for path in fixed.values())


def test_two_level_tree_splits_leaf_groups_that_straddle_parents() -> None:
    tree = two_level_tree(["a", "b", "c"], [1, 1, 2], [5, 5, 5])
    assert tree["a"] == tree["b"] != tree["c"]
    assert tree["a"][0] != tree["c"][0]


def test_silhouette_cut_respects_the_bounds_and_recovers_clear_groups() -> None:
    ids, texts, reference = corpus()
    distances = cosine_distances(texts)
    tree, cut = silhouette_cut(ids, average_linkage(distances), distances)
    assert_valid_tree(tree, ids)
    assert 2 <= cut.parents <= cut.max_parents == len(ids) // 6
    assert cut.leaves >= 2 * cut.parents
    assert cut.leaves == len(set(tree.values()))
    assert score_trees(reference, tree).S > 0.5


def test_silhouette_on_too_few_records_still_files_everything() -> None:
    ids = ["F001", "F002", "F003", "F004"]
    texts = ["red apple", "red cherry", "blue sea", "blue sky"]
    distances = cosine_distances(texts)
    tree, cut = silhouette_cut(ids, average_linkage(distances), distances)
    assert_valid_tree(tree, ids)
    assert cut.parents == 1


def test_random_shapes_keep_the_shape_and_are_seeded() -> None:
    ids, texts, _ = corpus()
    distances = cosine_distances(texts)
    shape, _ = silhouette_cut(ids, average_linkage(distances), distances)
    trees = random_shape_trees(ids, shape, "task-1")
    assert len(trees) == RANDOM_SEEDS
    for tree in trees:
        assert_valid_tree(tree, ids)
        assert Counter(tree.values()) == Counter(shape.values())
    assert trees == random_shape_trees(ids, shape, "task-1")
    assert trees != random_shape_trees(ids, shape, "task-2")
    assert len({tuple(sorted(t.items())) for t in trees}) == RANDOM_SEEDS


@pytest.fixture(scope="module")
def thread_packets(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("baselines")
    export = write_jira_export(root / "export")
    write_packets(build_packets("thread", export, 3), root / "packets")
    return sorted((root / "packets").iterdir())


def test_organizer_and_disk_moves_give_the_same_workspace(thread_packets, tmp_path: Path) -> None:
    import shutil

    trees, _ = baseline_trees(thread_packets[0])
    expected = load_reference(thread_packets[0]).hashes()
    results = []
    for name, apply in (("disk", move_on_disk), ("organizer", move_with_organizer)):
        workspace = tmp_path / name
        shutil.copytree(thread_packets[0] / "candidate" / "inbox", workspace / "inbox")
        apply(workspace, trees["silhouette"])
        check = check_workspace(workspace, expected)
        assert check.problems == []
        results.append(check.paths)
    assert results[0] == results[1] == trees["silhouette"]


def test_run_task_scores_every_baseline(thread_packets) -> None:
    result = run_task(thread_packets[0])
    assert set(result.scores) == {"flat", "fixed", "random", "silhouette"}
    assert result.scores["flat"] == 0
    assert len(result.random_scores) == RANDOM_SEEDS
    assert result.scores["random"] == pytest.approx(sum(result.random_scores) / RANDOM_SEEDS)
    assert all(0 <= s <= 1 for s in result.scores.values())
    assert result.silhouette.max_parents == result.record_count // 6


def test_report_summary(thread_packets) -> None:
    seen: list[str] = []
    report = run_baselines("thread", thread_packets, progress=lambda what, i, n: seen.append(what))
    summary = report.summary()
    assert summary["tasks"] == 3 and seen == ["baselines"] * 3
    assert set(summary["mean_S"]) == {"flat", "fixed", "random", "silhouette"}  # type: ignore[arg-type]
    assert summary["paper_S"] == {"flat": 0.0, "fixed": 16.6, "random": 19.6, "silhouette": 34.0}
    assert [t.task_id for t in report.tasks] == ["thread-001", "thread-002", "thread-003"]


def test_baselines_never_read_the_verifier(thread_packets, tmp_path: Path) -> None:
    import shutil

    for side in ("candidate", "packet.json"):
        src = thread_packets[0] / side
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / side)
    trees, _ = baseline_trees(tmp_path)  # no verifier folder at all
    assert trees.keys() == {"flat", "fixed", "random", "silhouette"}
    for a, b in itertools.pairwise(trees["random"]):  # type: ignore[arg-type]
        assert a.keys() == b.keys()


def test_scoring_trees_directly_equals_scoring_the_organized_workspace(thread_packets) -> None:
    direct = run_task(thread_packets[1])
    applied = run_task(thread_packets[1], apply=move_with_organizer)
    assert direct == applied


def test_lambda_changes_only_the_economy(thread_packets) -> None:
    scores = {lam: run_task(thread_packets[0], economy_lambda=lam) for lam in (0.0, 0.2, 0.4)}
    trees, _ = baseline_trees(thread_packets[0])
    reference = load_reference(thread_packets[0]).paths()
    f1 = score_trees(reference, trees["silhouette"]).f1_bal
    assert scores[0.0].scores["silhouette"] == pytest.approx(f1)  # E = 1 at λ = 0
    assert scores[0.0].scores["silhouette"] >= scores[0.2].scores["silhouette"] >= \
        scores[0.4].scores["silhouette"]
    assert {lam: s.scores["flat"] for lam, s in scores.items()} == {0.0: 0, 0.2: 0, 0.4: 0}
    report = run_baselines("thread", thread_packets, economy_lambda=0.4)
    assert report.summary()["paper_S"] == {"flat": 0.0, "silhouette": 30.8}
    assert report.economy_lambda == 0.4


def test_counts_beside_appendix_f(thread_packets) -> None:
    report = run_baselines("thread", thread_packets)
    counts = report.counts()
    assert counts["silhouette_beats_fixed"] == sum(
        t.scores["silhouette"] > t.scores["fixed"] for t in report.tasks)
    assert counts["reference_parents_mean"] == round(
        sum(t.reference_parents for t in report.tasks) / len(report.tasks), 2)
    for task in report.tasks:
        assert task.parents["flat"] == 1
        assert task.parents["silhouette"] == task.silhouette.parents
        assert task.parents["random"] == task.parents["silhouette"]  # same shape
    assert report.summary()["paper_counts"]["silhouette_at_max_parents"] == 35
