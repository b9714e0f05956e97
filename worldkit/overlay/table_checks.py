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

The file is read by `tables.read_table` (any common dialect, columns by header name in any
order). Expected values compare as `values` says: a number numerically within the column's
`tolerance`; a date by `parse_date`; a key string as an identifier (`fold_id`); any other
string as an enumeration (`fold_enum`) or one of the column's declared synonyms (a key
column's synonyms too, as identifiers); a
`{claim: [terms]}` by `claims` rules inside the cell. A missing row, a duplicated row, a wrong
value on any listed row, or a present `absent` row fails the check, and the detail names them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import Field, model_validator

from worldkit._model import Model
from worldkit.overlay.check_base import _PathCheck, _read_text, register_check
from worldkit.overlay.claims import Claim
from worldkit.overlay.context import CheckResult, GradingContext
from worldkit.overlay.tables import TableError, header_key, read_table
from worldkit.overlay.values import (
    fold_enum,
    fold_id,
    numbers_equal,
    parse_date,
    parse_number,
)

Cell = str | int | float | dt.date | dict[str, Any]

ROW = "*"
"""A key column named `*` is the whole row (its cells joined): for tables whose rows are found
by what they say (`{claim: [SCN-WB-2025-12]}`), not by an id the request fixed."""


class ColumnRule(Model):
    """How one column's cells compare."""


    tolerance: float = Field(0.0, ge=0)
    """Absolute tolerance for numeric values."""
    synonyms: dict[str, list[str]] = Field(default_factory=dict)
    """Enumeration value → accepted other spellings (compared after `fold_enum`; on a key column,
    as identifiers after `fold_id`, so `Site 2` can name the row keyed `02`)."""


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
        return self

    def _rule(self, column: str) -> ColumnRule:
        return self.columns.get(column) or self.columns.get(header_key(column)) or ColumnRule()

    def _cell_ok(self, column: str, actual: str, expected: Cell, *, key: bool = False, comma: bool = False) -> bool:
        rule = self._rule(column)
        if isinstance(expected, bool):
            expected = str(expected).lower()
        if isinstance(expected, (int, float)):
            number = parse_number(actual, decimal_comma=comma)
            return number is not None and numbers_equal(number, float(expected), rule.tolerance)
        if isinstance(expected, dt.date):
            return parse_date(actual) == expected
        if isinstance(expected, dict):
            claim = Claim.model_validate({"all": expected["claim"], "within": "document"})
            return claim.match(actual) is not None
        if key:
            return fold_id(actual) in {fold_id(expected), *(fold_id(s) for s in rule.synonyms.get(expected, []))}
        accepted = {fold_enum(expected), *(fold_enum(s) for s in rule.synonyms.get(expected, []))}
        return fold_enum(actual) in accepted

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
        needed.discard(ROW)
        absent_columns = sorted(needed - set(table.header))
        if absent_columns:
            return CheckResult(False, f"workspace/{self.path} has no column {', '.join(absent_columns)} "
                                      f"(header: {', '.join(table.header)})")  # fmt: skip
        wrong: list[str] = []

        comma = table.delimiter != ","

        def cell(row: dict[str, str], column: str) -> str:
            return " | ".join(row.values()) if column == ROW else row.get(header_key(column), "")

        def selected(expected: dict[str, Cell]) -> list[dict[str, str]]:
            return [
                r for r in table.rows
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
