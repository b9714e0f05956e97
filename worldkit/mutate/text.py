"""The generator's own reading of written text: dates, identifiers, numbers, and where a claim sits.

These helpers find what to rewrite in a reference deliverable. They are deliberately simple and
independent of the grader's parsing (`worldkit.overlay.values`, `claims`, `tables`): the reference
is written by the task's author, so a plain reading finds its dates and claims, and a grader bug
is not hidden by the generator sharing it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

MONTHS = [calendar.month_name[m] for m in range(1, 13)]
SHORT = [calendar.month_abbr[m] for m in range(1, 13)]

_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_WRITTEN = re.compile(r"(?<![\w])(\d{1,2}) (" + "|".join(MONTHS + SHORT) + r")\.? (\d{4})(?!\d)")
ID = re.compile(r"(?<![\w-])[A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![\w-])")
"""An identifier as records are named: letters first, hyphen-joined parts, a digit somewhere."""
DECIMAL = re.compile(r"(?<![\w.\-/,])(\d+)\.(\d+)(?![\w.\-/]|,\d)")


def is_identifier(text: str) -> bool:
    return bool(ID.fullmatch(text)) and any(ch.isdigit() for ch in text)


def identifiers(text: str) -> list[str]:
    return sorted({m.group(0) for m in ID.finditer(text) if any(ch.isdigit() for ch in m.group(0))})


def dates(text: str) -> Iterator[tuple[re.Match[str], dt.date, str]]:
    """Every ISO (`2026-11-04`) or written (`4 Nov 2026`, `4 November 2026`) date: match, date, form."""
    for match in _ISO.finditer(text):
        try:
            yield match, dt.date(int(match.group(1)), int(match.group(2)), int(match.group(3))), "iso"
        except ValueError:
            continue
    for match in _WRITTEN.finditer(text):
        name = match.group(2)
        month = (MONTHS.index(name) if name in MONTHS else SHORT.index(name)) + 1
        try:
            yield match, dt.date(int(match.group(3)), month, int(match.group(1))), "long" if name in MONTHS else "short"
        except ValueError:
            continue


def write_date(day: dt.date, form: str) -> str:
    """`iso` 2026-11-04, `short` 4 Nov 2026, `long` 4 November 2026, `us` November 4, 2026,
    `slash` 04/11/2026 (day first; only for days after the 12th, where it cannot be misread)."""
    if form == "iso":
        return day.isoformat()
    if form == "short":
        return f"{day.day} {SHORT[day.month - 1]} {day.year}"
    if form == "long":
        return f"{day.day} {MONTHS[day.month - 1]} {day.year}"
    if form == "us":
        return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"
    if form == "slash":
        return f"{day.day:02d}/{day.month:02d}/{day.year}"
    raise ValueError(form)


def rewrite_dates(text: str, change: Any) -> str:
    """Replace every date by `change(date, form)` (a string, or None to leave it)."""
    spans = sorted(((m.start(), m.end(), d, f) for m, d, f in dates(text)), key=lambda s: s[0])
    out, last = [], 0
    for start, end, day, form in spans:
        if start < last:
            continue
        new = change(day, form)
        out.append(text[last:start] + (text[start:end] if new is None else new))
        last = end
    return "".join(out) + text[last:]


def shift(day: dt.date, by: str) -> dt.date:
    """A day later, or the same day a month later (clamped to the month's end)."""
    if by == "day":
        return day + dt.timedelta(days=1)
    month = day.month % 12 + 1
    year = day.year + (day.month == 12)
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def bump_identifier(ident: str) -> str:
    """A plausible wrong identifier: the last digit changed (`ZV-23004` → `ZV-23005`)."""
    digits = [i for i, ch in enumerate(ident) if ch.isdigit()]
    index = digits[-1]
    return ident[:index] + str((int(ident[index]) + 1) % 10) + ident[index + 1:]


# --- where a claim sits ------------------------------------------------------------------------


def _term_regex(term: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in re.split(r"[\s\-_/]+", term.strip()) if p]
    return re.compile(r"(?<![A-Za-z0-9])" + r"[\s\-_/]*".join(parts) + r"(?![A-Za-z0-9])", re.IGNORECASE)


def _numbers(window: str) -> list[float]:
    """Every number, a comma read both ways (`1,140` is 1140 or 1.14; the claim decides which it meant)."""
    found = []
    for m in re.finditer(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])", window):
        text = m.group(0)
        for reading in {text.replace(",", ""), text.replace(",", ".")}:
            try:
                found.append(float(reading))
            except ValueError:
                continue
    return found


def term_found(term: Any, window: str) -> bool:
    """A plain reading of one declared claim term in a window of reference text."""
    if isinstance(term, str):
        return bool(_term_regex(term).search(window))
    if not isinstance(term, dict):
        return False
    if "any" in term:
        return any(term_found(t, window) for t in term["any"])
    if "regex" in term:
        return re.search(term["regex"], window, re.IGNORECASE) is not None
    if "number" in term:
        tolerance = float(term.get("tolerance") or 1e-9)
        return any(abs(n - float(term["number"])) <= tolerance for n in _numbers(window))
    if "date" in term:
        return any(d == term["date"] for _, d, _ in dates(window))
    if "claim" in term:
        return all(term_found(t, window) for t in term["claim"])
    return False


def paragraphs(text: str) -> list[tuple[int, int]]:
    """(start, end) of each block between blank lines."""
    return [(m.start(), m.end()) for m in re.finditer(r"(?:[^\n]*\S[^\n]*(?:\n|$))+", text)]


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence: split after `.`/`!`/`?` followed by a space (or closing
    emphasis and a space: `**Response.** Text`), and at line ends."""
    spans = []
    for line in re.finditer(r"[^\n]+", text):
        start = line.start()
        for stop in re.finditer(r"(?<=[.!?])(?:\*\*|__)?\s+(?=\S)", line.group(0)):
            spans.append((start, line.start() + stop.start()))
            start = line.start() + stop.end()
        spans.append((start, line.end()))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def windows(text: str, within: str) -> list[tuple[int, int]]:
    if within in ("sentence", "line"):
        return sentences(text) if within == "sentence" else [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    if within == "paragraph":
        return paragraphs(text)
    if within == "section":
        heads = [m.start() for m in re.finditer(r"(?m)^#{1,6} ", text)]
        bounds = [0, *heads, len(text)]
        return [(a, b) for a, b in zip(bounds, bounds[1:]) if text[a:b].strip()]
    return [(0, len(text))]


def sites(text: str, terms: list[Any], within: str) -> list[tuple[int, int]]:
    """The windows of `text` where every term of a claim reads (plainly) as present."""
    return [(a, b) for a, b in windows(text, within) if all(term_found(t, text[a:b]) for t in terms)]
