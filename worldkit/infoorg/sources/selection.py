"""Task selection: which complete source units make up each task (Appendix A.4).

- Recap and Thread: complete bundles of consecutive units in the reader's fixed candidate order,
  40 to 60 records, at least two top-level groups, no duplicate source identifiers, and record
  overlap |A∩B| / min(|A|, |B|) <= 1/2 with every task already taken; the first N eligible.
  Candidates run by start unit, then by length: a first pass lays complete bundles end to end
  (each starts after the previous one), a second pass, only if more tasks are needed, tries
  every start again under the overlap limit. For Recap the first pass alone gives 50 tasks:
  2,471 records over 136 meetings, none reused (paper: 2,436 over 124). At the corpus mean of
  18.3 records a meeting, 2,436 records are about 133 meeting appearances, so the paper's tasks
  reuse about nine meetings, which end-to-end bundles never do; trying every start under the
  overlap limit reuses far more (105 meetings, 143 appearances, 2,457 records), and bundles kept
  inside one AMI series give 124 meetings and 2,443 records but only 48 tasks.
- Design: 4 SIGs x 3 KEPs (x 3 excerpts). A seeded draw of `DESIGN_CANDIDATES` candidate
  proposal sets keeps each KEP in at most three tasks and the overlap between tasks to one half,
  then prefers the candidate whose owning groups are lexically most similar *as the candidate
  represents them*: the mean pairwise cosine of the four groups' centroids, each the TF-IDF
  vectors of that group's three chosen proposals. (Scoring whole-SIG profiles instead makes the
  largest SIGs similar to everything: sig-node then sits in 48 of 50 tasks and 11 owners
  appear; per-candidate groups spread the selection over the owners as the paper's does.)

Deterministic: sorted inputs, seeded `random.Random` per task, no clock. Never reads files.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence

from worldkit.infoorg.sources.records import Family, NotEnoughTasks, SourceUnit, TaskSelection

Progress = Callable[[str, int, int], None]
"""Progress callback: (what, done, total)."""

MIN_RECORDS, MAX_RECORDS, MIN_GROUPS = 40, 60, 2
MAX_OVERLAP = 0.5
DESIGN_SIGS, DESIGN_KEPS_PER_SIG, KEP_MAX_TASKS = 4, 3, 3
DESIGN_CANDIDATES = 10
"""Candidate proposal sets drawn per Design task; the most lexically similar one is kept. This is
the strength of A.4's preference, which the paper does not give. With 10 the 50 tasks use 19
owners and 300 proposals and every Design baseline lies within 3 points of Table 12 (silhouette
68.8 vs 71.0, fixed cuts 48.4 vs 45.9); with 200 the silhouette falls to 66.9 (harder packets).

The owner count does not depend on this strength (19 with 10, 30 or 100 candidates): SIGs are
drawn uniformly, so every SIG with at least three eligible proposals appears (20 SIGs, less
sig-docs with one). Drawing SIGs in proportion to their open proposals instead gives the paper's
16 owners (sig-contributor-experience, sig-security and sig-multicluster drop out) but 318
proposals, and moves fixed cuts to 48.7 and the silhouette to 68.1, both within 0.3 of the ±3
limit; the paper's 294 proposals need more reuse per proposal (2.04 appearances each) than either
draw gives, so the uniform draw stays."""


def derived_seed(*parts: object) -> int:
    """A 64-bit seed from the parts, stable across Python versions and processes."""
    text = "\x1f".join(str(part) for part in parts)
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], 16)


def task_id(family: Family, number: int) -> str:
    return f"{family}-{number:03d}"


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """|A∩B| / min(|A|, |B|) over record source locators."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def _locators(units: Sequence[SourceUnit]) -> list[str]:
    return [record.source for unit in units for record in unit.records]


def _eligible(window: Sequence[SourceUnit], taken: Sequence[frozenset[str]]) -> frozenset[str] | None:
    """The window's record locators if it is an eligible bundle, else None."""
    locators = _locators(window)
    if not MIN_RECORDS <= len(locators) <= MAX_RECORDS:
        return None
    if len({unit.group for unit in window}) < MIN_GROUPS:
        return None
    records = frozenset(locators)
    if len(records) != len(locators):
        return None  # duplicate source identifiers
    if any(overlap(records, other) > MAX_OVERLAP for other in taken):
        return None
    return records


def _shortest_from(
    units: Sequence[SourceUnit], start: int, taken: Sequence[frozenset[str]]
) -> tuple[int, frozenset[str]] | None:
    """(end, records) of the shortest eligible window starting at `start`, if any."""
    size = 0
    for end in range(start + 1, len(units) + 1):
        size += len(units[end - 1].records)
        if size > MAX_RECORDS:
            return None
        records = _eligible(units[start:end], taken)
        if records is not None:
            return end, records
    return None


def bundle_tasks(
    family: Family,
    units: Sequence[SourceUnit],
    tasks: int,
    progress: Progress | None = None,
) -> list[TaskSelection]:
    """The first `tasks` eligible bundles of consecutive units, in the fixed candidate order.

    Pass 1 walks the units once: from the current start it takes the shortest eligible window
    and continues after it, so complete bundles follow one another without sharing a unit (a
    start without an eligible window is skipped). Pass 2, only when more tasks are asked for,
    tries every start again in order, each with its shortest window that overlaps every task
    taken by at most `MAX_OVERLAP`.
    """
    chosen: list[TaskSelection] = []
    taken: list[frozenset[str]] = []

    def take(start: int, end: int, records: frozenset[str]) -> bool:
        taken.append(records)
        chosen.append(TaskSelection(
            task_id=task_id(family, len(chosen) + 1), family=family, units=tuple(units[start:end])
        ))
        if progress:
            progress("select", len(chosen), tasks)
        return len(chosen) == tasks

    start = 0
    while start < len(units):
        found = _shortest_from(units, start, taken)
        if found is None:
            start += 1
            continue
        if take(start, *found):
            return chosen
        start = found[0]
    for start in range(len(units)):
        found = _shortest_from(units, start, taken)
        if found is not None and take(start, *found):
            return chosen
    raise NotEnoughTasks(
        f"the {family} source yields only {len(chosen)} eligible bundles of {MIN_RECORDS}-"
        f"{MAX_RECORDS} records with >= {MIN_GROUPS} groups and overlap <= {MAX_OVERLAP}; "
        f"ask for --tasks {len(chosen)} or fewer, or supply a larger source"
    )


def proposal_gram(units: Sequence[SourceUnit]) -> dict[str, dict[str, float]]:
    """Cosine similarity of every pair of proposals: TF-IDF (sublinear tf, English stop words
    removed) over each proposal's three excerpts. Keys are unit ids."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    ordered = sorted(units, key=lambda u: u.unit_id)
    if not ordered:
        return {}
    try:
        matrix = TfidfVectorizer(sublinear_tf=True, stop_words="english").fit_transform(
            ["\n".join(record.text for record in unit.records) for unit in ordered]
        )
        gram = (matrix @ matrix.T).toarray()
    except ValueError:  # no token at all
        gram = [[0.0] * len(ordered) for _ in ordered]
    ids = [unit.unit_id for unit in ordered]
    return {a: {b: float(gram[i][j]) for j, b in enumerate(ids)} for i, a in enumerate(ids)}


def group_similarity(groups: Sequence[Sequence[str]], gram: dict[str, dict[str, float]]) -> float:
    """Mean pairwise cosine of the groups' centroids, each group the unit TF-IDF vectors of its
    proposals (computed from the Gram matrix: <c_a, c_b> = mean of the pairwise similarities)."""

    def inner(a: Sequence[str], b: Sequence[str]) -> float:
        return sum(gram[x][y] for x in a for y in b) / (len(a) * len(b))

    norms = [inner(group, group) ** 0.5 for group in groups]
    pairs = [
        inner(groups[i], groups[j]) / (norms[i] * norms[j]) if norms[i] and norms[j] else 0.0
        for i, j in itertools.combinations(range(len(groups)), 2)
    ]
    return sum(pairs) / len(pairs)


def design_tasks(
    units: Sequence[SourceUnit], tasks: int, seed: int, progress: Progress | None = None
) -> list[TaskSelection]:
    """`tasks` Design selections of 4 SIGs x 3 KEPs, chosen one after another (see module doc)."""
    by_sig: dict[str, list[SourceUnit]] = {}
    for unit in sorted(units, key=lambda u: u.unit_id):
        by_sig.setdefault(unit.group, []).append(unit)
    gram = proposal_gram(units)
    used: Counter[str] = Counter()
    taken: list[frozenset[str]] = []
    chosen: list[TaskSelection] = []
    max_shared = int(MAX_OVERLAP * DESIGN_SIGS * DESIGN_KEPS_PER_SIG)
    for number in range(1, tasks + 1):
        rng = random.Random(derived_seed("design", seed, number))
        open_by_sig = {
            sig: [u for u in members if used[u.unit_id] < KEP_MAX_TASKS]
            for sig, members in sorted(by_sig.items())
        }
        sigs = [sig for sig, members in open_by_sig.items() if len(members) >= DESIGN_KEPS_PER_SIG]
        if len(sigs) < DESIGN_SIGS:
            break
        best: tuple[float, list[SourceUnit]] | None = None
        for _ in range(DESIGN_CANDIDATES):
            picked = sorted(rng.sample(sigs, DESIGN_SIGS))
            groups = [
                sorted(rng.sample(open_by_sig[sig], DESIGN_KEPS_PER_SIG), key=lambda u: u.unit_id)
                for sig in picked
            ]
            keps = [kep for group in groups for kep in group]
            ids = frozenset(kep.unit_id for kep in keps)
            if any(len(ids & other) > max_shared for other in taken):
                continue
            score = group_similarity([[kep.unit_id for kep in group] for group in groups], gram)
            if best is None or score > best[0]:
                best = (score, keps)
        if best is None:
            break
        keps = best[1]
        used.update(kep.unit_id for kep in keps)
        taken.append(frozenset(kep.unit_id for kep in keps))
        chosen.append(TaskSelection(task_id=task_id("design", number), family="design", units=tuple(keps)))
        if progress:
            progress("select", number, tasks)
    if len(chosen) < tasks:
        raise NotEnoughTasks(
            f"the design source yields only {len(chosen)} tasks of {DESIGN_SIGS} SIGs x "
            f"{DESIGN_KEPS_PER_SIG} KEPs under the reuse and overlap limits; ask for "
            f"--tasks {len(chosen)} or fewer, or supply a larger enhancements checkout"
        )
    return chosen
