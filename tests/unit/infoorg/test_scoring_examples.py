"""The paper's worked examples, reproduced exactly: Appendix D.3, H (Figure 15) and I (mini-044)."""

from __future__ import annotations

import pytest

from worldkit.infoorg._oracle import brute_force_score
from worldkit.infoorg.scoring import LevelCounts, score_trees


def tree(groups: dict[tuple[str, ...], list[str]]) -> dict[str, list[str]]:
    return {record: list(path) for path, records in groups.items() for record in records}


# Appendix D.3: a, b, c in A/X; d, e in B/Y; f, g in B/Z. The output splits A/X into two
# folders (the paper's X1/X2 look like record ids, which the naming rule forbids: Xa/Xb here).
D3_REFERENCE = tree({("A", "X"): ["a", "b", "c"], ("B", "Y"): ["d", "e"], ("B", "Z"): ["f", "g"]})
D3_OUTPUT = tree(
    {("A", "Xa"): ["a", "b"], ("A", "Xb"): ["c"], ("B", "Y"): ["d", "e"], ("B", "Z"): ["f", "g"]}
)


def test_appendix_d3_refinement_beyond_the_reference() -> None:
    score = score_trees(D3_REFERENCE, D3_OUTPUT)
    assert score.levels[0] == LevelCounts(g=30, o=30, m=30, agreed=30, conflicting=0, unresolved=0)
    assert score.levels[1] == LevelCounts(g=4, o=4, m=4, agreed=4, conflicting=0, unresolved=0)
    # {a, b, c} is resolved only by the output, at a level the reference does not resolve.
    assert score.levels[2].g == 0 and score.levels[2].o == 1
    assert score.unsupported_refinement == 1
    assert score.E == 1.0  # one single-child folder on each side (A in R, Xb in O)
    assert score.S == 1.0
    assert score.clade_f1 == pytest.approx(8 / 9)
    assert score.exact is False
    assert score.category == "both"  # agrees on every reference triple, differs in shape


# Appendix H / Figure 15, reconstructed from the prose. Reference: parent A with leaves a1, a2,
# a3; B with b1, b2; C with c1, c2; two records per leaf (14 records). These sizes are the only
# ones with two records per leaf giving 240 parent-level and 20 leaf-level reference triples.
FIG15_REFERENCE = tree(
    {
        ("A", "a1"): ["x1", "x2"],
        ("A", "a2"): ["y1", "y2"],
        ("A", "a3"): ["t1", "t2"],
        ("B", "b1"): ["z1", "z2"],
        ("B", "b2"): ["w1", "w2"],
        ("C", "c1"): ["u1", "u2"],
        ("C", "c2"): ["v1", "v2"],
    }
)
# Mistake 1: leaf a2 moved under B. Mistake 2: leaf a3 alone in a new parent D. Mistake 3: c1
# and c2 merged into one leaf. Mistake 4: the single record z2 moved (into the merged leaf).
FIG15_OUTPUT = tree(
    {
        ("A", "a1"): ["x1", "x2"],
        ("B", "a2"): ["y1", "y2"],
        ("D", "a3"): ["t1", "t2"],
        ("B", "b1"): ["z1"],
        ("B", "b2"): ["w1", "w2"],
        ("C", "c"): ["u1", "u2", "v1", "v2", "z2"],
    }
)


def test_appendix_h_figure_15_every_error_case() -> None:
    score = score_trees(FIG15_REFERENCE, FIG15_OUTPUT)
    parent, leaf = score.levels[0], score.levels[1]
    assert (parent.agreed, parent.conflicting, parent.unresolved) == (104, 42, 94)
    assert (leaf.agreed, leaf.conflicting, leaf.unresolved) == (14, 2, 4)
    assert round(score.S, 2) == 0.58
    assert score.category == "both"
    # Single-child folders A, D, C and b1 against none in the reference; 11 output folders.
    assert score.E == pytest.approx(1 - 0.2 * 4 / 11)


def _resolved_pair(paths: dict[str, list[str]], triple: tuple[str, ...]) -> set[str] | None:
    """The pair sharing the strictly deepest folder prefix, else None."""

    def depth(a: str, b: str) -> int:
        k = 0
        while k < min(len(paths[a]), len(paths[b])) and paths[a][k] == paths[b][k]:
            k += 1
        return k

    x, y, z = triple
    shared = {(x, y): depth(x, y), (x, z): depth(x, z), (y, z): depth(y, z)}
    best = max(shared.values())
    winners = [set(pair) for pair, value in shared.items() if value == best]
    return winners[0] if len(winners) == 1 else None


@pytest.mark.parametrize(
    ("triple", "in_reference", "in_output"),
    [
        (("x1", "y1", "z1"), {"x1", "y1"}, {"y1", "z1"}),  # mistake 1: conflicting, parent level
        (("x1", "t1", "z1"), {"x1", "t1"}, None),  # mistake 2: unresolved, parent level
        (("u1", "u2", "v1"), {"u1", "u2"}, None),  # mistake 3: unresolved, leaf level
    ],
)
def test_appendix_h_each_mistake_has_the_described_effect(
    triple: tuple[str, ...], in_reference: set[str], in_output: set[str] | None
) -> None:
    assert _resolved_pair(FIG15_REFERENCE, triple) == in_reference
    assert _resolved_pair(FIG15_OUTPUT, triple) == in_output


def test_appendix_h_oracle_agrees() -> None:
    levels = brute_force_score(FIG15_REFERENCE, FIG15_OUTPUT)["levels"]
    assert (levels[0]["agreed"], levels[0]["conflicting"], levels[0]["unresolved"]) == (104, 42, 94)
    assert (levels[1]["agreed"], levels[1]["conflicting"], levels[1]["unresolved"]) == (14, 2, 4)


# Appendix I, mini-044: 4 SIGs × 3 KEPs × 3 excerpts. The output keeps all 12 KEPs, attaches the
# immutable-secrets KEP (storage) to apps and puts the DRA KEP (scheduling) in a new node folder.
SIGS = {
    "sig-storage": ["immutable-secrets", "volume-health", "csi-migration"],
    "sig-apps": ["job-tracking", "statefulset-ordinals", "daemonset-surge"],
    "sig-scheduling": ["dra-partitionable", "pod-scheduling-readiness", "queueing-hints"],
    "sig-auth": ["bound-tokens", "structured-authz", "kms-v2"],
}


def _mini044() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    reference, output = {}, {}
    number = 0
    for sig, keps in SIGS.items():
        for kep in keps:
            for _ in range(3):
                number += 1
                record = f"F{number:03d}"
                reference[record] = [sig, kep]
                if kep == "immutable-secrets":
                    output[record] = ["sig-apps", kep]
                elif kep == "dra-partitionable":
                    output[record] = ["node", kep]
                else:
                    output[record] = [sig, kep]
    return reference, output


def test_appendix_i_mini_044_parent_level_error() -> None:
    reference, output = _mini044()
    score = score_trees(reference, output)
    parent, leaf = score.levels[0], score.levels[1]
    assert parent.conflicting == 162
    assert parent.unresolved == 891
    assert leaf.agreed == leaf.g and leaf.conflicting == leaf.unresolved == 0
    assert round(score.S, 2) == 0.83
    assert score.category == "parent"
    assert score.E == pytest.approx(1 - 0.2 / 18)  # the new node folder has a single child
