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
their presence in J(u, v). The cost is O(Σᵢ depth_R(i) · depth_O(i)); no triple is enumerated.
The brute-force definition lives in `worldkit.infoorg._oracle` and the tests compare the two.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from worldkit.infoorg.tree import IndexedTree

__all__ = ["RawLevel", "count_levels"]


@dataclass
class RawLevel:
    """Triple counts at one reference level (see `LevelCounts` for the meaning of each)."""

    g: int = 0
    o: int = 0
    m: int = 0
    conflicting: int = 0


def _pairs(x: int) -> int:
    return x * (x - 1) // 2


def count_levels(reference: IndexedTree, output: IndexedTree) -> dict[int, RawLevel]:
    """Per reference level: g, o, m and conflicting, for two trees over the same records.

    Both trees must list the same records in the same order (see `index_tree`).
    """
    width = output.node_count
    if len(reference.record_nodes) != len(output.record_nodes):
        raise ValueError("the two trees list different numbers of records")
    # Records on the same pair of folder chains add the same cells: count each pair once, weighted.
    joint: Counter[int] = Counter()
    for (ref_chain, out_chain), weight in Counter(zip(reference.record_nodes, output.record_nodes)).items():
        for p in ref_chain:
            base = p * width
            for w in out_chain:
                joint[base + w] += weight

    ref_parent, ref_depth = reference.parent, reference.depth
    out_parent = output.parent
    get = joint.get
    t_by_depth: Counter[int] = Counter()
    levels: dict[int, RawLevel] = {}

    def level(depth: int) -> RawLevel:
        found = levels.get(depth)
        if found is None:
            found = levels[depth] = RawLevel()
        return found

    for key, x in joint.items():
        node_r, node_o = divmod(key, width)
        if node_o == 0:
            if node_r != 0:  # reference-resolved triples: a pair inside A, one record in u∖A
                u = ref_parent[node_r]
                level(ref_depth[u]).g += _pairs(x) * (joint[u * width] - x)
            continue
        v = out_parent[node_o]
        if x >= 2:
            t_by_depth[ref_depth[node_r]] += _pairs(x) * (joint[node_r * width + v] - x)
        if node_r == 0:
            continue
        u = ref_parent[node_r]
        u_base = u * width
        in_k = get(u_base + node_o, 0)
        in_v = joint[u_base + v]
        a_in_v = joint[node_r * width + v]
        counts = level(ref_depth[u])
        if x >= 2:
            counts.m += _pairs(x) * (in_v - in_k - a_in_v + x)
        counts.conflicting += x * (in_k - x) * (a_in_v - x)

    for depth, total in t_by_depth.items():
        level(depth).o += total
        if depth > 0:
            level(depth - 1).o -= total
    return {depth: counts for depth, counts in sorted(levels.items()) if counts.g or counts.o}
