"""Near-duplicate share of a seat's files: how much of what an employee sees is one template re-filled.

Each file's text is *masked* (people's names, dates, IDs and every remaining digit replaced by a
placeholder, whitespace collapsed), and files whose masked texts are identical form a group. The
share is the files in groups of two or more over all files. Twenty batch summaries that differ
only in lot number, dates and operators are one group of 20; a batch summary that records its own
events is not in any group. Office documents are measured on the text their template renders
(what the DOCX, PDF or XLSX file holds), so the measure needs no office rendering.

Pure over its inputs; reads no clock and writes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from worldkit.materialize.project import Projection

__all__ = ["NearDuplicates", "mask_text", "near_duplicates", "seat_near_duplicates"]

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATES = [
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?\b"),
    re.compile(rf"\b\d{{1,2}} {_MONTH},? \d{{4}}\b"),
    re.compile(rf"\b{_MONTH} \d{{1,2}},? \d{{4}}\b"),
    re.compile(rf"\b{_MONTH} \d{{4}}\b"),
    re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b"),
]
_ID = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[-_/.][A-Za-z0-9]+)+\b")
_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")


def _name_pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted({n.strip() for n in names if n and n.strip()}, key=lambda n: (-len(n), n))
    if not words:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")


def _id_or_word(match: re.Match[str]) -> str:
    token = match.group()
    return "<ID>" if any(c.isdigit() for c in token) else token


def mask_text(text: str, names: re.Pattern[str] | Iterable[str] = ()) -> str:
    """`text` with names, dates, IDs (tokens joined by `-`, `_`, `/` or `.` holding a digit) and
    digits masked, and runs of whitespace made one space."""
    pattern = names if isinstance(names, re.Pattern) else _name_pattern(names)
    if pattern is not None:
        text = pattern.sub("<NAME>", text)
    for date in _DATES:
        text = date.sub("<DATE>", text)
    text = _ID.sub(_id_or_word, text)
    text = _DIGITS.sub("#", text)
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class NearDuplicates:
    """Files grouped by masked text."""

    files: int
    """Files measured."""
    groups: list[list[str]]
    """Groups of two or more files with the same masked text (paths sorted; largest group first)."""

    @property
    def in_groups(self) -> int:
        """Files that sit in a group."""
        return sum(len(g) for g in self.groups)

    @property
    def share(self) -> float:
        """`in_groups / files` (0 for no files)."""
        return self.in_groups / self.files if self.files else 0.0

    @property
    def largest(self) -> int:
        return len(self.groups[0]) if self.groups else 0

    def as_json(self) -> dict[str, object]:
        return {"files": self.files, "in_groups": self.in_groups, "groups": len(self.groups),
                "share": round(self.share, 4), "largest": self.largest,
                "largest_example": self.groups[0][0] if self.groups else None}


def near_duplicates(texts: Mapping[str, str], names: Iterable[str] = ()) -> NearDuplicates:
    """Group `texts` (path → text) by masked text, masking `names` (people's names) as well."""
    pattern = _name_pattern(names)
    return _grouped({path: mask_text(text, pattern or ()) for path, text in texts.items()})


def _grouped(masked: Mapping[str, str]) -> NearDuplicates:
    """Group the paths of `masked` (path → masked text) by their masked text."""
    by_mask: dict[str, list[str]] = {}
    for path in sorted(masked):
        by_mask.setdefault(masked[path], []).append(path)
    groups = sorted((g for g in by_mask.values() if len(g) > 1), key=lambda g: (-len(g), g[0]))
    return NearDuplicates(files=len(masked), groups=groups)


def person_names(projection: Projection) -> list[str]:
    """The world's people's names, whole and word by word (a signature often gives only a surname)."""
    names: set[str] = set()
    for person in projection.state.people.values():
        names.add(person.name)
        names.update(part for part in person.name.split() if len(part) > 2)
    return sorted(names)


def seat_near_duplicates(projection: Projection, masked_texts: dict[str, str] | None = None) -> NearDuplicates:
    """The near-duplicate groups among the files (documents) of one seat's projection.

    `masked_texts` (document id → masked text), when given, is read and filled: pass one map to the
    seats of one revision and date, whose shared documents render the same for every seat that sees
    them (`worldkit.materialize.memo`), so each is rendered and masked once.
    """
    shared: dict[str, str] = {} if masked_texts is None else masked_texts
    snapshot = projection.snapshot
    pattern = _name_pattern(person_names(projection)) or ()
    masked: dict[str, str] = {}
    for d in projection.documents:
        text = shared.get(d)
        if text is None:
            text = shared[d] = mask_text(projection.renderer.document_text(snapshot.documents[d]), pattern)
        masked[projection.document_path(d)] = text
    return _grouped(masked)
