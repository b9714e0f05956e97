"""The Structure Score's figures as plain data: validation, triple counts, economy, clades.

`score_figures` returns every field of `worldkit.infoorg.scoring.StructureScore` as a plain dict
(levels as `{depth: {g, o, m, agreed, conflicting, unresolved}}`); `scoring` wraps it in the
pydantic model, and the plain `worldkit infoorg score-trees` prints it without importing
pydantic (issue 18: ≤ 0.5 s end to end). Work is done per distinct folder pair, not per record,
so 100,000 records score in a fraction of a second (issue 19: ≤ 1.5 s).

This module imports no third-party library and never touches the filesystem.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from worldkit.errors import UsageError
from worldkit.infoorg._triples import RawLevel, count_levels, joint_rows, match_clades
from worldkit.infoorg.tree import IndexedTree, InvalidHierarchy, folder_name_problem, index_paths

__all__ = [
    "ECONOMY_LAMBDA",
    "MAX_PROBLEMS",
    "check_lambda",
    "invalid_figures",
    "reference_paths",
    "score_pairs",
    "score_figures",
]

ECONOMY_LAMBDA = 0.2
"""λ in E = 1 − λ · max(0, u(O) − u(R)) / n(O)."""

MAX_PROBLEMS = 50
"""Validity problems listed before the rest are summarized as a count."""

FolderPath = tuple[str, ...]
"""The folders above one record, from the top."""

Figures = dict[str, Any]
"""Every field of `StructureScore`, by name."""

_UNSCORED = (
    "f1_bal", "recall_bal", "precision_bal", "E", "penalty", "triplet_f1", "triplet_precision",
    "triplet_recall", "category", "clade_f1", "exact", "unsupported_refinement",
)  # fmt: skip


def _record_name_problems(paths: Mapping[str, Sequence[str]]) -> dict[str, str]:
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


def _bad_names(paths: Iterable[tuple[object, ...]]) -> bool:
    """Whether any folder name on the distinct `paths` is disallowed (each name checked once)."""
    return any(folder_name_problem(name) for name in set().union(*paths))


def _reference_problem(reference: Mapping[str, Sequence[str]]) -> InvalidHierarchy:
    problems = _record_name_problems(reference)
    record = min(problems)
    return InvalidHierarchy(
        f"reference record {record}: {problems[record]}; fix the reference hierarchy"
    )


def reference_paths(reference: Mapping[str, Sequence[str]]) -> list[FolderPath]:
    """The reference's paths in its record order, or `InvalidHierarchy` naming a bad record."""
    if not reference:
        raise InvalidHierarchy("the reference holds no records; a reference needs records")
    paths = list(map(tuple, reference.values()))
    try:
        bad = _bad_names(dict.fromkeys(paths))
    except TypeError:  # an unhashable name is certainly not a folder name
        bad = True
    if bad and _record_name_problems(reference):
        raise _reference_problem(reference)
    return paths


def _output_problems(
    reference: Mapping[str, Sequence[str]], output: Mapping[str, Sequence[str]]
) -> list[str]:
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
        for record, problem in sorted(_record_name_problems(output).items())
    ]
    return problems


def invalid_figures(n_records: int, problems: list[str]) -> Figures:
    """The figures of an invalid output: S = 0 and nothing else is computed."""
    if len(problems) > MAX_PROBLEMS:
        rest = len(problems) - MAX_PROBLEMS
        problems = problems[:MAX_PROBLEMS] + [f"… and {rest} more problems"]
    figures: Figures = {"valid": False, "problems": problems, "n_records": n_records, "S": 0.0}
    figures.update(dict.fromkeys(_UNSCORED), levels={})
    return figures


def check_lambda(economy_lambda: float) -> float:
    """λ as a float, or `UsageError` when it lies outside [0, 1]."""
    if not 0.0 <= economy_lambda <= 1.0:
        raise UsageError(
            f"economy λ must lie in [0, 1], got {economy_lambda}; the paper uses 0.2 (0 and 0.4 "
            "in Appendix F)"
        )
    return float(economy_lambda)


def score_figures(
    reference: Mapping[str, Sequence[str]],
    output: Mapping[str, Sequence[str]],
    economy_lambda: float = ECONOMY_LAMBDA,
) -> Figures:
    """The figures of `worldkit.infoorg.scoring.score_trees` (see there), as a plain dict."""
    if reference and reference.keys() == output.keys():
        try:  # one pass over the records; names are then checked once per distinct path
            out_paths = map(tuple, map(output.__getitem__, reference))
            pairs = Counter(zip(map(tuple, reference.values()), out_paths))
            bad_reference = _bad_names(dict.fromkeys(path for path, _ in pairs))
            bad_output = _bad_names(dict.fromkeys(path for _, path in pairs))
        except TypeError:  # an unhashable name: the record-by-record checks below report it
            pass
        else:
            if bad_reference:
                raise _reference_problem(reference)
            if not bad_output:
                return score_pairs(pairs, check_lambda(economy_lambda))
    ref = reference_paths(reference)
    problems = _output_problems(reference, output)
    if problems:
        return invalid_figures(len(ref), problems)
    out = [tuple(output[record]) for record in reference]
    return score_pairs(Counter(zip(ref, out)), check_lambda(economy_lambda))


def _single_child_folders(tree: IndexedTree, records_in: list[int]) -> int:
    """u(T): folders (the root included) with exactly one child, sub-folder or record."""
    return sum(1 for folders, records in zip(tree.subfolders, records_in) if folders + records == 1)


def _harmonic(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


Ratios = tuple[float | None, float | None, float | None]


def _balanced(levels: Mapping[int, RawLevel]) -> Ratios:
    """(recall_bal, precision_bal, f1_bal); all None when the reference resolves no triple."""
    informative = [c for c in levels.values() if c.g > 0]
    if not informative:
        return None, None, None
    with_output = [c for c in informative if c.o > 0]
    recall = sum(c.m / c.g for c in informative) / len(informative)
    precision = sum(c.m / c.o for c in with_output) / len(with_output) if with_output else 0.0
    return recall, precision, _harmonic(precision, recall)


def _pooled(levels: Mapping[int, RawLevel]) -> Ratios:
    """(recall, precision, F1) over all triples; all None when the reference resolves none."""
    total_g = sum(c.g for c in levels.values())
    if not total_g:
        return None, None, None
    total_o = sum(c.o for c in levels.values())
    total_m = sum(c.m for c in levels.values())
    recall, precision = total_m / total_g, (total_m / total_o if total_o else 0.0)
    return recall, precision, _harmonic(precision, recall)


def _category(levels: Mapping[int, RawLevel], same_shape: bool) -> str:
    if same_shape:
        return "none"
    parent_ok = all(c.m == c.g for depth, c in levels.items() if depth == 0)
    leaf_ok = all(c.m == c.g for depth, c in levels.items() if depth >= 1)
    if leaf_ok and not parent_ok:
        return "parent"
    if parent_ok and not leaf_ok:
        return "leaf"
    return "both"


def score_pairs(pairs: Mapping[tuple[FolderPath, FolderPath], int], economy_lambda: float) -> Figures:
    """The figures of a valid output from its path pairs: `pairs[(r, o)]` counts the records
    with reference folders r and output folders o (`Counter(zip(reference, output))`)."""
    ref, ref_node = index_paths(path for path, _ in pairs)
    out, out_node = index_paths(path for _, path in pairs)
    cells = {(ref_node[r], out_node[o]): x for (r, o), x in pairs.items()}
    rows = joint_rows(ref, out, cells)
    levels = count_levels(ref, out, rows)
    clades = match_clades(ref, out, rows)

    ref_records, out_records = [0] * ref.node_count, [0] * out.node_count
    for (a, b), x in cells.items():
        ref_records[a] += x
        out_records[b] += x
    u_ref = _single_child_folders(ref, ref_records)
    u_out = _single_child_folders(out, out_records)
    economy = 1.0 - economy_lambda * max(0, u_out - u_ref) / out.node_count

    recall, precision, f1_bal = _balanced(levels)
    t_recall, t_precision, triplet_f1 = _pooled(levels)
    both = clades.reference_clades + clades.output_clades
    return {
        "valid": True,
        "problems": [],
        "n_records": sum(pairs.values()),
        "S": None if f1_bal is None else f1_bal * economy,
        "f1_bal": f1_bal,
        "recall_bal": recall,
        "precision_bal": precision,
        "E": economy,
        "penalty": 1.0 - economy,
        "triplet_f1": triplet_f1,
        "triplet_precision": t_precision,
        "triplet_recall": t_recall,
        "category": _category(levels, clades.same_shape),
        "clade_f1": 2 * clades.shared_clades / both if both else 1.0,
        "exact": clades.shared_clades == clades.reference_clades == clades.output_clades,
        "levels": {
            depth: {
                "g": c.g,
                "o": c.o,
                "m": c.m,
                "agreed": c.m,
                "conflicting": c.conflicting,
                "unresolved": c.g - c.m - c.conflicting,
            }
            for depth, c in levels.items()
        },
        "unsupported_refinement": sum(c.o for c in levels.values() if c.g == 0),
    }
