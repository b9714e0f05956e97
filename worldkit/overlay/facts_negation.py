"""How the `facts` judge reads a claim the way a careful grader would: polarity, hedges, echoes.

`claims.Claim.match` only says that a claim's terms share a window. A careful grader also asks
whether the sentence *affirms* them. This module decides, for one claim in one window:

- **negated**: a term is governed by a negation or a contrary qualifier in its own clause —
  a cue before it (`not`, `no need to`, `without`, `instead of`, `rather than`, …, at most
  `SCOPE_WORDS` words back, not across `,;:()` or `but`/`however`/`and`) or a qualifier after it
  (`is not necessary`, `is unnecessary`, `can be skipped`). A cue inside a matched term of the
  same claim belongs to the claim (`{regex: "not HPLC-07"}` declares a negative fact); idioms
  that negate nothing (`not only`, `no later than`) are no cues.
- **hedged**: the window only wonders (a question, `if`/`unless`/`whether`, `perhaps`,
  `possibly`, `might`, `maybe`): it neither states nor denies.

It also removes the **request's own wording** from a deliverable (`strip_echo`): a sentence
most of whose word trigrams occur in the request restates the assignment and proves nothing
(headings are kept: they structure the answer, the sentences under them are judged).

Pure functions over strings; never imports a check type and never decides a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from worldkit.overlay.claims import AnyTerm, Claim, DateTerm, NumberTerm, RegexTerm, TextTerm, windows
from worldkit.overlay.values import id_pattern

__all__ = ["ECHO_SHARE", "SCOPE_WORDS", "Reading", "read_claim", "strip_echo"]

Polarity = Literal["stated", "hedged", "negated"]
SCOPE_WORDS = 6
"""How many words before a term a negation cue may stand and still govern it."""
ECHO_SHARE = 0.5
"""A sentence is the request's own wording when at least this share of its word trigrams is in the request."""
ECHO_MIN_TRIGRAMS = 6
"""Shorter sentences (under eight words) are answers, not restatements, whatever words they share."""

_CUE = re.compile(
    r"\b(?:not|no|never|none|nor|neither|without|cannot|can't|won't|don't|doesn't|didn't|isn't|aren't|wasn't|"
    r"weren't|shouldn't|mustn't|needn't|instead\s+of|rather\s+than|other\s+than|except|apart\s+from|avoid(?:s|ed|ing)?|"
    r"unnecessary|no\s+longer)\b",
    re.IGNORECASE,
)
_IDIOM = re.compile(
    r"\b(?:not\s+only|no\s+later\s+than|not\s+later\s+than|no\s+more\s+than|no\s+less\s+than|not\s+least|"
    r"no\s+sooner|not\s+before)\b",
    re.IGNORECASE,
)
_CONTRARY_AFTER = re.compile(
    r"^[^,;:()]{0,40}?\b(?:(?:is|are|was|were|be|seems?)\s+(?:not\s+(?:necessary|needed|required|warranted|justified)|"
    r"unnecessary|optional|superfluous)|not\s+(?:necessary|needed|required)|can\s+be\s+(?:skipped|waived|omitted|dropped))\b",
    re.IGNORECASE,
)
_RESTRICTION = re.compile(r"\b(?:until|before|unless|pending)\b", re.IGNORECASE)
_BOUNDARY = re.compile(r"[,;:()\[\]\u2013\u2014\n]|[.!?](?=\s)|\s-\s|"
                       r"\b(?:but|however|whereas|although|though|while|and|so|because|since|then)\b",
                       re.IGNORECASE)  # fmt: skip
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)", re.MULTILINE)
_HEDGE = re.compile(r"^\W*(?:if|unless|whether)\b|\b(?:perhaps|possibly|might|maybe|it is unclear)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Reading:
    """How a claim reads in a text: its best polarity and the window showing it (None if absent)."""

    polarity: Polarity | None
    window: str = ""


def _spans(term: object, window: str) -> list[tuple[int, int]] | None:
    """Where a term occurs in the window; None for a term without a place (a number, a date)."""
    if isinstance(term, TextTerm):
        return [m.span() for m in re.finditer(id_pattern(term.text), window, re.IGNORECASE)]
    if isinstance(term, RegexTerm):
        spans = [m.span() for m in re.finditer(term.regex, window, re.IGNORECASE) if m.end() > m.start()]
        return spans or None  # only empty matches: a pure look-around, no place to scope
    if isinstance(term, AnyTerm):
        found: list[tuple[int, int]] = []
        for inner in term.any:
            spans = _spans(inner, window)
            if spans is None and inner.found(window):
                return None
            found += spans or []
        return found
    if isinstance(term, (NumberTerm, DateTerm)):
        return None
    return None


def _negated(window: str, span: tuple[int, int], owned: list[tuple[int, int]]) -> bool:
    start, end = span
    before = window[:start]
    cut = 0
    for boundary in _BOUNDARY.finditer(before):
        if not any(s <= boundary.start() < e for s, e in owned):
            cut = boundary.end()
    clause = before[cut:]
    words = [m.start() for m in re.finditer(r"\S+", clause)]
    tail_start = words[-SCOPE_WORDS] if len(words) >= SCOPE_WORDS else 0
    idioms = [m.span() for m in _IDIOM.finditer(clause)]
    for cue in _CUE.finditer(clause):
        absolute = (cut + cue.start(), cut + cue.end())
        if cue.start() < tail_start:
            continue
        if any(s <= absolute[0] < e for s, e in owned):
            continue  # the claim declares this negation itself
        if any(s <= cue.start() < e for s, e in idioms):
            continue
        if _RESTRICTION.search(window, absolute[1]):
            continue  # "not to take consent until CONS-101": a condition on the act, not its denial
        return True
    return _CONTRARY_AFTER.match(window[end:]) is not None


def _window_polarity(claim: Claim, window: str) -> Polarity | None:
    if not all(term.found(window) for term in claim.all):
        return None
    spans = [_spans(term, window) for term in claim.all]
    owned = [s for found in spans if found for s in found]
    for found in spans:
        if found is None:
            continue
        if found and all(_negated(window, span, owned) for span in found):
            return "negated"
    # Hedges are read in the sentences that hold the claim's terms, not across a whole section.
    sentences = [m for m in _SENTENCE.finditer(window) if any(m.start() <= s < m.end() for s, _e in owned)]
    if not sentences:
        return "hedged" if _hedged(window) else "stated"
    return "hedged" if all(_hedged(m.group(0)) for m in sentences) else "stated"


def _hedged(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or _HEDGE.search(sentence) is not None


_RANK = {"stated": 3, "hedged": 2, "negated": 1}


_READ: dict[int, tuple[Claim, dict[str, Polarity | None]]] = {}
"""id(claim) → (the claim, its polarity by window): grading reads each claim over the texts of every
criterion and variant, whose windows are mostly the same sentences. The claim is kept beside its
readings, so an id is never taken for another (a frozen model: its readings never change)."""
_READ_CLAIMS = 512
_READ_WINDOWS = 4096
"""Claims, and windows per claim, kept at most (all are dropped when either is exceeded)."""


def _readings(claim: Claim) -> dict[str, Polarity | None]:
    found = _READ.get(id(claim))
    if found is None or found[0] is not claim or len(found[1]) > _READ_WINDOWS:
        if len(_READ) >= _READ_CLAIMS:
            _READ.clear()
        found = _READ[id(claim)] = (claim, {})
    return found[1]


def read_claim(claim: Claim, text: str) -> Reading:
    """The claim's best reading over every window of the text: stated > hedged > negated > absent."""
    best = Reading(None)
    known = _readings(claim)
    for window in _cached_windows(text, claim.within):
        if window in known:
            polarity = known[window]
        else:
            polarity = known[window] = _window_polarity(claim, window)
        if polarity is not None and (best.polarity is None or _RANK[polarity] > _RANK[best.polarity]):
            best = Reading(polarity, window)
            if polarity == "stated":
                break
    return best


@lru_cache(maxsize=256)
def _cached_windows(text: str, within: str) -> tuple[str, ...]:
    return tuple(windows(text, within, keep_questions=True))  # type: ignore[arg-type]


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[^\W_]+(?:[-'][^\W_]+)*", text.casefold())
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


@lru_cache(maxsize=1024)
def strip_echo(text: str, request: str) -> str:
    """The text without the sentences that restate the request (line and paragraph breaks kept); kept
    for the last distinct pairs (each criterion's facts are read over the same deliverable texts)."""
    asked = _trigrams(request)
    if not asked:
        return text
    lines = []
    for line in text.split("\n"):
        if line.lstrip().startswith("#"):
            lines.append(line)  # a heading structures the answer; what it heads is what counts
            continue
        kept = []
        for sentence in _SENTENCE_END.split(line):
            grams = _trigrams(sentence)
            if len(grams) >= ECHO_MIN_TRIGRAMS and len(grams & asked) / len(grams) >= ECHO_SHARE:
                continue
            kept.append(sentence)
        lines.append(" ".join(kept))
    return "\n".join(lines)
