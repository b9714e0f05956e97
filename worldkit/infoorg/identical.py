"""The identical-record check of Table 15: how much of a reference hinges on records with equal text.

For each reference triple that the reference resolves, the reference paths of two records with
identical text but different paths are exchanged, one pair at a time; the triple is *changed* if
any exchange alters its closest pair or leaves it unresolved. Triples are counted at the level
where their three records part (0: under the root, i.e. the parent level; 1: inside one parent,
the leaf level). Everything else (record set, group sizes) stays fixed, so the shares are a lower
bound on ambiguity from record content. The check changes no score.

Exact and small: packets hold 36-60 records, so the triples through the exchanged records are
enumerated directly. Pure functions; no file access.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["IdenticalLevel", "identical_pairs", "identical_record_check"]


class IdenticalLevel(BaseModel):
    """Resolved reference triples at one level and how many an exchange changes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    triples: int
    """Reference triples resolved at this level."""
    changed: int
    """Of those, triples whose closest pair some exchange alters or leaves unresolved."""


def _common(a: Sequence[str], b: Sequence[str]) -> int:
    depth = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        depth += 1
    return depth


def _closest(paths: Mapping[str, Sequence[str]], a: str, b: str, c: str) -> tuple[int, str] | None:
    """(level, the record outside the closest pair) or None when the triple is unresolved."""
    ab, ac, bc = _common(paths[a], paths[b]), _common(paths[a], paths[c]), _common(paths[b], paths[c])
    top = max(ab, ac, bc)
    if [ab, ac, bc].count(top) != 1:
        return None
    return min(ab, ac, bc), (c if ab == top else b if ac == top else a)


def identical_pairs(
    paths: Mapping[str, Sequence[str]], texts: Mapping[str, str]
) -> list[tuple[str, str]]:
    """Pairs of records with identical text and different reference paths, sorted."""
    by_text: dict[str, list[str]] = {}
    for record in sorted(paths):
        by_text.setdefault(texts[record], []).append(record)
    return [
        (a, b)
        for group in by_text.values()
        for a, b in itertools.combinations(group, 2)
        if tuple(paths[a]) != tuple(paths[b])
    ]


def identical_record_check(
    paths: Mapping[str, Sequence[str]], texts: Mapping[str, str]
) -> dict[int, IdenticalLevel]:
    """Level -> resolved reference triples and the ones changed by exchanging identical records."""
    records = sorted(paths)
    triples: dict[int, int] = {}
    resolved: dict[tuple[str, str, str], tuple[int, str]] = {}
    for triple in itertools.combinations(records, 3):
        found = _closest(paths, *triple)
        if found is not None:
            resolved[triple] = found
            triples[found[0]] = triples.get(found[0], 0) + 1
    changed: set[tuple[str, str, str]] = set()
    for x, y in identical_pairs(paths, texts):
        swapped = dict(paths)
        swapped[x], swapped[y] = paths[y], paths[x]
        for triple, before in resolved.items():
            if triple in changed or (x not in triple and y not in triple):
                continue
            after = _closest(swapped, *triple)
            if after is None or after[1] != before[1]:
                changed.add(triple)
    counts: dict[int, int] = {}
    for triple in changed:
        level = resolved[triple][0]
        counts[level] = counts.get(level, 0) + 1
    return {
        level: IdenticalLevel(triples=total, changed=counts.get(level, 0))
        for level, total in sorted(triples.items())
    }
