"""`csv_rows`: a table deliverable graded row by row, for every row the request asks for.

    check:
      type: csv_rows
      path: qualification-sweep.csv
      key: [equipment_id]                      # the column(s) that identify a row
      rows:                                    # every one must be present, once, with these values
      - {equipment_id: SC-03, status: overdue}
      - {equipment_id: SC-05, status: ok}
      columns:                                 # per-column comparison rules (optional)
        status: {synonyms: {overdue: [past due, expired]}}
        total_imp_pct: {tolerance: 0.005}
      absent:                                  # rows that must not be there (optional)
      - {equipment_id: HPLC-02}

A key column `*` is the whole row, for rows found by what they say:
`key: ["*"]`, `rows: [{"*": {claim: [SCN-WB-2025-12]}, classification: major}]`.

The file is read by `documents.read_document` (any encoding, xlsx, docx) and
`tables.read_table` (any common dialect, columns by header name in any order). Each column has
a type, declared in `columns` (`type:`) or taken from the expected values:

- `identifier` (key columns): `fold_id` — `ZV 23004` = `ZV-23004` = `zv-23004`; declared
  synonyms compare as identifiers too;
- `date`: the cell writes the expected day in any form of `values.parse_date`; a wrong day fails;
- `number`: numerically within `tolerance`; with `unit:` the unit is part of the value — a cell
  may leave it to the header (`2.49`) but a cell that writes another unit (`2.49 mg/mL` in a `%`
  column) fails;
- `enum`: `fold_enum`, or one of the declared `synonyms`;
- `text`: free text stating the declared key facts: `{claim: [terms]}` by `claims` rules
  (negation-aware) inside the cell, and none of its `forbid` claims (`forbid: [[terms], …]`);
  an identifier the claim names must not be written wrong — a cell holding an identifier of the
  same shape (same letters and separators, other digits: `QAG-WB-2026-02` for
  `QAG-WB-2026-01`) that is none of the claim's fails.

Rows that are not rows: notes under the table (`tables.read_table`), and rows that a note or
the row itself marks as excluded (a cell reading or opening with `excluded` or `out of scope`,
or saying `not a finding`; or a note with such words naming the row's key or its footnote mark).
A table with a header and no data rows fails. A missing row, a duplicated row, a wrong value on
any listed row (a value attached to another row is wrong on both), or a present `absent` row
fails the check, and the detail names them. Columns declared in `columns` must be in the
header, also for a check that only lists `absent` rows.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import Field, model_validator

from worldkit._model import Model
from worldkit.overlay.check_base import _PathCheck, _read_text, register_check
from worldkit.overlay.claims import AnyTerm, Claim, TextTerm
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.tables import Table, TableError, header_key, read_table
from worldkit.overlay.values import (
    date_spans,
    fold_enum,
    fold_id,
    id_pattern,
    numbers_equal,
    parse_date,
    parse_number,
    split_unit,
    same_unit,
)

ColumnType = Literal["identifier", "date", "number", "enum", "text"]

_EXCLUDED_CELL = {
    "excluded", "not-a-finding", "no-finding", "not-included", "out-of-scope", "not-counted", "withdrawn",
    "not-a-deviation",
}  # fmt: skip
_EXCLUDED_HEAD = re.compile(
    r"^\W*(?:excluded|not included|out of scope)\b"
    r"|\b(?:not (?:a|counted as a|considered a|listed as a|treated as a) finding|no finding)\b",
    re.IGNORECASE,
)
_EXCLUSION_NOTE = re.compile(
    r"exclud|not (?:a |counted as a |considered a |listed as a |treated as a )?finding|no finding|not (?:included|counted|listed)"
    r"|out of scope|(?<![\w-])compliant|for information|informational|disregard|not applicable",
    re.IGNORECASE,
)
_MARK = re.compile(r"([*\u2020\u2021\u00b9\u00b2\u00b3]+)$")

Cell = str | int | float | dt.date | dict[str, Any]

ROW = "*"
"""A key column named `*` is the whole row (its cells joined): for tables whose rows are found
by what they say (`{claim: [SCN-WB-2025-12]}`), not by an id the request fixed."""


class ColumnRule(Model):
    """How one column's cells compare."""


    # Unset new fields are left out of the dump, so overlays that do not use them keep their digests.
    type: ColumnType | None = Field(None, exclude_if=lambda v: v is None)
    """How the column's cells compare (module docstring); by default taken from the expected
    value (a number, a date, a `{claim}` mapping, a key string, any other string)."""
    unit: str | None = Field(None, exclude_if=lambda v: v is None)
    """For a number column: the unit of its values (`%`, `month`, `mg/mL`, …). A cell may omit
    it; a cell that writes another unit fails."""
    tolerance: float = Field(0.0, ge=0)
    """Absolute tolerance for numeric values."""
    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    """Enumeration value → accepted other spellings (compared after `fold_enum`; on a key column,
    as identifiers after `fold_id`, so `Site 2` can name the row keyed `02`)."""


def _kind_of(expected: Cell, key: bool) -> ColumnType:
    if isinstance(expected, (int, float)):
        return "number"
    if isinstance(expected, dt.date):
        return "date"
    if isinstance(expected, dict):
        return "text"
    return "identifier" if key else "enum"


def _cell_claims(expected: dict[str, Any], where: str = "a cell") -> tuple[Claim, list[Claim]]:
    """A free-text cell's key facts: (the claim it must state, the claims it must not)."""
    unknown = sorted(set(expected) - {"claim", "forbid"})
    if "claim" not in expected or unknown:
        raise ValueError(f"{where}: a free-text cell is {{claim: [terms], forbid: [[terms], …]}}"
                         + (f"; unknown key(s) {', '.join(unknown)}" if unknown else ""))  # fmt: skip
    claim = Claim.model_validate({"all": expected["claim"], "within": "document"})
    forbid = [Claim.model_validate({"all": terms, "within": "sentence"}) for terms in expected.get("forbid", [])]
    return claim, forbid


def _states(actual: str, expected: dict[str, Any]) -> bool:
    """A free-text cell states the `claim` terms, none of the `forbid` claims, and no identifier
    shaped like one of the claim's that is none of them (`_misspelt_ids`)."""
    claim, forbid = _cell_claims(expected)
    return (claim.match(actual) is not None and not any(f.match(actual) is not None for f in forbid)
            and not _misspelt_ids(actual, claim))  # fmt: skip


def _identifiers(terms: list[Any]) -> list[str]:
    """The claim's identifier terms (`QAG-WB-2026-01`: letters and digits in separated runs, no
    space), also inside `any`."""
    found: list[str] = []
    for term in terms:
        if isinstance(term, AnyTerm):
            found += _identifiers(list(term.any))
        elif isinstance(term, TextTerm) and not re.search(r"\s", term.text):
            runs = re.findall(r"[^\W_]+", term.text)
            if len(runs) >= 2 and re.search(r"\d", term.text) and re.search(r"[A-Za-z]", term.text):
                found.append(term.text)
    return found


def _shape(identifier: str) -> re.Pattern[str]:
    """`QAG-WB-2026-01` → an identifier of that shape: the same letters and separators, any digits
    in the digits' places (`QAG-WB-2026-02`)."""
    runs = re.findall(r"[^\W_]+", identifier)
    body = r"[\s\-_/.]*".join(re.sub(r"\\d|\d", r"\\d", re.escape(run)) for run in runs)
    return re.compile(rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


def _misspelt_ids(actual: str, claim: Claim) -> list[str]:
    """Identifiers in the cell shaped like one the claim names but equal to none of them: the
    declared record written wrong (`QAG-WB-2026-02` for `QAG-WB-2026-01`)."""
    declared = _identifiers(list(claim.all))
    known = {fold_id(d) for d in declared}
    return [m.group(0) for d in declared for m in _shape(d).finditer(actual) if fold_id(m.group(0)) not in known]


def _describe(value: Cell) -> str:
    return value.isoformat() if isinstance(value, dt.date) else repr(value)


@register_check
class CsvRows(_PathCheck):
    """Every listed row of a CSV table is present once with the expected values (module docstring)."""

    type: Literal["csv_rows"] = "csv_rows"
    """`csv_rows`."""
    key: list[str] = Field(min_length=1)
    """Column(s) identifying a row."""
    rows: list[dict[str, Cell]] = Field(default_factory=list)
    """The rows that must be present: key columns plus the columns whose values are checked."""
    absent: list[dict[str, Cell]] = Field(default_factory=list)
    """Rows (by key) that must not be present."""
    columns: dict[str, ColumnRule] = Field(default_factory=dict)
    """Column → comparison rule."""

    @model_validator(mode="after")
    def _keys_given(self) -> CsvRows:
        if not self.rows and not self.absent:
            raise ValueError("csv_rows needs `rows` and/or `absent`")
        for what, rows in (("rows", self.rows), ("absent", self.absent)):
            for index, row in enumerate(rows):
                missing = [k for k in self.key if k not in row]
                if missing:
                    raise ValueError(f"{what}[{index}] lacks the key column(s) {', '.join(missing)}")
                for column, value in row.items():
                    if isinstance(value, dict):
                        _cell_claims(value, f"{what}[{index}].{column}")
        return self

    def _rule(self, column: str) -> ColumnRule:
        return self.columns.get(column) or self.columns.get(header_key(column)) or ColumnRule()

    def _cell_ok(self, column: str, actual: str, expected: Cell, *, key: bool = False, comma: bool = False) -> bool:
        rule = self._rule(column)
        if isinstance(expected, bool):
            expected = str(expected).lower()
        kind = rule.type or _kind_of(expected, key)
        if kind == "number":
            number = parse_number(actual, decimal_comma=comma)
            if number is None or not isinstance(expected, (int, float, str)):
                return False
            wanted = parse_number(str(expected)) if isinstance(expected, str) else float(expected)
            if wanted is None or not numbers_equal(number, wanted, rule.tolerance):
                return False
            written = split_unit(actual)[1]
            return not (rule.unit and written and not same_unit(written, rule.unit))
        if kind == "date":
            day = expected if isinstance(expected, dt.date) else parse_date(str(expected))
            return day is not None and (parse_date(actual) == day or day in {d for _, _, d in date_spans(actual)})
        if isinstance(expected, dict):
            return _states(actual, expected)
        if kind == "text":
            return Claim.model_validate({"all": [expected], "within": "document"}).match(actual) is not None
        if kind == "identifier":
            accepted = {fold_id(str(expected)), *(fold_id(s) for s in rule.synonyms.get(str(expected), []))}
            return fold_id(_MARK.sub("", actual)) in accepted
        accepted = {fold_enum(str(expected)), *(fold_enum(s) for s in rule.synonyms.get(str(expected), []))}
        return fold_enum(actual) in accepted

    def _excluded(self, row: dict[str, str], notes: tuple[str, ...]) -> bool:
        """Whether the row itself, or a note naming it, says it is not a row of the answer."""
        cells = list(row.values())
        key_columns = {header_key(k) for k in self.key if k != ROW}
        others = [v for k, v in row.items() if k not in key_columns]
        if any(fold_enum(c) in _EXCLUDED_CELL or _EXCLUDED_HEAD.search(c) for c in others if c):
            return True
        marks = {m.group(1) for c in cells if (m := _MARK.search(c.strip()))}
        keys = [row.get(header_key(k), "") for k in self.key if k != ROW] or cells[:1]
        for note in notes:
            if not _EXCLUSION_NOTE.search(note):
                continue
            if any(note.lstrip().startswith(mark) for mark in marks):
                return True
            named = [_MARK.sub("", k).strip() for k in keys if _MARK.sub("", k).strip()]
            if named and all(re.search(id_pattern(k), note, re.IGNORECASE) for k in named):
                return True
        return False

    def _label(self, row: dict[str, Cell]) -> str:
        return ", ".join(f"{k} {_describe(row[k])}" for k in self.key)

    def evaluate(self, ctx: GradingContext) -> CheckResult:
        content, why = _read_text(ctx, self.path)
        if content is None:
            return CheckResult(False, why)
        try:
            table = read_table(content)
        except TableError as error:
            return CheckResult(False, f"workspace/{self.path}: {error}")
        needed = {header_key(c) for row in self.rows for c in row} | {header_key(k) for k in self.key}
        needed |= {header_key(c) for c in self.columns}
        needed.discard(ROW)
        absent_columns = sorted(needed - set(table.header))
        if absent_columns:
            return CheckResult(False, f"workspace/{self.path} has no column {', '.join(absent_columns)} "
                                      f"(header: {', '.join(table.header)})")  # fmt: skip
        rows = [r for r in table.rows if not self._excluded(r, table.notes)]
        if not rows:
            excluded = f" ({len(table.rows)} marked as excluded)" if table.rows else ""
            return CheckResult(False, f"workspace/{self.path} holds a header and no data rows{excluded}")
        wrong: list[str] = []

        comma = table.delimiter != ","

        def cell(row: dict[str, str], column: str) -> str:
            return " | ".join(row.values()) if column == ROW else row.get(header_key(column), "")

        def selected(expected: dict[str, Cell]) -> list[dict[str, str]]:
            return [
                r for r in rows
                if all(self._cell_ok(k, cell(r, k), expected[k], key=True, comma=comma) for k in self.key)
            ]  # fmt: skip

        for expected in self.rows:
            found = selected(expected)
            if not found:
                wrong.append(f"no row for {self._label(expected)}")
                continue
            if len(found) > 1:
                wrong.append(f"{len(found)} rows for {self._label(expected)}")
                continue
            for column, value in expected.items():
                if column in self.key:
                    continue
                actual = found[0].get(header_key(column), "")
                if not self._cell_ok(column, actual, value, comma=comma):
                    wrong.append(f"{self._label(expected)}: {column} {actual!r}, expected {_describe(value)}")
        for unwanted in self.absent:
            if selected(unwanted):
                wrong.append(f"a row for {self._label(unwanted)}, which must not be listed")
        if wrong:
            shown = "; ".join(wrong[:6]) + (f"; and {len(wrong) - 6} more" if len(wrong) > 6 else "")
            return CheckResult(False, f"workspace/{self.path}: {shown}")
        parts = [f"{len(self.rows)} row(s) as expected"] if self.rows else []
        parts += [f"none of {len(self.absent)} excluded row(s)"] if self.absent else []
        return CheckResult(True, f"workspace/{self.path}: " + ", ".join(parts))
