"""Rooted-triple counts per reference level, from joint node sizes instead of enumerating triples.

For records a, b, c a tree resolves `ab|c` when a and b share strictly more leading folders with
each other than either shares with c; equivalently there is a node v (the three records' lowest
common folder) with a and b inside the same child K of v and c in v outside K. Each resolved
triple has exactly one such (v, K). The reference level of a triple is the depth of its lowest
common folder u in the reference.

Let J(p, w) be the number of records under reference node p and output node w. Every count the
scorer needs is a sum over the non-zero entries of J (A a child of u in the reference, K a child
of v in the output, x = J(·,·)):

- o-triples under u: T(u) = Σ_K C(J(u,K), 2) · (J(u,v) − J(u,K)); then o_ℓ = T_ℓ − T_ℓ₊₁ where T_ℓ
  sums T(u) over the reference nodes of depth ℓ (triples inside one child of u sit one level down);
- agreed (both trees resolve the pair inside A against an outsider from u∖A):
  Σ C(J(A,K), 2) · (J(u,v) − J(u,K) − J(A,v) + J(A,K));
- conflicting (the output pairs one A record with an outsider y ∈ K, the other A record is
  outside K): Σ J(A,K) · (J(u,K) − J(A,K)) · (J(A,v) − J(A,K));
- g_ℓ: Σ C(|A|, 2) · (|u| − |A|).

Records sitting directly in a folder act as one-record children and contribute nothing beyond
their presence in J(u, v). J is built from the distinct (reference folder, output folder) pairs
of the records — never per record — first up each pair's output chain, then child rows into
parent rows (children are numbered after their parents). The cost is O(|J| + Σ over distinct
pairs of depth_O); no triple is enumerated. The same table decides which folders of the two
trees hold the same record set (clades, exact recovery, same shape). The brute-force definition
lives in `worldkit.infoorg._oracle` and the tests compare the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from worldkit.infoorg.tree import IndexedTree

__all__ = ["CladeMatch", "RawLevel", "count_levels", "joint_rows", "match_clades"]


class RawLevel:
    """Triple counts at one reference level (see `LevelCounts` for the meaning of each)."""

    __slots__ = ("g", "o", "m", "conflicting")

    def __init__(self) -> None:
        self.g = self.o = self.m = self.conflicting = 0


def joint_rows(
    reference: IndexedTree, output: IndexedTree, cells: Mapping[tuple[int, int], int]
) -> list[dict[int, int]]:
    """J as one row per reference node: `rows[p][w]` = records under both p and w (non-zero only).

    `cells[(a, b)]` counts the records sitting directly in reference folder a and output folder b.
    Output node 0 (the root) is in every row, so `rows[p][0]` is the size of p and `rows[0][w]`
    the size of w.
    """
    rows: list[dict[int, int]] = [{} for _ in range(reference.node_count)]
    out_chain = output.chain
    for (a, b), x in cells.items():
        row = rows[a]
        get = row.get
        for w in out_chain[b]:
            row[w] = get(w, 0) + x
    ref_parent = reference.parent
    for node in range(reference.node_count - 1, 0, -1):  # every child before its parent
        up = rows[ref_parent[node]]
        if not up:
            up.update(rows[node])
            continue
        get = up.get
        for w, x in rows[node].items():
            up[w] = get(w, 0) + x
    return rows


def _pairs(x: int) -> int:
    return x * (x - 1) // 2


def count_levels(
    reference: IndexedTree, output: IndexedTree, rows: list[dict[int, int]]
) -> dict[int, RawLevel]:
    """Per reference level: g, o, m and conflicting, from the joint table of `joint_rows`."""
    ref_parent, ref_depth = reference.parent, reference.depth
    out_parent = output.parent
    t_by_depth: dict[int, int] = {}
    levels: dict[int, RawLevel] = {}

    root = rows[0]
    t_root = 0
    for node_o, x in root.items():
        if node_o and x >= 2:
            t_root += _pairs(x) * (root[out_parent[node_o]] - x)
    t_by_depth[0] = t_root

    for node_r in range(1, reference.node_count):
        row = rows[node_r]
        u = ref_parent[node_r]
        up = rows[u]
        depth = ref_depth[u]
        counts = levels.get(depth)
        if counts is None:
            counts = levels[depth] = RawLevel()
        size = row[0]
        counts.g += _pairs(size) * (up[0] - size)  # a pair inside A, one record in u∖A
        t = m = conflicting = 0
        for node_o, x in row.items():
            if not node_o:
                continue
            v = out_parent[node_o]
            a_in_v = row[v]
            in_k = up[node_o]
            if x >= 2:
                pairs = x * (x - 1) // 2
                t += pairs * (a_in_v - x)
                m += pairs * (up[v] - in_k - a_in_v + x)
            conflicting += x * (in_k - x) * (a_in_v - x)
        counts.m += m
        counts.conflicting += conflicting
        t_by_depth[depth + 1] = t_by_depth.get(depth + 1, 0) + t

    for depth, total in t_by_depth.items():
        if not total:
            continue
        found = levels.get(depth)
        if found is None:
            found = levels[depth] = RawLevel()
        found.o += total
        if depth > 0:
            levels[depth - 1].o -= total
    return {depth: counts for depth, counts in sorted(levels.items()) if counts.g or counts.o}


class CladeMatch(NamedTuple):
    """How the folders' record sets of two trees over the same n records compare."""

    reference_clades: int
    """Distinct record sets of reference folders with 1 < size < n."""
    output_clades: int
    """The same for the output."""
    shared_clades: int
    """Record sets with 1 < size < n held by a folder in both trees."""
    same_shape: bool
    """The multisets of all folders' record sets are equal: the trees are the same up to names
    and order (single-child chains counted)."""


def _classes(tree: IndexedTree, size: list[int]) -> tuple[list[int], dict[int, int]]:
    """Each node's class (the topmost node with the same record set: an ancestor of equal size)
    and how many nodes each class has."""
    parent = tree.parent
    rep = [0] * tree.node_count
    members: dict[int, int] = {0: 1}
    for node in range(1, tree.node_count):
        up = parent[node]
        top = rep[up] if size[up] == size[node] else node
        rep[node] = top
        members[top] = members.get(top, 0) + 1
    return rep, members


def match_clades(
    reference: IndexedTree, output: IndexedTree, rows: list[dict[int, int]]
) -> CladeMatch:
    """Compare the two trees' folders as record sets: p and w hold the same set exactly when
    J(p, w) = |p| = |w|."""
    n = rows[0][0]
    ref_size = [row[0] for row in rows]
    out_size = [0] * output.node_count
    for w, x in rows[0].items():
        out_size[w] = x
    ref_rep, ref_members = _classes(reference, ref_size)
    out_rep, out_members = _classes(output, out_size)
    matched: dict[int, int] = {}  # reference class → the output class with the same set
    for p in ref_members:
        size = ref_size[p]
        for w, x in rows[p].items():
            if x == size and out_size[w] == size:
                matched[p] = out_rep[w]
                break

    def clades(members: dict[int, int], size: list[int]) -> int:
        return sum(1 for c in members if 1 < size[c] < n)

    same_shape = len(ref_members) == len(out_members) == len(matched) and all(
        out_members[w] == ref_members[p] for p, w in matched.items()
    )
    return CladeMatch(
        reference_clades=clades(ref_members, ref_size),
        output_clades=clades(out_members, out_size),
        shared_clades=sum(1 for p in matched if 1 < ref_size[p] < n),
        same_shape=same_shape,
    )
