"""The fast scorer's internals against direct definitions, and its figures bit for bit (Hypothesis).

`test_scoring_oracle.py` compares with the brute-force triple count up to 1e-12; here every figure
must be *equal* (the same floats), the joint table must hold the true intersection sizes, and the
plain figures printed by `score-trees` must be exactly the pydantic model's JSON.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit._cli.score_trees import score_json
from worldkit.infoorg._oracle import brute_force_score
from worldkit.infoorg._triples import joint_rows
from worldkit.infoorg.scoring import score_trees
from worldkit.infoorg.structure import score_figures
from worldkit.infoorg.tree import index_paths

NAMES = st.sampled_from(["a", "b", "c", "d"])
PATH = st.lists(NAMES, max_size=4)


@st.composite
def tree_pairs(draw: st.DrawFn, max_records: int = 12) -> tuple[dict, dict]:
    """Two hierarchies over the same records: uneven depths, records in inner folders, and now
    and then a wrapper shared by every record of one side."""
    n = draw(st.integers(min_value=1, max_value=max_records))
    records = [f"R{i}" for i in range(n)]
    reference = {r: draw(PATH) for r in records}
    output = {r: draw(PATH) for r in records}
    if draw(st.booleans()):
        output = {r: ["wrap", *p] for r, p in output.items()}
    return reference, output


@settings(max_examples=400, deadline=None)
@given(tree_pairs())
def test_every_figure_equals_the_brute_force_count_exactly(pair) -> None:
    reference, output = pair
    fast = score_trees(reference, output)
    slow = brute_force_score(reference, output)
    assert {depth: c.model_dump() for depth, c in fast.levels.items()} == slow["levels"]
    for name, value in slow.items():
        if name != "levels":
            assert getattr(fast, name) == value, name  # the same float, not just a close one


def _below(paths: dict[str, list[str]], folder: tuple[str, ...]) -> set[str]:
    return {r for r, p in paths.items() if tuple(p[: len(folder)]) == folder}


@settings(max_examples=200, deadline=None)
@given(tree_pairs(max_records=20))
def test_the_joint_table_holds_every_intersection_size(pair) -> None:
    reference, output = pair
    records = list(reference)
    ref_paths = [tuple(reference[r]) for r in records]
    out_paths = [tuple(output[r]) for r in records]
    ref, ref_node = index_paths(ref_paths)
    out, out_node = index_paths(out_paths)
    assert all(ref.parent[k] < k for k in range(1, ref.node_count))  # parents numbered first
    cells: dict[tuple[int, int], int] = {}
    for r, o in zip(ref_paths, out_paths):
        key = (ref_node[r], out_node[o])
        cells[key] = cells.get(key, 0) + 1
    rows = joint_rows(ref, out, cells)
    # Each node's folder (as a full path, wrapper included), then the sizes by definition.
    ref_folder = {node: path for path, node in ref_node.items()}
    out_folder = {node: path for path, node in out_node.items()}
    for p in range(ref.node_count):
        for w in range(out.node_count):
            expected = len(_below(reference, ref_folder[p]) & _below(output, out_folder[w]))
            assert rows[p].get(w, 0) == expected, (p, w)
            assert w not in rows[p] or expected > 0  # only non-zero entries are stored


@st.composite
def possibly_invalid_pairs(draw: st.DrawFn) -> tuple[dict, dict]:
    reference, output = draw(tree_pairs())
    damage = draw(st.sampled_from(["none", "missing", "extra", "bad-name", "many-missing"]))
    first = next(iter(output))
    if damage == "missing" and len(output) > 1:
        del output[first]
    elif damage == "extra":
        output["Z9"] = ["a"]
    elif damage == "bad-name":
        output[first] = [*output[first], "F12"]
    elif damage == "many-missing":
        output = {f"X{i}": ["a"] for i in range(60)}  # more problems than are listed
    return reference, output


@settings(max_examples=300, deadline=None)
@given(possibly_invalid_pairs(), st.sampled_from([0.0, 0.2, 0.4, 1.0]))
def test_plain_figures_print_exactly_the_models_json(pair, economy_lambda) -> None:
    reference, output = pair
    figures = score_figures(reference, output, economy_lambda)
    model = score_trees(reference, output, economy_lambda)
    assert score_json(figures) == model.model_dump(mode="json")
    assert figures == model.model_dump()
    for name, value in figures.items():  # floats stay floats: JSON prints 0.0, not 0
        assert type(value) is type(getattr(model, name)), name
