"""How a careful grader reads a value someone wrote: numbers, enumerations, identifiers, dates.

Rules, stated once (the checks and the `facts` judge use only these):

- **Numbers** (`parse_number`): surrounding spaces, a leading `+`, a Unicode minus, a trailing
  unit or `%` and a leading `~`/`≈`/`about` are ignored; `1,140` and `1 140` are one thousand one
  hundred forty (a comma followed by exactly three digits groups thousands), `2,49` is 2.49 (a
  decimal comma; in a `;`- or tab-separated table a comma is always decimal). A qualified value
  (`< 0.05`, `≤ 5`) is not a number. Numbers compare within an
  absolute tolerance stated by the check.
- **Enumerations** (`fold_enum`): compared after case folding and collapsing separators
  (space, `-`, `_`, `/`, `.`) into one; accepted synonyms are declared by the check, never guessed.
- **Identifiers** (`id_pattern`): `CAPA-2025-0005`, `CAPA 2025-0005`, `capa2025-0005` and
  `CAPA‑2025‑0005` (non-breaking hyphen) are one identifier: case folds, and between letters and
  digits any run of separators (or none) matches; an identifier never matches inside a longer
  one (`SC-03` is not found in `SC-030`).
- **Units** (`unit_pattern`, `split_unit`): a unit is part of a value (`2.49 mg/mL` is not
  `2.49 %`). A declared unit matches its written forms: `%` (`percent`, `per cent`), `month`
  (`36 months`, `36-month`, `36 mo`, `36M`), `week`, `day`, `year`, `°C` (`°C`, `ºC`, `deg C`,
  `℃`), `mg/mL` (`mg per mL`, `mg·mL⁻¹`), `µg/mL`; any other unit matches as written (case
  folded, spaces around `/` free).
- **Dates** (`parse_date`): ISO `2026-03-20`, `20 Mar 2026`, `20 March 2026`, `March 20, 2026`,
  `20/03/2026`, `20.03.2026` (day first, as written at the site) and `20-Mar-2026`.
"""

from __future__ import annotations

import datetime as dt
import math
import re

SEPARATORS = " \t-_/.\u2010\u2011\u2012\u2013\u2014\u00a0"
"""Characters an identifier or enumeration may use between its parts."""

_SEP_CLASS = "[\\s\\-_/.\u2010\u2011\u2012\u2013\u2014\u00a0]"
_DASHES = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-"})

NUMBER_RE = re.compile(
    r"(?:(?<![\w.,\-])[+\u2212-](?=\d)|(?<![\w.,\-+\u2212]))"
    r"(?:\d{1,3}(?:[,\u202f\u00a0]\d{3})+(?!\d)(?:\.\d+)?|\d+(?:[.,]\d+)?)(?!\d)"
)
"""A written number inside running text (used to find candidates before `parse_number`)."""

_UNIT_TAIL = re.compile(r"\s*[-\u2010\u2011]?\s*(%|‰|[a-zA-Zµμ°/·]+[\w/·%°]*)\s*$")
_APPROX_HEAD = re.compile(r"^\s*(~|≈|about|approx\.?|approximately|ca\.?)\s*", re.IGNORECASE)


def parse_number(text: str, *, decimal_comma: bool = False) -> float | None:
    """The number a person meant by `text`, or None (see the module rules). With
    `decimal_comma` (a table written with `;` or tabs, as a European spreadsheet does) a comma is
    always the decimal mark: `2,490` is 2.49."""
    value = text.strip().translate(_DASHES)
    if decimal_comma and re.fullmatch(r"[^,]*\d,\d+[^,]*", value):
        value = value.replace(",", ".")
    value = _APPROX_HEAD.sub("", value)
    if re.match(r"^[<>≤≥]", value):
        return None
    value = _UNIT_TAIL.sub("", value).strip()
    if value.startswith("+"):
        value = value[1:]
    if not value:
        return None
    grouped = re.fullmatch(r"(-?)(\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+)(\.\d+)?", value)
    if grouped:
        digits = re.sub(r"[,\u202f\u00a0 ]", "", grouped.group(2))
        value = grouped.group(1) + digits + (grouped.group(3) or "")
    elif re.fullmatch(r"-?\d+,\d+", value):
        value = value.replace(",", ".")
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


_UNIT_FORMS = {
    "%": r"%|percent\b|per ?cent\b",
    "month": r"months?\b|mo\b\.?|mths?\b|(?-i:M)(?![A-Za-z])",
    "week": r"weeks?\b|wks?\b|(?-i:W)(?![A-Za-z])",
    "day": r"days?\b|(?-i:d)(?![A-Za-z])",
    "year": r"years?\b|yrs?\b|(?-i:Y)(?![A-Za-z])",
    "°c": r"°\s?C\b|º\s?C\b|deg(?:rees?)?\.?\s?C\b|℃",
    "mg/ml": r"mg\s?/\s?ml\b|mg\s?per\s?ml\b|mg\s?[·.]?\s?ml(?:-1|⁻¹)",
    "µg/ml": r"[µμu]g\s?/\s?ml\b|[µμu]g\s?per\s?ml\b",
}
_UNIT_ALIASES = {"months": "month", "weeks": "week", "days": "day", "years": "year", "percent": "%", "pct": "%",
                 "degc": "°c", "ug/ml": "µg/ml", "μg/ml": "µg/ml"}  # fmt: skip


def _unit_key(unit: str) -> str:
    key = re.sub(r"\s+", "", unit.strip().casefold())
    return _UNIT_ALIASES.get(key, key)


def unit_pattern(unit: str) -> str:
    """A regular expression (use with IGNORECASE, anchored right after the number) matching the
    written forms of `unit`, with the space or hyphen a writer puts between number and unit."""
    form = _UNIT_FORMS.get(_unit_key(unit))
    if form is None:
        form = r"\s?/\s?".join(re.escape(part.strip()) for part in unit.split("/")) + r"(?![A-Za-z])"
    return rf"[\s\u00a0]?[-\u2010\u2011]?\s?(?:{form})"


def split_unit(text: str) -> tuple[str, str]:
    """(number part, unit part) of a written value: `2.49 mg/mL` → (`2.49`, `mg/mL`)."""
    value = text.strip()
    tail = _UNIT_TAIL.search(value)
    if tail is None or not tail.group(1) or tail.start() == 0:
        return value, ""
    return value[: tail.start()].strip(), tail.group(1)


def same_unit(written: str, unit: str) -> bool:
    """Whether the unit part `written` of a value is a written form of `unit`."""
    return re.fullmatch(unit_pattern(unit), " " + written.strip(), re.IGNORECASE) is not None


def numbers_in(text: str) -> list[float]:
    """Every number written in `text` (thousands groups and decimal commas as in `parse_number`)."""
    found = []
    for match in NUMBER_RE.finditer(text):
        number = parse_number(match.group(0))
        if number is not None:
            found.append(number)
    return found


def numbers_equal(actual: float, expected: float, tolerance: float) -> bool:
    return math.isclose(actual, expected, rel_tol=0, abs_tol=tolerance + 1e-9)


def fold_enum(text: str) -> str:
    """Case-folded, separators collapsed to `-`, trimmed: `Open deviation` → `open-deviation`."""
    parts = [p for p in re.split(_SEP_CLASS + "+", text.strip().casefold()) if p]
    return "-".join(parts)


def fold_id(text: str) -> str:
    """An identifier without case or separators: `CAPA 2025-0005` → `capa20250005`."""
    return re.sub(_SEP_CLASS, "", text.strip().casefold())


def id_pattern(text: str) -> str:
    """A regular expression (use with IGNORECASE) finding `text` as an identifier or phrase.

    Its alphanumeric runs must appear in order; between runs any separators (or none) may stand;
    it does not match inside a longer alphanumeric run."""
    runs = re.findall(r"[^\W_]+|[^\w\s\-_/.\u2010-\u2014\u00a0]", text)
    if not runs:
        raise ValueError(f"{text!r} has nothing to match")
    body = (_SEP_CLASS + "*").join(re.escape(r) for r in runs)
    return rf"(?<![^\W_]){body}(?![^\W_])"


_MONTHS = {
    name: number
    for number, names in enumerate(
        [("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
         ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"),
         ("nov", "november"), ("dec", "december")],
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
DATE_RE = re.compile(
    rf"(?P<iso>\b(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})\b)"
    rf"|(?P<dmy>\b(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?[\s\-]+(?P<dmon>{_MONTH_RE})\.?[\s\-,]+(?P<dy>\d{{4}})\b)"
    rf"|(?P<mdy>\b(?P<mmon>{_MONTH_RE})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<my>\d{{4}})\b)"
    rf"|(?P<num>\b(?P<nd>\d{{1,2}})[/.](?P<nm>\d{{1,2}})[/.](?P<ny>\d{{4}})\b)",
    re.IGNORECASE,
)
"""The written date forms `parse_date` understands, for finding them in running text."""


def _date_of(match: re.Match[str]) -> dt.date | None:
    try:
        if match.group("iso"):
            return dt.date(int(match.group("iy")), int(match.group("im")), int(match.group("id")))
        if match.group("dmy"):
            return dt.date(int(match.group("dy")), _MONTHS[match.group("dmon").casefold()], int(match.group("dd")))
        if match.group("mdy"):
            return dt.date(int(match.group("my")), _MONTHS[match.group("mmon").casefold()], int(match.group("md")))
        return dt.date(int(match.group("ny")), int(match.group("nm")), int(match.group("nd")))
    except ValueError:
        return None


def parse_date(text: str) -> dt.date | None:
    """The date `text` writes (the whole text, surrounding spaces aside), or None."""
    match = DATE_RE.fullmatch(text.strip())
    return _date_of(match) if match else None


def dates_in(text: str) -> list[dt.date]:
    """Every date written in `text`."""
    return [d for d in (_date_of(m) for m in DATE_RE.finditer(text)) if d is not None]


def date_spans(text: str) -> list[tuple[int, int, dt.date]]:
    """Every date written in `text`, with where it is written: (start, end, date)."""
    return [(m.start(), m.end(), d) for m in DATE_RE.finditer(text) if (d := _date_of(m)) is not None]


MONTH_RE = re.compile(
    rf"(?P<named>\b(?P<mon>{_MONTH_RE})\.?,?\s+(?P<year>\d{{4}})\b)|(?P<isom>\b(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})\b(?!-\d))",
    re.IGNORECASE,
)
"""A month written without its day: `Aug 2025`, `August 2025`, `2025-08`."""


def month_spans(text: str) -> list[tuple[int, int, int, int]]:
    """Every month written without a day in `text` (not part of a written date): (start, end,
    year, month)."""
    full = date_spans(text)
    found = []
    for match in MONTH_RE.finditer(text):
        if any(s < match.end() and match.start() < e for s, e, _ in full):
            continue
        if match.group("named"):
            year, month = int(match.group("year")), _MONTHS[match.group("mon").casefold()]
        else:
            year, month = int(match.group("iy")), int(match.group("im"))
        if 1 <= month <= 12:
            found.append((match.start(), match.end(), year, month))
    return found


def unit_after(text: str, end: int) -> str | None:
    """The known unit (`%`, `month`, `week`, `day`, `year`, `°c`, `mg/ml`, `µg/ml`) written right
    after position `end` of `text` (a number's end), or None."""
    for key in _UNIT_FORMS:
        if re.compile(unit_pattern(key), re.IGNORECASE).match(text, end):
            return key
    return None


def same_unit_key(unit: str, key: str) -> bool:
    """Whether the declared `unit` is the known unit `key` of `unit_after`."""
    return _unit_key(unit) == key
