"""Brute-force Structure Score: paper Appendix D's definitions, written as literally as possible.

This is the reference implementation used only for verification (the unit tests and
`bench/score.py` compare `worldkit.infoorg.scoring` against it). It enumerates every record
triple, so it is O(n³): never call it from scoring code. It shares no code with the fast scorer
on purpose — wrapper removal, depths, levels, economy, clades and the shape comparison are all
re-derived here from the definitions. Inputs are assumed valid (same records, allowed names).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

__all__ = ["SHAPES", "brute_force_score", "perturb", "random_hierarchy"]


def _drop_wrapper(paths: Mapping[str, Sequence[str]]) -> dict[str, tuple[str, ...]]:
    paths = {r: tuple(p) for r, p in paths.items()}
    k = 0
    while True:
        heads = {p[k] if len(p) > k else None for p in paths.values()}
        if len(heads) != 1 or None in heads:
            break
        k += 1
    return {r: p[k:] for r, p in paths.items()}


def _d(p: tuple[str, ...], q: tuple[str, ...]) -> int:
    k = 0
    while k < len(p) and k < len(q) and p[k] == q[k]:
        k += 1
    return k


def _rho(paths: Mapping[str, tuple[str, ...]], triple: tuple[str, str, str]) -> Any:
    """The pair with the unique largest shared depth, else None (unresolved)."""
    scored = [(_d(paths[a], paths[b]), frozenset((a, b))) for a, b in combinations(triple, 2)]
    best = max(s for s, _ in scored)
    winners = [pair for s, pair in scored if s == best]
    return winners[0] if len(winners) == 1 else None


def _folders(paths: Mapping[str, tuple[str, ...]]) -> dict[tuple[str, ...], list[Any]]:
    """folder path → its children (sub-folder paths and record ids); the root is ()."""
    children: dict[tuple[str, ...], set[Any]] = {(): set()}
    for record, path in paths.items():
        for k in range(1, len(path) + 1):
            children.setdefault(path[:k], set())
            children[path[: k - 1]].add(("folder", path[:k]))
        children[path].add(("record", record))
    return {folder: sorted(kids) for folder, kids in children.items()}


def _economy(ref: Mapping[str, tuple[str, ...]], out: Mapping[str, tuple[str, ...]]) -> float:
    ref_folders, out_folders = _folders(ref), _folders(out)
    u_ref = sum(1 for kids in ref_folders.values() if len(kids) == 1)
    u_out = sum(1 for kids in out_folders.values() if len(kids) == 1)
    return 1 - 0.2 * max(0, u_out - u_ref) / len(out_folders)


def _clades(paths: Mapping[str, tuple[str, ...]]) -> set[frozenset[str]]:
    n = len(paths)
    found = set()
    for folder in _folders(paths):
        below = frozenset(r for r, p in paths.items() if p[: len(folder)] == folder)
        if 1 < len(below) < n:
            found.add(below)
    return found


def _shape(paths: Mapping[str, tuple[str, ...]]) -> str:
    """A canonical string of the unlabeled, unordered folder tree with its record leaves."""
    folders = _folders(paths)

    def canon(folder: tuple[str, ...]) -> str:
        parts = []
        for kind, item in folders[folder]:
            parts.append(canon(item) if kind == "folder" else f"r:{item}")
        return "(" + ",".join(sorted(parts)) + ")"

    return canon(())


def _harmonic(p: float, r: float) -> float:
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def brute_force_score(
    reference: Mapping[str, Sequence[str]], output: Mapping[str, Sequence[str]]
) -> dict[str, Any]:
    """Every Structure Score figure by enumerating all triples (see the module docstring).

    Returns a plain dict with the keys of `StructureScore` (levels as {level: {g, o, m, agreed,
    conflicting, unresolved}}); `S`, `f1_bal` and `triplet_f1` are None when the reference
    resolves no triple.
    """
    ref, out = _drop_wrapper(reference), _drop_wrapper(output)
    records = sorted(ref)
    levels: dict[int, dict[str, int]] = {}
    for triple in combinations(records, 3):
        level = min(_d(ref[a], ref[b]) for a, b in combinations(triple, 2))
        counts = levels.setdefault(
            level, dict(g=0, o=0, m=0, agreed=0, conflicting=0, unresolved=0)
        )
        rho_r, rho_o = _rho(ref, triple), _rho(out, triple)
        if rho_r is not None:
            counts["g"] += 1
            if rho_o is None:
                counts["unresolved"] += 1
            elif rho_o == rho_r:
                counts["m"] += 1
                counts["agreed"] += 1
            else:
                counts["conflicting"] += 1
        if rho_o is not None:
            counts["o"] += 1
    levels = {k: v for k, v in sorted(levels.items()) if v["g"] or v["o"]}

    informative = [k for k, v in levels.items() if v["g"] > 0]
    with_output = [k for k in informative if levels[k]["o"] > 0]
    economy = _economy(ref, out)
    if informative:
        recall = sum(levels[k]["m"] / levels[k]["g"] for k in informative) / len(informative)
        precision = (
            sum(levels[k]["m"] / levels[k]["o"] for k in with_output) / len(with_output)
            if with_output
            else 0.0
        )
        f1_bal: float | None = _harmonic(precision, recall)
    else:
        f1_bal = None
    total_g = sum(v["g"] for v in levels.values())
    total_o = sum(v["o"] for v in levels.values())
    total_m = sum(v["m"] for v in levels.values())
    triplet_f1 = (
        _harmonic(total_m / total_o if total_o else 0.0, total_m / total_g) if total_g else None
    )

    def all_agreed(which: Sequence[int]) -> bool:
        return all(levels[k]["agreed"] == levels[k]["g"] for k in which)

    parent_ok = all_agreed([k for k in levels if k == 0])
    leaf_ok = all_agreed([k for k in levels if k >= 1])
    if _shape(ref) == _shape(out):
        category = "none"
    elif leaf_ok and not parent_ok:
        category = "parent"
    elif parent_ok and not leaf_ok:
        category = "leaf"
    else:
        category = "both"

    clades_r, clades_o = _clades(ref), _clades(out)
    if not clades_r and not clades_o:
        clade_f1 = 1.0
    else:
        clade_f1 = 2 * len(clades_r & clades_o) / (len(clades_r) + len(clades_o))
    return {
        "S": None if f1_bal is None else f1_bal * economy,
        "f1_bal": f1_bal,
        "E": economy,
        "triplet_f1": triplet_f1,
        "category": category,
        "clade_f1": clade_f1,
        "exact": clades_r == clades_o,
        "levels": levels,
        "unsupported_refinement": sum(v["o"] for k, v in levels.items() if v["g"] == 0),
    }


# ---- random hierarchies for verification and benchmarks --------------------------------------

SHAPES = ("random", "two_level", "flat", "singletons", "chain", "caterpillar", "inbox", "root")


def random_hierarchy(
    rng: random.Random, records: Sequence[str], shape: str = "random"
) -> dict[str, list[str]]:
    """A hierarchy over `records` of the given shape (see SHAPES), drawn from `rng`.

    random: paths of depth 0–4 over a tiny alphabet (records in inner folders, uneven depths);
    two_level: parent/leaf like the benchmark's references; flat: one folder; singletons: a
    folder per record; chain: a deep single-child chain, then a split; caterpillar: record i at
    depth i; inbox: everything in `inbox`; root: everything at the root.
    """
    n = len(records)
    if shape == "random":
        alphabet = ["a", "b", "c", "d"][: rng.randint(1, 4)]
        depth = rng.randint(0, 4)
        return {r: [rng.choice(alphabet) for _ in range(rng.randint(0, depth))] for r in records}
    if shape == "two_level":
        parents = rng.randint(1, max(1, n // 3))
        leaves = rng.randint(1, 4)
        return {r: [f"p{rng.randrange(parents)}", f"l{rng.randrange(leaves)}"] for r in records}
    if shape == "flat":
        return {r: ["all"] for r in records}
    if shape == "singletons":
        return {r: [f"s{i}"] for i, r in enumerate(records)}
    if shape == "chain":
        stem = [f"c{k}" for k in range(rng.randint(1, 8))]
        return {r: stem + [f"x{rng.randrange(3)}"] * rng.randint(0, 2) for r in records}
    if shape == "caterpillar":
        return {r: [f"d{k}" for k in range(i)] for i, r in enumerate(records)}
    if shape == "inbox":
        return {r: ["inbox"] for r in records}
    if shape == "root":
        return {r: [] for r in records}
    raise ValueError(f"unknown shape {shape!r}; choose one of {SHAPES}")


def perturb(
    rng: random.Random, paths: Mapping[str, Sequence[str]], moves: int
) -> dict[str, list[str]]:
    """`paths` with records moved or swapped, folders moved, merged or nested (near misses)."""
    out = {r: list(p) for r, p in paths.items()}
    records = sorted(out)
    for _ in range(moves):
        kind = rng.choice(("record", "swap", "folder", "merge", "nest"))
        victim = rng.choice(records)
        other = rng.choice(records)
        target = out[other]
        if kind == "swap":
            out[victim], out[other] = out[other], out[victim]
        elif kind == "record":
            out[victim] = list(target) + ([f"n{rng.randrange(3)}"] if rng.random() < 0.3 else [])
        elif out[victim]:
            cut = rng.randint(1, len(out[victim]))
            prefix = out[victim][:cut]
            for r in records:
                if out[r][:cut] == prefix:
                    rest = out[r][cut:]
                    if kind == "folder":
                        out[r] = list(target[: rng.randint(0, len(target))]) + [f"m{cut}"] + rest
                    elif kind == "merge":
                        out[r] = prefix[:-1] + rest
                    else:
                        out[r] = prefix + ["nest"] + rest
    return out
