"""Claims: what a text must say, matched flexibly but never on a bare mention.

A **claim** is a list of terms that must all occur within one window of the text (by default a
sentence). A term is:

- a string: a word, phrase or identifier, matched by `values.id_pattern` (case folded, any
  separators between its parts, never inside a longer identifier): `CAPA-2025-0005` finds
  `CAPA 2025-0005`; `pump 3` finds `Pump-3`;
- `{number: 1.5, tolerance: 0.005}`: a written number equal within the tolerance (default: half
  a unit of the last decimal written in the YAML value, e.g. 0.005 for `1.50`); `1.5`, `1.50`
  and `1,50` are one number; with `unit: "%"` (or `month`, `mg/mL`, …) the number must carry
  that unit in one of its written forms (`values.unit_pattern`: `36M`, `36-month` and
  `36 months` are one term; `2.49 mg/mL` is not `2.49 %`); with `unit_required: false` it may
  also stand bare, but not with another known unit (`324` or `324 days`, not `324 weeks`);
- `{date: 2026-01-28}`: a date in any written form of `values.parse_date`; with
  `precision: month` a month written without a day (`Jan 2026`, `2026-01`) says it too;
- `{date_other_than: [2025-11-04, …]}`: a written date that is none of these (a `forbid` term
  for a wrong day: "first used on a date other than 4 Nov 2025");
- `{regex: "…"}`: a Python regular expression, case-insensitive;
- `{any: [term, …]}`: one of the alternatives.

Windows: `sentence` (text between `.`/`!`/`?` followed by a space, and line ends — so a list
item or table row is one window; a markdown table row is read
with its header row), `line`, `paragraph` (between blank lines), `section` (a markdown heading
with what follows it up to the next heading) and `document`.
Markdown emphasis (`**`, `__`, backticks) is removed before matching.

What does not count as saying something:

- a term that stands only in the scope of a negation or contrary qualifier
  (`worldkit.overlay.negation`): "no longer outstanding" does not say *outstanding*; a cue that is
  part of one of the claim's own terms (`not yet`) is the claim's wording. This holds for
  `forbid` too: a forbidden claim is made when its terms are said, whatever other clause of the
  sentence is negated;
- a question (a sentence ending in `?` whose last part, after any `:` or `;`, opens with an
  interrogative or an auxiliary: "Open points: is the 36-month result outstanding?");
- the request's own wording: `discount_request` drops the sentences of a deliverable that copy
  the request (at least 80 % of their word trigrams are the request's), so restating the task
  is not doing it (headings and sentences under six words are kept).
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from functools import cached_property, lru_cache
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, BeforeValidator, Field, field_validator, model_validator

from worldkit._model import Model
from worldkit.overlay.negation import in_scope
from worldkit.overlay.values import (
    NUMBER_RE,
    date_spans,
    id_pattern,
    month_spans,
    same_unit_key,
    unit_after,
    numbers_equal,
    parse_number,
    unit_pattern,
)

Span = tuple[int, int]

Window = Literal["sentence", "line", "paragraph", "section", "document"]


def _written_words(source: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+", re.sub(r"\\[a-zA-Z]", " ", source).casefold()))


class NumberTerm(Model):

    number: float
    """The value."""
    tolerance: float | None = Field(None, ge=0)
    """Absolute tolerance (default: half a unit of the last written decimal)."""
    written: str = ""
    """The value as written in the YAML (sets the default tolerance); filled in on parsing."""
    unit: str | None = Field(None, exclude_if=lambda v: v is None)  # unset: not dumped (digests stay)
    """The unit the number must carry (`%`, `month`, `mg/mL`, …; see `values.unit_pattern`)."""
    unit_required: bool = Field(True, exclude_if=lambda v: v)  # default: not dumped
    """False: the number may also stand without a unit (the second number of `range 29–324 days`
    leaves it to the first); written with another known unit it is still another value."""

    @cached_property
    def _unit(self) -> re.Pattern[str] | None:
        return re.compile(unit_pattern(self.unit), re.IGNORECASE) if self.unit else None

    @cached_property
    def effective_tolerance(self) -> float:
        if self.tolerance is not None:
            return self.tolerance
        exponent = Decimal(self.written or repr(self.number)).as_tuple().exponent
        places = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return 0.5 * 10 ** (-places) if places else 0.0

    def spans(self, text: str) -> list[Span]:
        tolerance = self.effective_tolerance
        found = []
        for start, end, value in _numbers_in(text):
            if not numbers_equal(value, self.number, tolerance):
                continue
            if self._unit is not None:
                unit = self._unit.match(text, end)
                if unit is None:
                    other = unit_after(text, end)
                    if self.unit_required or (other is not None and not same_unit_key(self.unit or "", other)):
                        continue
                else:
                    end = unit.end()
            found.append((start, end))
        return found

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return (self.written or f"{self.number:g}") + (f" {self.unit}" if self.unit else "")

    @property
    def words(self) -> frozenset[str]:
        """A number writes no words."""
        return frozenset()


class DateTerm(Model):

    date: dt.date
    """The date, in any written form."""
    precision: Literal["day", "month"] = Field("day", exclude_if=lambda v: v == "day")  # default: not dumped
    """`month`: a month written without a day (`Aug 2025`, `2025-08`) also says the date, where
    the month is all a careful writer need give; a full date must still be the right day."""

    def spans(self, text: str) -> list[Span]:
        found = [(start, end) for start, end, day in _dates_in(text) if day == self.date]
        if self.precision == "month":
            found += [(start, end) for start, end, year, month in month_spans(text)
                      if (year, month) == (self.date.year, self.date.month)]  # fmt: skip
        return sorted(found)

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return self.date.isoformat()

    @property
    def words(self) -> frozenset[str]:
        return frozenset()


class OtherDateTerm(Model):

    date_other_than: list[dt.date] = Field(min_length=1)
    """Found where a date is written that is none of these (for `forbid`: a wrong day)."""

    def spans(self, text: str) -> list[Span]:
        allowed = set(self.date_other_than)
        return [(start, end) for start, end, day in _dates_in(text) if day not in allowed]

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return "a date other than " + ", ".join(d.isoformat() for d in self.date_other_than)

    @property
    def words(self) -> frozenset[str]:
        return frozenset()


class RegexTerm(Model):

    regex: str
    """A Python regular expression, searched case-insensitively."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as error:
            raise ValueError(f"not a valid regular expression: {error}") from None
        return value

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in re.finditer(self.regex, text, re.IGNORECASE)]

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return f"/{self.regex}/"

    @cached_property
    def words(self) -> frozenset[str]:
        """The words the expression writes (a negation it writes is the claim's wording)."""
        return _written_words(self.regex)


class TextTerm(Model):

    text: str = Field(min_length=1)
    """A word, phrase or identifier."""

    @field_validator("text")
    @classmethod
    def _matchable(cls, value: str) -> str:
        id_pattern(value)
        return value

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        return re.compile(id_pattern(self.text), re.IGNORECASE)

    def spans(self, text: str) -> list[Span]:
        return [m.span() for m in self._pattern.finditer(text)]

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return repr(self.text)

    @cached_property
    def words(self) -> frozenset[str]:
        return _written_words(self.text)


class AnyTerm(Model):

    any: list[Term] = Field(min_length=1)
    """Alternatives: one of them must occur."""

    def spans(self, text: str) -> list[Span]:
        return sorted({span for term in self.any for span in term.spans(text)})

    def found(self, text: str) -> bool:
        """Whether the term occurs in `text` at all (negation is the reader's business)."""
        return bool(self.spans(text))

    def label(self) -> str:
        return "(" + " | ".join(t.label() for t in self.any) + ")"

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset().union(*(t.words for t in self.any))


def _parse_term(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value
    if isinstance(value, str):
        return TextTerm(text=value)
    if isinstance(value, bool):
        raise ValueError("a term is a string, {number}, {date}, {regex} or {any}; not a boolean")
    if isinstance(value, (int, float)):
        return NumberTerm(number=value, written=str(value))
    if isinstance(value, dict):
        if "number" in value:
            raw = value["number"]
            written = raw if isinstance(raw, str) else str(raw)
            return NumberTerm.model_validate({**value, "written": value.get("written", written)})
        keys = (("date", DateTerm), ("date_other_than", OtherDateTerm), ("regex", RegexTerm), ("any", AnyTerm),
                ("text", TextTerm))  # fmt: skip
        for key, cls in keys:
            if key in value:
                return cls.model_validate(value)
    raise ValueError("a term is a string, {number: …}, {date: …}, {date_other_than: […]}, {regex: …} or {any: […]}")


Term = Annotated[
    Union[TextTerm, NumberTerm, DateTerm, OtherDateTerm, RegexTerm, AnyTerm],
    # the schema also admits the shorthands _parse_term accepts (a bare string or number), as YAML writes them
    BeforeValidator(_parse_term, json_schema_input_type=Union[str, int, float, TextTerm, NumberTerm, DateTerm, OtherDateTerm, RegexTerm, AnyTerm]),
]
AnyTerm.model_rebuild()


class Claim(Model):
    """Terms that must all occur in one window of the text."""


    all: list[Term] = Field(min_length=1)
    """The terms."""
    within: Window = "sentence"
    """The window they must share."""
    says: str = ""
    """What the claim means, in words (for reports)."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"all": value}
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return {"all": [value]}
        return value

    def label(self) -> str:
        return self.says or " + ".join(t.label() for t in self.all) + f" (one {self.within})"

    def match(self, text: str) -> str | None:
        """The first window where every term is said (found outside the scope of a negation
        or contrary qualifier, see the module docstring), or None."""
        for window in _windows(text, self.within):
            found = [term.spans(window) for term in self.all]
            if not all(found):
                continue
            own = [(a, b, term.words) for term, spans in zip(self.all, found) for a, b in spans]
            if all(any(not in_scope(window, span, own) for span in spans) for spans in found):
                return window
        return None


# Grading matches many claims against the same few texts (every criterion's facts, every
# counterfactual deliverable): what a text's windows, numbers and dates are is read once per text.
@lru_cache(maxsize=128)
def _windows(text: str, within: Window) -> tuple[str, ...]:
    return tuple(windows(text, within))


@lru_cache(maxsize=8192)
def _numbers_in(window: str) -> tuple[tuple[int, int, float], ...]:
    found = []
    for match in NUMBER_RE.finditer(window):
        value = parse_number(match.group(0))
        if value is not None:
            found.append((match.start(), match.end(), value))
    return tuple(found)


@lru_cache(maxsize=8192)
def _dates_in(window: str) -> tuple[tuple[int, int, dt.date], ...]:
    return tuple(date_spans(window))


_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)\*(?!\s)|(?<!\s)\*(?!\w)")


def plain(text: str) -> str:
    """Text without markdown emphasis markers, line ends normalized."""
    return _EMPHASIS.sub("", text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff"))


def windows(text: str, within: Window, *, keep_questions: bool = False) -> list[str]:
    """The text cut into `within` windows; sentence windows leave questions out (a question states
    nothing) unless `keep_questions` (the `facts` reader, which reports a question as undecided)."""
    text = plain(text)
    if within == "document":
        return [text]
    if within == "paragraph":
        return [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    if within == "section":
        return [p for p in re.split(r"\n(?=#{1,6}\s)", "\n" + text) if p.strip()]
    lines = _table_aware_lines(text)
    if within == "line":
        return lines
    return [s for line in lines for s in _sentences(line) if keep_questions or not _is_question(s)]


def _is_question(sentence: str) -> bool:
    """A sentence ending in `?` whose last part (after a `:` or `;`) opens like a question."""
    return sentence.rstrip().endswith("?") and _QUESTION.match(re.split(r"[:;]", sentence)[-1]) is not None


_QUESTION = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|has|have|had|can|could|should|shall|will|would|may|might|must|whether"
    r"|what|which|when|where|why|how|who)\b[^?]*\?\W*$",
    re.IGNORECASE,
)
"""A sentence that asks rather than says."""


def _trigrams(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", plain(text).casefold())


@lru_cache(maxsize=1024)
def discount_request(text: str, request: str) -> str:
    """`text` without the sentences that copy the request (at least 80 % of a sentence's word
    trigrams are the request's; sentences of fewer than six words and markdown headings, which
    may well echo the request's structure, are kept). Line structure is kept, so paragraph and
    section windows still read as written. A function of its two strings, kept for the last
    distinct pairs: every criterion of a rubric discounts the same deliverable again."""
    if not request.strip():
        return text
    asked = _trigrams(_words(request))
    kept_lines = []
    for line in plain(text).split("\n"):
        if line.lstrip().startswith("#"):
            kept_lines.append(line)
            continue
        kept = []
        for sentence in _sentences(line) if line.strip() else [line]:
            grams = _trigrams(_words(sentence))
            if len(_words(sentence)) >= 6 and grams and len(grams & asked) >= 0.8 * len(grams):
                continue
            kept.append(sentence)
        kept_lines.append(" ".join(kept) if line.strip() else line)
    return "\n".join(kept_lines)


_ABBREVIATIONS = {"rev", "no", "nr", "e.g", "i.e", "approx", "vs", "fig", "ca", "cf", "dr", "mr", "ms", "st", "incl",
                  "ref", "sect", "vol", "max", "min", "resp", "etc", "al", "art", "para", "p", "pp"}  # fmt: skip


def _sentences(line: str) -> list[str]:
    """Split at `.`/`!`/`?` + space, but not after an abbreviation (`rev.`, `e.g.`) or an initial (`M.`)."""
    pieces = re.split(r"(?<=[.!?])\s+(?=\S)", line)
    merged: list[str] = []
    for piece in pieces:
        if merged:
            last = re.search(r"([\w.]+)\.$", merged[-1])
            word = last.group(1).casefold() if last else ""
            if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
                merged[-1] = f"{merged[-1]} {piece}"
                continue
        merged.append(piece)
    return [m for m in merged if m.strip()]


def _table_aware_lines(text: str) -> list[str]:
    """Non-blank lines; a markdown table row is read with its table's header row in front (so
    `| ZP-25002 | 0.97 |` under `| Batch | Pump 3 Cpk |` says what the number is)."""
    lines: list[str] = []
    header: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith("|"):
            header = None
            if stripped:
                lines.append(line)
            continue
        if re.fullmatch(r"\|?(\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?", stripped):
            continue
        if header is None:
            header = stripped
            lines.append(line)
        else:
            lines.append(f"{header} {stripped}")
    return lines


def find_claims(claims: list[Claim], texts: list[str]) -> tuple[list[str], list[str]]:
    """(labels of claims found in some text, labels of claims found in none)."""
    found, missing = [], []
    for claim in claims:
        (found if any(claim.match(t) is not None for t in texts) else missing).append(claim.label())
    return found, missing
