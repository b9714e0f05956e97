"""Verifier bytes on the candidate side: what counts, and how it is found.

A **verifier item** is a piece of verifier-only material: each reference file; the reference
answer and every string in the structured reference answers; the text arguments of the oracle's
state-changing actions (`write_file` content, `send_message` subject/body, `update_record`
text); every truth fact, unsafe claim and adjudication question; every criterion's text and
judge guidance; the truth facts of semantic criteria and the counterfactual deliverables' texts;
and every file of an applied verifier package. Evidence anchors and check
operands (e.g. `contains: "99.1"`) are not verifier items: they are facts the candidate must be
able to find.

A verifier item **leaks** when

1. *bytes*: its exact bytes have the SHA-256 of a candidate file (any size); or
2. *text*: one of its paragraphs (text between blank lines), with whitespace runs collapsed
   to one space, is at least `LEAK_MIN_CHARS` characters long and occurs verbatim
   (case-sensitive) in the text of a candidate file after the same collapsing. The text of a
   JSON/JSONL file includes its decoded string values, so escaping does not hide a leak.

Short strings are exempt from rule 2 because single facts legitimately appear in evidence.
A leak is allowed only when a `reviewed_overlaps` entry carries the SHA-256 of the whole item's
bytes or of the collapsed paragraph (both are reported). The candidate side is the projection
(full: every condition's files are a subset of it), `request.md`, the workspace seeds and
`tool-config.json`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from worldkit.canon import sha256_bytes
from worldkit.overlay.models import Overlay
from worldkit.overlay.view import json_strings, readable_text
from worldkit.tools.specs import TOOLS_BY_NAME

LEAK_MIN_CHARS = 40
"""Shortest collapsed paragraph that counts as a verifier text on the candidate side."""

_TEXT_ARGS = ("content", "subject", "body", "text")


@dataclass(frozen=True)
class VerifierItem:
    label: str
    """Where the item comes from, e.g. `truth.facts[0]`, `reference_files[answer-key.md]`."""
    data: bytes


@dataclass(frozen=True)
class Leak:
    item: str
    """The verifier item's label."""
    candidate_path: str
    """The candidate file it was found in."""
    rule: Literal["bytes", "text"]
    """Identical file bytes, or a paragraph found in the file's text."""
    item_sha256: str
    """Digest of the item's bytes (list it in `reviewed_overlaps` to allow the whole item)."""
    unit_sha256: str
    """Digest of the collapsed paragraph found (or of the bytes, for rule `bytes`)."""
    excerpt: str
    """The first characters of what was found."""


def collapse(text: str) -> str:
    return " ".join(text.split())


def paragraphs(text: str) -> list[str]:
    """Collapsed paragraphs long enough to count under rule 2."""
    units = (collapse(p) for p in re.split(r"\n\s*\n", text))
    return [u for u in dict.fromkeys(units) if len(u) >= LEAK_MIN_CHARS]


def verifier_items(overlay: Overlay, references: dict[str, bytes]) -> list[VerifierItem]:
    """Every verifier item of an overlay (see the module docstring)."""
    items = [VerifierItem(f"reference_files[{name}]", data) for name, data in sorted(references.items())]

    def add(label: str, text: str | None) -> None:
        if text:
            items.append(VerifierItem(label, text.encode("utf-8")))

    ref = overlay.reference
    add("reference.answer", ref.answer)
    for index, text in enumerate(json_strings(ref.answers)):
        add(f"reference.answers[{index}]", text)
    for index, action in enumerate(ref.actions):
        spec = TOOLS_BY_NAME[action.tool]
        if not spec.read_only:
            for key in _TEXT_ARGS:
                value: Any = action.args.get(key)
                add(f"reference.actions[{index}].args.{key}", value if isinstance(value, str) else None)
    for field in ("facts", "unsafe_claims", "adjudication"):
        for index, text in enumerate(getattr(overlay.truth, field)):
            add(f"truth.{field}[{index}]", text)
    for criterion in overlay.rubric:
        add(f"rubric[{criterion.id}].text", criterion.text)
        add(f"rubric[{criterion.id}].guidance", criterion.guidance)
    for criterion_id, facts in sorted(overlay.truth.criteria.items()):
        for kind in ("required", "unsafe"):
            for index, fact in enumerate(getattr(facts, kind)):
                add(f"truth.criteria.{criterion_id}.{kind}[{index}]", fact.says)
    for variant in overlay.counterfactuals:
        add(f"counterfactuals[{variant.id}].description", variant.description)
        for path, text in sorted(variant.files.items()):
            add(f"counterfactuals[{variant.id}].files[{path}]", text)
        for index, edit in enumerate(variant.edits):
            add(f"counterfactuals[{variant.id}].edits[{index}].new", edit.new)
    return items


def find_leaks(
    items: Iterable[VerifierItem], candidate: Iterable[tuple[str, bytes]], reviewed: Iterable[str] = (),
    *, texts: dict[tuple[str, str], bytes] | None = None,
) -> list[Leak]:
    """Leaks of `items` into the `(path, bytes)` candidate files, minus reviewed overlaps.

    The search runs over the UTF-8 bytes of the collapsed texts (a UTF-8 needle matches only at a
    character boundary, so a match there is a match of the text, and bytes are searched several
    times faster than a text holding non-Latin-1 characters). `texts` (optional) keeps each
    candidate file's collapsed text by (path, digest) between calls that see the same files."""
    return split_reviewed(_all_leaks(items, candidate, texts), reviewed)


def split_reviewed(leaks: list[Leak], reviewed: Iterable[str]) -> list[Leak]:
    """The leaks of `find_leaks(..., ())` that `find_leaks(..., reviewed)` reports (same order)."""
    allowed = set(reviewed)
    return [leak for leak in leaks if leak.item_sha256 not in allowed and leak.unit_sha256 not in allowed]


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")


def _all_leaks(
    items: Iterable[VerifierItem], candidate: Iterable[tuple[str, bytes]], texts: dict[tuple[str, str], bytes] | None,
) -> list[Leak]:
    by_digest: dict[str, list[str]] = {}
    chunks: list[bytes] = []
    starts: list[int] = []
    paths: list[str] = []
    offset = 0
    memo = texts if texts is not None else {}
    for path, data in candidate:
        digest = sha256_bytes(data)
        by_digest.setdefault(digest, []).append(path)
        text = memo.get((path, digest))
        if text is None:
            text = memo[(path, digest)] = _encoded(collapse(readable_text(path, data))) + b"\x00"
        starts.append(offset)
        paths.append(path)
        chunks.append(text)
        offset += len(text)
    corpus = b"".join(chunks)
    leaks: list[Leak] = []
    for item in items:
        item_sha = sha256_bytes(item.data)
        for path in by_digest.get(item_sha, []):
            excerpt = item.data[:60].decode("utf-8", errors="replace")
            leaks.append(Leak(item.label, path, "bytes", item_sha, item_sha, excerpt))
        for unit in paragraphs(item.data.decode("utf-8", errors="replace")):
            needle = _encoded(unit)
            unit_sha = sha256_bytes(needle)
            seen: set[str] = set()
            at = corpus.find(needle)
            while at != -1:
                path = paths[bisect.bisect_right(starts, at) - 1]
                if path not in seen and path not in by_digest.get(item_sha, []):
                    seen.add(path)
                    leaks.append(Leak(item.label, path, "text", item_sha, unit_sha, unit[:60]))
                at = corpus.find(needle, at + 1)
    return leaks
