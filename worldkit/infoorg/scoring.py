"""The Structure Score of InfoOrgBench (paper §4.1, Appendix D), fast enough for 100,000 records.

`score_trees` compares two hierarchies given as record id → folder path; `score_workspace` first
checks a captured workspace against a packet's reference (validity), then scores its tree.
Everything here is on the 0–1 scale; callers multiply by 100 for display. The figures come from
`worldkit.infoorg.structure` (plain data, no pydantic); triples are counted from joint node
sizes (`worldkit.infoorg._triples`), never enumerated.

This module never modifies a workspace and never reads the verifier side except the reference.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from worldkit.infoorg.structure import (
    ECONOMY_LAMBDA,
    check_lambda,
    invalid_figures,
    reference_paths,
    score_pairs,
    score_figures,
)

__all__ = [
    "ECONOMY_LAMBDA",
    "Category",
    "LevelCounts",
    "StructureScore",
    "score_trees",
    "score_workspace",
]

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
    return StructureScore(**score_figures(reference, output, economy_lambda))


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
    ref = reference_paths(paths)
    economy_lambda = check_lambda(economy_lambda)
    scan = check_workspace(Path(workspace_dir), reference.hashes())
    if scan.problems:
        return StructureScore(**invalid_figures(len(ref), scan.problems))
    pairs = Counter(zip(ref, (tuple(scan.paths[record]) for record in paths)))
    return StructureScore(**score_pairs(pairs, economy_lambda))
