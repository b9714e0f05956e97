"""Text-only baselines of InfoOrgBench (Appendix F), applied to staged workspaces and scored.

Each packet's records are represented by within-packet TF-IDF vectors over word unigrams and
bigrams (scikit-learn's `TfidfVectorizer`, English stop words removed — see below); one
average-linkage dendrogram over cosine distances yields every structured baseline:

- flat: all records in one folder (resolves no triple, S = 0);
- fixed: parent and leaf groups cut at distances 0.9 and 0.7;
- silhouette: the parent and leaf group counts that maximize the mean silhouette of the two cuts,
  with at least twice as many leaf groups as parent groups. The paper does not state the upper
  bounds; here leaf groups <= n/3 (three records a group on average), so parent groups <= n/6
  — which gives the paper's "largest permitted" six parent groups on 36-record Design packets;
- random: the silhouette hierarchy with records assigned to its positions at random (5 seeds).

Preprocessing. Appendix F names the representation but not its preprocessing. Two choices are
made here, each because it reproduces the paper's own description of the cuts:

- English stop words removed (`STOP_WORDS`). With scikit-learn's default (none) the silhouette
  cut takes the largest permitted parent count in 19 of 50 Recap tasks (5.56 groups on average)
  and fixed cuts score 16.0 on Recap, against the paper's 36 tasks, 7.12 groups and 9.4.
- Sublinear term frequency (1 + log tf). Without it, Design fixed cuts score 55.2 and the
  silhouette cut beats them on 46 of 50 tasks; with it 48.4 and 50 of 50, and the silhouette
  cut takes 6 parent groups in 47 tasks (5.94 on average) — the paper's 45.9, 50, 47 and 5.94.
  Recap sentences rarely repeat a word, so Recap barely moves (silhouette 24.6 -> 24.7).

Baselines never see the reference: their trees come from the inbox text alone. Scoring does.
By default (`run_task(apply=None)`) each tree is scored directly with `score_trees` at the given
λ (`economy_lambda`, the paper's 0.2; Appendix F also reports 0 and 0.4); baseline trees keep and
file every record by construction, so this equals scoring a workspace organized by the tree. With
an injected `TreeApplier` — the organizer's `move_files` (`worldkit.infoorg.organizer`), plain
moves on disk, or (from the CLI) the organizer tools over an in-memory MCP client — each tree is
carried out on a fresh copy of the inbox and the captured workspace is scored like any agent's
output; a test checks the two paths agree. Per task the report keeps every baseline's S, its
parent-group count, the reference's, and whether any tree recovers the reference exactly; the
summary prints Appendix F's counts (silhouette wins over fixed cuts and over the random mean,
tasks at the largest permitted parent count, mean parent groups) beside the paper's.
The same baselines as agents working through the organizer tools (`worldkit infoorg run`) are
`worldkit.agents.infoorg.BaselineAgent`.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict

from worldkit.infoorg.packets import DEFAULT_SEED, build_packets, read_packet_info, write_packets
from worldkit.infoorg.sources import Family
from worldkit.infoorg.scoring import ECONOMY_LAMBDA
from worldkit.infoorg.sources.selection import derived_seed

Tree = dict[str, tuple[str, ...]]
"""record id -> folders above `<id>.txt`."""

BaselineName = Literal["flat", "fixed", "random", "silhouette"]
BASELINES: tuple[BaselineName, ...] = ("flat", "fixed", "random", "silhouette")
FIXED_PARENT_CUT, FIXED_LEAF_CUT = 0.9, 0.7
RANDOM_SEEDS = 5
StopWords = Literal["english"] | None
STOP_WORDS: StopWords = "english"
"""Stop-word list removed before TF-IDF (see the module docstring); None keeps every word."""

PAPER_TABLE_12: dict[str, dict[BaselineName, float]] = {
    "recap": {"flat": 0.0, "fixed": 9.4, "random": 18.5, "silhouette": 26.9},
    "thread": {"flat": 0.0, "fixed": 16.6, "random": 19.6, "silhouette": 34.0},
    "design": {"flat": 0.0, "fixed": 45.9, "random": 17.0, "silhouette": 71.0},
}
"""The paper's Table 12 (Structure Score, 0-100) for comparison."""


def cosine_distances(texts: Sequence[str], stop_words: StopWords = STOP_WORDS) -> np.ndarray:
    """Pairwise cosine distances of within-packet TF-IDF vectors (word uni- and bigrams,
    sublinear tf, `stop_words` removed; see the module docstring).

    A record with no token is at distance 1 from every other record.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), stop_words=stop_words, sublinear_tf=True)
        matrix = vectorizer.fit_transform(list(texts))
        similarity = (matrix @ matrix.T).toarray()
    except ValueError:  # no token in any record
        similarity = np.zeros((len(texts), len(texts)))
    distances = np.clip(1.0 - similarity, 0.0, 1.0)
    distances = (distances + distances.T) / 2
    np.fill_diagonal(distances, 0.0)
    return distances


def average_linkage(distances: np.ndarray) -> np.ndarray:
    """The average-linkage dendrogram (scipy linkage matrix) over a square distance matrix."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    return linkage(squareform(distances, checks=False), method="average")


def _labels(linkage_matrix: np.ndarray, value: float, criterion: str) -> list[int]:
    from scipy.cluster.hierarchy import fcluster

    return [int(label) for label in fcluster(linkage_matrix, t=value, criterion=criterion)]


def _renumber(labels: Sequence[int]) -> list[int]:
    """Labels renumbered 1.. in order of first appearance (stable folder names)."""
    seen: dict[int, int] = {}
    return [seen.setdefault(label, len(seen) + 1) for label in labels]


def two_level_tree(ids: Sequence[str], parents: Sequence[int], leaves: Sequence[int]) -> Tree:
    """A tree from parent and leaf labels; a leaf group is split if it straddles parents."""
    parent_no = _renumber(parents)
    leaf_no = _renumber([f"{p}:{leaf}" for p, leaf in zip(parent_no, leaves, strict=True)])  # type: ignore[misc]
    return {
        record: (f"group-{p:02d}", f"subgroup-{q:02d}")
        for record, p, q in zip(ids, parent_no, leaf_no, strict=True)
    }


def flat_tree(ids: Sequence[str]) -> Tree:
    return {record: ("records",) for record in ids}


def fixed_cut_tree(ids: Sequence[str], linkage_matrix: np.ndarray) -> Tree:
    parents = _labels(linkage_matrix, FIXED_PARENT_CUT, "distance")
    leaves = _labels(linkage_matrix, FIXED_LEAF_CUT, "distance")
    return two_level_tree(ids, parents, leaves)


class SilhouetteCut(BaseModel):
    """The chosen silhouette cut of one packet."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parents: int
    """Number of parent groups."""
    leaves: int
    """Number of leaf groups."""
    max_parents: int
    """Largest permitted number of parent groups (n // 6)."""
    silhouette: float
    """Mean of the two cuts' silhouettes."""


def silhouette_cut(
    ids: Sequence[str], linkage_matrix: np.ndarray, distances: np.ndarray
) -> tuple[Tree, SilhouetteCut]:
    """Parent and leaf counts maximizing the mean silhouette, leaf groups >= 2 x parent groups."""
    from sklearn.metrics import silhouette_score

    n = len(ids)
    cache: dict[int, tuple[list[int], float | None]] = {}

    def cut(k: int) -> tuple[list[int], float | None]:
        if k not in cache:
            labels = _labels(linkage_matrix, k, "maxclust")
            groups = len(set(labels))
            score = (
                float(silhouette_score(distances, labels, metric="precomputed"))
                if 2 <= groups <= n - 1
                else None
            )
            cache[k] = (labels, score)
        return cache[k]

    max_parents, max_leaves = n // 6, n // 3
    best: tuple[float, int, int] | None = None
    for parents in range(2, max_parents + 1):
        for leaves in range(2 * parents, max_leaves + 1):
            (parent_labels, parent_score), (leaf_labels, leaf_score) = cut(parents), cut(leaves)
            if parent_score is None or leaf_score is None:
                continue
            if len(set(leaf_labels)) < 2 * len(set(parent_labels)):
                continue
            mean = (parent_score + leaf_score) / 2
            if best is None or mean > best[0]:
                best = (mean, parents, leaves)
    if best is None:  # too few records for two permitted levels: one parent, best leaf cut
        scored = [(s, k) for k in range(2, max(2, n - 1) + 1) if (s := cut(k)[1]) is not None]
        mean, leaves = max(scored) if scored else (0.0, 1)
        best = (mean, 1, leaves)
    mean, parents, leaves = best
    parent_labels = cut(parents)[0] if parents > 1 else [1] * n
    tree = two_level_tree(ids, parent_labels, cut(leaves)[0])
    chosen = SilhouetteCut(
        parents=len(set(parent_labels)),
        leaves=len({path[1] for path in tree.values()}),
        max_parents=max_parents,
        silhouette=mean,
    )
    return tree, chosen


def random_shape_trees(ids: Sequence[str], shape: Tree, task: str) -> list[Tree]:
    """`RANDOM_SEEDS` trees with `shape`'s positions filled by randomly permuted records."""
    slots = [shape[record] for record in ids]
    trees = []
    for seed in range(RANDOM_SEEDS):
        shuffled = list(ids)
        random.Random(derived_seed("random-shape", task, seed)).shuffle(shuffled)
        trees.append(dict(zip(shuffled, slots, strict=True)))
    return trees


class TreeApplier(Protocol):
    """Carries out a tree on a workspace whose records all start in `inbox/`."""

    def __call__(self, workspace: Path, tree: Mapping[str, Sequence[str]]) -> None: ...


def destinations(tree: Mapping[str, Sequence[str]]) -> list[tuple[tuple[str, ...], list[str]]]:
    """The tree as `move_files` calls: (destination folders, sorted ids), by destination."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for record, folders in sorted(tree.items()):
        groups.setdefault(tuple(folders), []).append(record)
    return sorted(groups.items())


def move_with_organizer(workspace: Path, tree: Mapping[str, Sequence[str]]) -> None:
    """Carry out the tree with the organizer's `move_files`, one call per destination folder."""
    from worldkit.infoorg.organizer import Organizer

    organizer = Organizer(workspace)
    for destination, ids in destinations(tree):
        organizer.move_files(ids, list(destination))


def move_on_disk(workspace: Path, tree: Mapping[str, Sequence[str]]) -> None:
    """Move each `inbox/<id>.txt` to `<folders>/<id>.txt` with `os.replace` (bytes untouched)."""
    for record, folders in sorted(tree.items()):
        target = workspace.joinpath(*folders)
        target.mkdir(parents=True, exist_ok=True)
        (workspace / "inbox" / f"{record}.txt").replace(target / f"{record}.txt")


class TaskBaselines(BaseModel):
    """Structure Scores (0-1) of every baseline on one packet."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    """The packet's task id."""
    record_count: int
    """Number of records."""
    scores: dict[BaselineName, float]
    """Baseline -> S (random: mean over its seeds)."""
    random_scores: tuple[float, ...]
    """S of each random-shape seed."""
    parents: dict[BaselineName, int]
    """Baseline -> number of top-level (parent) groups in its tree."""
    reference_parents: int
    """Number of parent groups in the reference."""
    exact: dict[BaselineName, bool]
    """Baseline -> whether its tree recovers the reference exactly (random: any seed)."""
    silhouette: SilhouetteCut
    """The silhouette cut chosen for this packet."""


PAPER_APPENDIX_F: dict[str, dict[str, float]] = {
    "recap": {"silhouette_beats_fixed": 50, "silhouette_beats_random": 48,
              "silhouette_at_max_parents": 36, "silhouette_parents_mean": 7.12,
              "reference_parents_mean": 2.68, "silhouette_S_lambda_0": 28.7,
              "silhouette_S_lambda_0.4": 25.1, "exact_recoveries": 0},
    "thread": {"silhouette_beats_fixed": 50, "silhouette_beats_random": 50,
               "silhouette_at_max_parents": 35, "silhouette_parents_mean": 7.06,
               "reference_parents_mean": 2.62, "silhouette_S_lambda_0": 37.2,
               "silhouette_S_lambda_0.4": 30.8, "exact_recoveries": 0},
    "design": {"silhouette_beats_fixed": 50, "silhouette_beats_random": 50,
               "silhouette_at_max_parents": 47, "silhouette_parents_mean": 5.94,
               "reference_parents_mean": 4.00, "silhouette_S_lambda_0": 73.9,
               "silhouette_S_lambda_0.4": 68.1, "exact_recoveries": 0},
}
"""Appendix F's counts over 50 tasks per family (wins, parent groups, λ variants) for comparison."""


def paper_scores(family: str, economy_lambda: float) -> dict[str, float]:
    """The paper's mean S (0-100) per baseline at this λ: Table 12 at 0.2, the silhouette
    figures of Appendix F at 0 and 0.4 (flat is 0 at any λ), nothing at other values."""
    if economy_lambda == ECONOMY_LAMBDA:
        return dict(PAPER_TABLE_12.get(family, {}))
    key = {0.0: "silhouette_S_lambda_0", 0.4: "silhouette_S_lambda_0.4"}.get(economy_lambda)
    appendix = PAPER_APPENDIX_F.get(family, {})
    if key is None or key not in appendix:
        return {}
    return {"flat": 0.0, "silhouette": appendix[key]}


class BaselineReport(BaseModel):
    """Baselines over a family's packets: per task and mean S (0-1)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    family: str
    """Task family."""
    tasks: list[TaskBaselines]
    """Per-packet results, in task-id order."""
    stop_words: StopWords = STOP_WORDS
    """The stop-word list removed before TF-IDF (None: every word kept)."""
    economy_lambda: float = ECONOMY_LAMBDA
    """λ of the folder economy used for every score."""

    def mean(self, name: BaselineName) -> float:
        return sum(task.scores[name] for task in self.tasks) / len(self.tasks)

    def counts(self) -> dict[str, float]:
        """Appendix F's diagnostics: wins of the silhouette cut, parent groups, exact recoveries."""
        cuts = [task.silhouette for task in self.tasks]
        n = len(self.tasks)
        return {
            "silhouette_beats_fixed": sum(
                t.scores["silhouette"] > t.scores["fixed"] for t in self.tasks
            ),
            "silhouette_beats_random": sum(
                t.scores["silhouette"] > t.scores["random"] for t in self.tasks
            ),
            "silhouette_at_max_parents": sum(c.parents == c.max_parents for c in cuts),
            "silhouette_parents_mean": round(sum(c.parents for c in cuts) / n, 2),
            "fixed_parents_mean": round(sum(t.parents["fixed"] for t in self.tasks) / n, 2),
            "reference_parents_mean": round(sum(t.reference_parents for t in self.tasks) / n, 2),
            "exact_recoveries": sum(any(t.exact.values()) for t in self.tasks),
        }

    def summary(self) -> dict[str, object]:
        """Mean S per baseline (0-100) and Appendix F's counts, each beside the paper's."""
        return {
            "family": self.family,
            "tasks": len(self.tasks),
            "stop_words": self.stop_words,
            "lambda": self.economy_lambda,
            "mean_S": {name: round(100 * self.mean(name), 1) for name in BASELINES},
            "paper_S": paper_scores(self.family, self.economy_lambda),
            "counts": self.counts(),
            "paper_counts": {
                key: value
                for key, value in PAPER_APPENDIX_F.get(self.family, {}).items()
                if not key.startswith("silhouette_S_")
            },
        }


ScoreWorkspace = Callable[[Path, Path], float]
"""(packet dir, workspace) -> S on the 0-1 scale."""


def _parent_count(tree: Tree) -> int:
    return len({path[0] if path else "" for path in tree.values()})


def trees_from_texts(
    ids: Sequence[str], texts: Sequence[str], task: str, stop_words: StopWords = STOP_WORDS
) -> tuple[dict[str, Tree | list[Tree]], SilhouetteCut]:
    """Every baseline's tree for records `ids` with `texts`; `task` seeds the random shapes.

    One TF-IDF matrix and one average-linkage dendrogram per packet; the fixed cuts and the
    whole silhouette search cut that same dendrogram.
    """
    distances = cosine_distances(texts, stop_words)
    linkage_matrix = average_linkage(distances)
    shape, cut = silhouette_cut(ids, linkage_matrix, distances)
    trees: dict[str, Tree | list[Tree]] = {
        "flat": flat_tree(ids),
        "fixed": fixed_cut_tree(ids, linkage_matrix),
        "silhouette": shape,
        "random": random_shape_trees(ids, shape, task),
    }
    return trees, cut


def baseline_trees(
    packet_dir: Path, stop_words: StopWords = STOP_WORDS
) -> tuple[dict[str, Tree | list[Tree]], SilhouetteCut]:
    """Every baseline's tree for a packet, from the inbox text only."""
    inbox = packet_dir / "candidate" / "inbox"
    files = sorted(inbox.glob("*.txt"))
    ids = [path.stem for path in files]
    texts = [path.read_bytes().decode("utf-8") for path in files]
    return trees_from_texts(ids, texts, read_packet_info(packet_dir).task_id, stop_words)


def _each(tree_or_trees: Tree | list[Tree]) -> list[Tree]:
    return tree_or_trees if isinstance(tree_or_trees, list) else [tree_or_trees]


def run_task(
    packet_dir: Path,
    apply: TreeApplier | None = None,
    score: ScoreWorkspace | None = None,
    stop_words: StopWords = STOP_WORDS,
    economy_lambda: float = ECONOMY_LAMBDA,
) -> TaskBaselines:
    """Score every baseline's tree on one packet.

    With `apply` (e.g. `move_with_organizer`), each tree is carried out on a fresh copy of the
    inbox and the captured workspace is scored like an agent's (validity, then S). Without it the
    trees are scored directly with `score_trees`; baseline trees keep and file every record by
    construction, so both give the same S (a test checks it) and the direct path is the fast one.
    """
    from worldkit.infoorg.reference import load_reference
    from worldkit.infoorg.scoring import score_trees, score_workspace

    trees, cut = baseline_trees(packet_dir, stop_words)
    info = read_packet_info(packet_dir)
    reference = load_reference(packet_dir).paths()
    results: dict[str, list[float]] = {}
    exact: dict[str, bool] = {}

    def judge(name: str, index: int, tree: Tree, workspace_root: Path | None) -> None:
        if apply is None:
            outcome = score_trees(reference, tree, economy_lambda)
            value = float(outcome.S or 0.0)
            exact[name] = exact.get(name, False) or bool(outcome.exact)
        else:
            assert workspace_root is not None
            workspace = workspace_root / f"{name}-{index}"
            shutil.copytree(packet_dir / "candidate" / "inbox", workspace / "inbox")
            apply(workspace, tree)
            if score is not None:
                value = score(packet_dir, workspace)
                outcome = score_trees(reference, tree, economy_lambda)
            else:
                outcome = score_workspace(packet_dir, workspace, economy_lambda)
                value = float(outcome.S or 0.0)
            exact[name] = exact.get(name, False) or bool(outcome.exact)
        results.setdefault(name, []).append(value)

    if apply is None:
        for name in BASELINES:
            for index, tree in enumerate(_each(trees[name])):
                judge(name, index, tree, None)
    else:
        with tempfile.TemporaryDirectory(prefix="worldkit-baseline-") as scratch:
            for name in BASELINES:
                for index, tree in enumerate(_each(trees[name])):
                    judge(name, index, tree, Path(scratch))
    return TaskBaselines(
        task_id=info.task_id,
        record_count=info.record_count,
        scores={name: sum(values) / len(values) for name, values in results.items()},  # type: ignore[misc]
        random_scores=tuple(results["random"]),
        parents={name: _parent_count(_each(trees[name])[0]) for name in BASELINES},  # type: ignore[misc]
        reference_parents=_parent_count(reference),
        exact=exact,  # type: ignore[arg-type]
        silhouette=cut,
    )


def run_baselines(
    family: str,
    packet_dirs: Sequence[Path],
    apply: TreeApplier | None = None,
    score: ScoreWorkspace | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    stop_words: StopWords = STOP_WORDS,
    economy_lambda: float = ECONOMY_LAMBDA,
) -> BaselineReport:
    """Run every baseline on every packet (sorted by folder name); see `run_task`."""
    tasks = []
    for index, packet_dir in enumerate(sorted(packet_dirs), start=1):
        tasks.append(run_task(packet_dir, apply, score, stop_words, economy_lambda))
        if progress:
            progress("baselines", index, len(packet_dirs))
    return BaselineReport(
        family=family, tasks=tasks, stop_words=stop_words, economy_lambda=economy_lambda
    )


def baselines_from_source(
    family: Family,
    source: Path,
    tasks: int = 50,
    seed: int = DEFAULT_SEED,
    apply: TreeApplier | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    stop_words: StopWords = STOP_WORDS,
    economy_lambda: float = ECONOMY_LAMBDA,
) -> BaselineReport:
    """Build the family's packets in a scratch folder, then run every baseline on them."""
    packets = build_packets(family, source, tasks, seed, progress)
    with tempfile.TemporaryDirectory(prefix="worldkit-packets-") as scratch:
        write_packets(packets, Path(scratch), progress=progress, with_overlays=False)
        return run_baselines(
            family, sorted(Path(scratch).iterdir()), apply, progress=progress,
            stop_words=stop_words, economy_lambda=economy_lambda,
        )
