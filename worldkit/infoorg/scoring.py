"""The Structure Score of InfoOrgBench (paper §4.1, Appendix D), fast enough for 100,000 records.

`score_trees` compares two hierarchies given as record id → folder path; `score_workspace` first
checks a captured workspace against a packet's reference (validity), then scores its tree.
Everything here is on the 0–1 scale; callers multiply by 100 for display. Triples are counted
from joint node sizes (`worldkit.infoorg._triples`), never enumerated.

This module never modifies a workspace and never reads the verifier side except the reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from worldkit.errors import UsageError
from worldkit.infoorg._triples import count_levels
from worldkit.infoorg.tree import (
    IndexedTree,
    InvalidHierarchy,
    Paths,
    folder_name_problem,
    index_tree,
    strip_wrapper,
)

__all__ = [
    "ECONOMY_LAMBDA",
    "Category",
    "LevelCounts",
    "StructureScore",
    "score_trees",
    "score_workspace",
]

ECONOMY_LAMBDA = 0.2
"""λ in E = 1 − λ · max(0, u(O) − u(R)) / n(O)."""

MAX_PROBLEMS = 50
"""Validity problems listed before the rest are summarized as a count."""

Category = Literal["none", "parent", "leaf", "both"]


class LevelCounts(BaseModel):
    """Triple counts at one reference level (0 = parent level, 1 = leaf level, deeper = below)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    g: int
    """Triples of this level that the reference resolves."""
    o: int
    """Triples of this level that the output resolves (including ones the reference leaves
    unresolved); at a level with g = 0 these are unsupported refinement."""
    m: int
    """Triples that both trees resolve to the same pair."""
    agreed: int
    """Reference-resolved triples the output resolves the same way (equals m)."""
    conflicting: int
    """Reference-resolved triples the output resolves to a different pair."""
    unresolved: int
    """Reference-resolved triples the output leaves unresolved (all three at one depth)."""


class StructureScore(BaseModel):
    """Every figure of one scored output, on the 0–1 scale (the CLI prints 0–100)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    valid: bool
    """Every record present exactly once, bytes unchanged, no unexpected files, names allowed."""
    problems: list[str] = Field(default_factory=list)
    """Why the output is invalid (empty when valid)."""
    n_records: int
    """Number of reference records."""
    S: float | None
    """Structure Score F1_bal · E; 0 when invalid; None when the reference resolves no triple."""
    f1_bal: float | None = None
    """Level-balanced F1 (harmonic mean of recall_bal and precision_bal)."""
    recall_bal: float | None = None
    """Mean over levels with g > 0 of m/g."""
    precision_bal: float | None = None
    """Mean over levels with g > 0 and o > 0 of m/o (0 when there is no such level)."""
    E: float | None = None
    """Folder economy 1 − λ · max(0, u(O) − u(R)) / n(O), λ = 0.2 unless asked otherwise (root
    counted, wrappers dropped)."""
    penalty: float | None = None
    """Economy penalty 1 − E (the paper prints 100(1 − E))."""
    triplet_f1: float | None = None
    """Pooled triplet F1 over all triples (Σm/Σo and Σm/Σg)."""
    triplet_precision: float | None = None
    """Pooled Σm/Σo (0 when the output resolves nothing)."""
    triplet_recall: float | None = None
    """Pooled Σm/Σg."""
    category: Category | None = None
    """none = same tree up to names and order; parent = leaf level all agreed, parent level not;
    leaf = the reverse; both = otherwise (also: every triple agreed but another shape)."""
    clade_f1: float | None = None
    """F1 of the informative clades (record sets of folders with 1 < size < n); 1 when neither
    tree has one."""
    exact: bool | None = None
    """The output's clades equal the reference's (exact recovery)."""
    levels: dict[int, LevelCounts] = Field(default_factory=dict)
    """Triple counts per reference level that has any reference- or output-resolved triple."""
    unsupported_refinement: int | None = None
    """Output-resolved triples at levels where the reference resolves none."""


def _name_problems(paths: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Record id → the problem with the first disallowed folder name on its path."""
    names: dict[object, str | None] = {}
    found = {}
    for record, path in paths.items():
        for name in path:
            try:
                problem = names[name]
            except KeyError:
                problem = names[name] = folder_name_problem(name)
            except TypeError:  # an unhashable "name" is certainly not a folder name
                problem = folder_name_problem(name)
            if problem:
                found[record] = problem
                break
    return found


def _reference_paths(reference: Mapping[str, Sequence[str]]) -> Paths:
    if not reference:
        raise InvalidHierarchy("the reference holds no records; a reference needs records")
    problems = _name_problems(reference)
    if problems:
        record = min(problems)
        raise InvalidHierarchy(
            f"reference record {record}: {problems[record]}; fix the reference hierarchy"
        )
    return {record: tuple(path) for record, path in reference.items()}


def _output_problems(reference: Paths, output: Mapping[str, Sequence[str]]) -> list[str]:
    problems = [
        f"record {record} is missing from the output; every reference record must be placed once"
        for record in sorted(set(reference) - set(output))
    ]
    problems += [
        f"record {record} is not in the reference; remove it from the output"
        for record in sorted(set(output) - set(reference))
    ]
    problems += [
        f"record {record}: {problem}; rename the folder"
        for record, problem in sorted(_name_problems(output).items())
    ]
    return problems


def _cap(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    rest = len(problems) - MAX_PROBLEMS
    return problems[:MAX_PROBLEMS] + [f"… and {rest} more problems"]


def _invalid(n_records: int, problems: list[str]) -> StructureScore:
    """The score of an invalid output: S = 0 and nothing else is computed."""
    return StructureScore(valid=False, problems=_cap(problems), n_records=n_records, S=0.0)


def score_trees(
    reference: Mapping[str, Sequence[str]],
    output: Mapping[str, Sequence[str]],
    economy_lambda: float = ECONOMY_LAMBDA,
) -> StructureScore:
    """Score an output hierarchy against the reference; both map record id → folder components.

    `economy_lambda` is λ of the folder economy (the paper's 0.2; Appendix F also reports 0 and
    0.4).
    A reference with a disallowed folder name raises `InvalidHierarchy`. An output that misses
    or adds records, or uses a disallowed folder name, is invalid: S = 0 and `problems` says why.
    """
    ref = _reference_paths(reference)
    problems = _output_problems(ref, output)
    if problems:
        return _invalid(len(ref), problems)
    return _score_valid(
        ref, {record: tuple(output[record]) for record in ref}, _check_lambda(economy_lambda)
    )


def _check_lambda(economy_lambda: float) -> float:
    if not 0.0 <= economy_lambda <= 1.0:
        raise UsageError(
            f"economy λ must lie in [0, 1], got {economy_lambda}; the paper uses 0.2 (0 and 0.4 "
            "in Appendix F)"
        )
    return float(economy_lambda)


def _folder_children(tree: IndexedTree) -> list[int]:
    children = [0] * tree.node_count
    for node in range(1, tree.node_count):
        children[tree.parent[node]] += 1
    for node, records in Counter(map(itemgetter(-1), tree.record_nodes)).items():
        children[node] += records
    return children


def _economy(ref: IndexedTree, out: IndexedTree, economy_lambda: float) -> float:
    u_ref = sum(1 for c in _folder_children(ref) if c == 1)
    u_out = sum(1 for c in _folder_children(out) if c == 1)
    return 1.0 - economy_lambda * max(0, u_out - u_ref) / out.node_count


def _node_sets(tree: IndexedTree) -> Counter[frozenset[int]]:
    """Multiset of every folder's record set (records numbered by position)."""
    by_chain: dict[tuple[int, ...], list[int]] = {}
    for index, chain in enumerate(tree.record_nodes):
        found = by_chain.get(chain)
        if found is None:
            by_chain[chain] = [index]
        else:
            found.append(index)
    members: list[list[int]] = [[] for _ in range(tree.node_count)]
    for chain, indices in by_chain.items():  # records in one folder share its whole chain
        for node in chain:
            members[node].extend(indices)
    return Counter(frozenset(m) for m in members)


def _harmonic(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


Ratios = tuple[float | None, float | None, float | None]


def _balanced(levels: Mapping[int, LevelCounts]) -> Ratios:
    """(recall_bal, precision_bal, f1_bal); all None when the reference resolves no triple."""
    informative = [c for c in levels.values() if c.g > 0]
    if not informative:
        return None, None, None
    with_output = [c for c in informative if c.o > 0]
    recall = sum(c.m / c.g for c in informative) / len(informative)
    precision = sum(c.m / c.o for c in with_output) / len(with_output) if with_output else 0.0
    return recall, precision, _harmonic(precision, recall)


def _pooled(levels: Mapping[int, LevelCounts]) -> Ratios:
    """(recall, precision, F1) over all triples; all None when the reference resolves none."""
    total_g = sum(c.g for c in levels.values())
    if not total_g:
        return None, None, None
    total_o = sum(c.o for c in levels.values())
    total_m = sum(c.m for c in levels.values())
    recall, precision = total_m / total_g, (total_m / total_o if total_o else 0.0)
    return recall, precision, _harmonic(precision, recall)


def _category(levels: Mapping[int, LevelCounts], same_shape: bool) -> Category:
    if same_shape:
        return "none"
    parent_ok = all(c.agreed == c.g for depth, c in levels.items() if depth == 0)
    leaf_ok = all(c.agreed == c.g for depth, c in levels.items() if depth >= 1)
    if leaf_ok and not parent_ok:
        return "parent"
    if parent_ok and not leaf_ok:
        return "leaf"
    return "both"


def _score_valid(reference: Paths, output: Paths, economy_lambda: float) -> StructureScore:
    """Score two hierarchies over the same records with allowed folder names."""
    records = sorted(reference)
    ref = index_tree(strip_wrapper(reference), records)
    out = index_tree(strip_wrapper(output), records)
    levels = {
        depth: LevelCounts(
            g=c.g,
            o=c.o,
            m=c.m,
            agreed=c.m,
            conflicting=c.conflicting,
            unresolved=c.g - c.m - c.conflicting,
        )
        for depth, c in count_levels(ref, out).items()
    }
    recall, precision, f1_bal = _balanced(levels)
    t_recall, t_precision, triplet_f1 = _pooled(levels)
    economy = _economy(ref, out, economy_lambda)

    # A tree is determined, up to names and order, by the multiset of its folders' record sets.
    sets_ref, sets_out = _node_sets(ref), _node_sets(out)
    n = len(records)
    clades_ref = {s for s in sets_ref if 1 < len(s) < n}
    clades_out = {s for s in sets_out if 1 < len(s) < n}
    clade_f1 = (
        2 * len(clades_ref & clades_out) / (len(clades_ref) + len(clades_out))
        if clades_ref or clades_out
        else 1.0
    )
    return StructureScore(
        valid=True,
        n_records=n,
        S=None if f1_bal is None else f1_bal * economy,
        f1_bal=f1_bal,
        recall_bal=recall,
        precision_bal=precision,
        E=economy,
        penalty=1.0 - economy,
        triplet_f1=triplet_f1,
        triplet_precision=t_precision,
        triplet_recall=t_recall,
        category=_category(levels, sets_ref == sets_out),
        clade_f1=clade_f1,
        exact=clades_ref == clades_out,
        levels=levels,
        unsupported_refinement=sum(c.o for c in levels.values() if c.g == 0),
    )


def score_workspace(
    packet_dir: Path, workspace_dir: Path, economy_lambda: float = ECONOMY_LAMBDA
) -> StructureScore:
    """Check a captured workspace against the packet's reference, then score its hierarchy.

    Validity (paper §D.1): every reference record exactly once as `<folders…>/<ID>.txt`, bytes
    equal to the reference hash, no other file, every folder name allowed. Records left in
    `inbox/` have the path `["inbox"]`. An invalid workspace gets S = 0 and the list of problems.
    """
    # Imported here: scoring two trees (`score-trees`) needs neither the packet reference's
    # models nor the workspace scan.
    from worldkit.infoorg.reference import load_reference
    from worldkit.infoorg.validity import check_workspace

    reference = load_reference(Path(packet_dir))
    paths = reference.paths()
    ref = _reference_paths(paths)
    economy_lambda = _check_lambda(economy_lambda)
    scan = check_workspace(Path(workspace_dir), reference.hashes())
    if scan.problems:
        return _invalid(len(ref), scan.problems)
    return _score_valid(ref, scan.paths, economy_lambda)
