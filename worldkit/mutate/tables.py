"""Variants of a table deliverable (a CSV the request asks for): right renderings and wrong tables.

Right: `;` / tab / fully quoted dialects, a `;` export with decimal commas, UTF-8 with BOM,
UTF-16 and Windows-1252 (CRLF, as Excel saves), an `.xlsx` workbook, columns in another order,
dates written out, numbers with a trailing zero or their `%`, identifiers in lower case or spaced,
an extra comment column, a footnote naming the excluded items (the workbook only where the request
does not name the CSV file: see `campaign`).

Wrong: values swapped between two rows, a date a day or a month off, a unit substituted, an
enumeration flipped, a row dropped, an excluded row added, a wrong identifier, a row's values
attached to another record. Which criteria a wrong table touches is read off the rubric's declared
rows and columns (`table_touches`): a declared row no longer found once, a declared column whose
cell changed on it, a row found by what it says that no longer names an identifier its claim
names (found by another of its terms), a row declared absent now present.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import PurePosixPath
from typing import Any

from worldkit.mutate import render
from worldkit.mutate import text as written
from worldkit.mutate.declared import WHOLE_ROW, DeclaredRow, column_key, literal_terms
from worldkit.mutate.variant import Variant, rng

UNIT_COLUMNS = {"pct": "mg/mL", "percent": "mg/mL", "mg": "%", "ml": "%", "months": "weeks", "month": "weeks",
                "days": "weeks", "day": "weeks", "c": "°F", "degc": "°F"}  # fmt: skip
"""A column name's last part naming its unit → a wrong unit to write in its cells."""


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[str]]
    notes: tuple[str, ...] = ()
    """Lines written after the table (footnotes)."""

    @cached_property
    def keys(self) -> list[str]:
        return [column_key(h) for h in self.header]

    def cell(self, row: list[str], column: str) -> str:
        keys = self.keys
        return row[keys.index(column)] if column in keys and keys.index(column) < len(row) else ""

    def joined(self, row: list[str]) -> str:
        return " | ".join(row)

    def csv(self, delimiter: str = ",", quoting: int = csv.QUOTE_MINIMAL) -> str:
        out = io.StringIO()
        writer = csv.writer(out, delimiter=delimiter, quoting=quoting, lineterminator="\n")
        writer.writerow(self.header)
        writer.writerows(self.rows)
        for note in self.notes:
            writer.writerow([note])
        return out.getvalue()

    def with_rows(self, rows: list[list[str]]) -> Table:
        return replace(self, rows=[list(r) for r in rows])


def read_reference(text: str) -> Table | None:
    """The reference's table (author-written CSV), or None when the text is not one."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    delimiter = max(",;\t", key=lambda d: lines[0].count(d))
    rows = list(csv.reader(lines, delimiter=delimiter))
    if len(rows[0]) < 2:
        return None
    width = len(rows[0])
    return Table(header=rows[0], rows=[(r + [""] * width)[:width] for r in rows[1:]])


# --- which declared rows a table holds ---------------------------------------------------------


def _same(cell: str, expected: Any) -> bool:
    cell = cell.strip()
    if isinstance(expected, bool):
        return cell.casefold() == str(expected).casefold()
    if isinstance(expected, (int, float)):
        try:
            return abs(float(cell) - float(expected)) < 1e-9
        except ValueError:
            return False
    if isinstance(expected, dict) and "claim" in expected:
        return False
    return cell.casefold() == str(expected).strip().casefold()


def rows_matching(table: Table, declared: DeclaredRow) -> list[int]:
    """Indices of the rows a plain reading takes for the declared row (by its key values)."""
    found = []
    for index, row in enumerate(table.rows):
        ok = True
        for column in declared.key:
            expected = declared.values.get(column)
            if column == WHOLE_ROW:
                ok = isinstance(expected, dict) and written.term_found(expected, table.joined(row))
            else:
                ok = _same(table.cell(row, column), expected)
            if not ok:
                break
        if ok:
            found.append(index)
    return found


def _identifier_lost(old: str, new: str, expected: dict[str, Any]) -> bool:
    """Whether an identifier a free-text cell's claim names (also as an alternative) is written in
    the reference row and no longer in the variant's: the row found by another of its terms now
    names a wrong record."""
    names = [t for t in literal_terms(expected.get("claim", [])) if written.is_identifier(t)]
    return any(written.term_found(t, old) and not written.term_found(t, new) for t in names)


def table_touches(declared: list[DeclaredRow], reference: Table, variant: Table) -> tuple[str, ...]:
    """Criteria whose declared rows or columns the variant table changes (module docstring)."""
    touched: set[str] = set()
    for row in declared:
        before, after = rows_matching(reference, row), rows_matching(variant, row)
        if row.absent:
            if after and not before:
                touched.add(row.criterion)
            continue
        if len(before) != 1:
            continue  # the reference itself does not hold it plainly: nothing to compare
        if len(after) != 1:
            touched.add(row.criterion)
            continue
        old, new = reference.rows[before[0]], variant.rows[after[0]]
        if any(reference.cell(old, c).strip() != variant.cell(new, c).strip() for c in row.checked_columns()):
            touched.add(row.criterion)
        elif any(_identifier_lost(reference.joined(old), variant.joined(new), value)
                 for value in row.values.values() if isinstance(value, dict)):  # fmt: skip
            touched.add(row.criterion)
    return tuple(sorted(touched))


# --- right variants ---------------------------------------------------------------------------


def _file(path: str, data: bytes) -> tuple[tuple[str, bytes | None], ...]:
    return ((path, data),)


def _moved(path: str, suffix: str, data: bytes) -> tuple[tuple[str, bytes | None], ...]:
    moved = str(PurePosixPath(path).with_suffix(suffix))
    return ((path, None), (moved, data))


def _map_cells(table: Table, change: Any, columns: set[str] | None = None) -> Table:
    keys = table.keys
    rows = [[change(cell, keys[i]) if columns is None or keys[i] in columns else cell for i, cell in enumerate(r)]
            for r in table.rows]  # fmt: skip
    return table.with_rows(rows)


def right_tables(
    path: str, table: Table, declared: list[DeclaredRow], seed: int, *, formats: bool = True
) -> Iterator[Variant]:
    """Right renderings of the reference table (module docstring); `formats`: also as a workbook."""

    def right(family: str, files: tuple[tuple[str, bytes | None], ...], detail: str) -> Variant:
        return Variant(family=family, kind="right", target=path, files=files, detail=detail)

    yield right("csv-semicolon", _file(path, table.csv(";").encode()), "`;` separated")
    comma = _map_cells(table, lambda c, _k: written.DECIMAL.sub(r"\1,\2", c) if re.fullmatch(r"-?\d+\.\d+", c) else c)
    yield right("csv-semicolon-decimal-comma", _file(path, comma.csv(";").encode()), "`;` separated, decimal commas")
    yield right("csv-tab", _file(path, table.csv("\t").encode()), "tab separated")
    yield right("csv-quoted", _file(path, table.csv(",", csv.QUOTE_ALL).encode()), "every cell quoted")
    for name, codec in render.ENCODINGS.items():
        data = render.encode(table.csv(), codec, crlf=True)
        if data is not None and data == table.csv().replace("\n", "\r\n").encode("utf-8") and codec == "cp1252":
            # plain ASCII reads the same in every encoding: carry a character Windows-1252 writes its own way
            noted = Table(header=[*table.header, "comment"], rows=[[*r, "checked – no remark"] for r in table.rows])
            data = render.encode(noted.csv(), codec, crlf=True)
        if data is not None:
            yield right(f"encoding-{name}", _file(path, data), f"saved as {codec} with CRLF line ends")
    if formats:
        yield right("xlsx", _moved(path, ".xlsx", render.xlsx(table.header, table.rows)), "saved as a workbook")
    order = list(range(len(table.header)))
    rng(seed, "column-order", path).shuffle(order)
    if order == sorted(order):
        order = order[1:] + order[:1]
    shuffled = Table(header=[table.header[i] for i in order], rows=[[r[i] for i in order] for r in table.rows])
    yield right("column-order", _file(path, shuffled.csv().encode()), "columns in another order")
    for form in ("short", "us", "slash"):
        def date_form(cell: str, _key: str, form: str = form) -> str:
            return written.rewrite_dates(cell, lambda d, f: written.write_date(d, form)
                                         if form != "slash" or d.day > 12 else None)  # fmt: skip
        dated = _map_cells(table, date_form)
        if dated != table:
            yield right(f"dates-{form}", _file(path, dated.csv().encode()), f"dates written as {written.write_date(_SAMPLE, form)}")
    zero = _map_cells(table, lambda c, _k: c + "0" if re.fullmatch(r"-?\d+\.\d+", c) else c)
    if zero != table:
        yield right("numbers-trailing-zero", _file(path, zero.csv().encode()), "decimals with a trailing zero")
    percent = {k for k in table.keys if k.endswith(("_pct", "_percent"))}
    if percent:
        with_unit = _map_cells(table, lambda c, _k: f"{c} %" if re.fullmatch(r"-?\d+(\.\d+)?", c) else c, percent)
        yield right("numbers-with-unit", _file(path, with_unit.csv().encode()), "percent columns carry ` %`")
    lower = _map_cells(table, lambda c, _k: c.lower() if written.is_identifier(c) else c)
    if lower != table:
        yield right("ids-lowercase", _file(path, lower.csv().encode()), "identifiers in lower case")
    spaced = _map_cells(table, lambda c, _k: re.sub(r"^([A-Za-z]{2,})-(\d{3,})$", r"\1 \2", c))
    if spaced != table:
        yield right("ids-spaced", _file(path, spaced.csv().encode()), "`ZV-23004` written `ZV 23004`")
    commented = Table(header=[*table.header, "comment"], rows=[[*r, "reviewed against the source"] for r in table.rows])
    yield right("extra-column", _file(path, commented.csv().encode()), "an extra comment column")
    excluded = sorted({str(r.values[r.key[0]]) for r in declared if r.absent and len(r.key) == 1
                       and r.key[0] != WHOLE_ROW and isinstance(r.values.get(r.key[0]), str)})  # fmt: skip
    excluded += sorted({t for r in declared if r.absent and WHOLE_ROW in r.key
                        for t in _literal_claim(r.values.get(WHOLE_ROW))})  # fmt: skip
    if excluded:
        noted = replace(table, notes=(f"Note: {', '.join(excluded)} reviewed and excluded (not listed above).",))
        yield right("footnote-excluded", _file(path, noted.csv().encode()), f"a footnote naming {', '.join(excluded)}")


_SAMPLE = dt.date(2026, 11, 4)
"""The date the variants' details show each written form with."""


def _literal_claim(value: Any) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [t for t in value.get("claim", []) if isinstance(t, str)]


# --- wrong variants ---------------------------------------------------------------------------


def _wrong(path: str, family: str, reference: Table, table: Table, declared: list[DeclaredRow], detail: str) -> Variant:
    return Variant(family=family, kind="wrong", target=path, files=_file(path, table.csv().encode()),
                   touches=table_touches(declared, reference, table), detail=detail)  # fmt: skip


def _located(table: Table, declared: list[DeclaredRow]) -> list[int]:
    found = {i for row in declared if not row.absent for i in rows_matching(table, row)}
    return sorted(found)


def _checked_columns(declared: list[DeclaredRow]) -> list[str]:
    return sorted({c for row in declared if not row.absent for c in row.checked_columns()})


def wrong_tables(path: str, table: Table, declared: list[DeclaredRow], seed: int) -> Iterator[Variant]:
    """Plausible wrong tables (module docstring), each with the criteria it touches."""
    located = _located(table, declared)
    keys = table.keys
    for column in _checked_columns(declared):
        if column not in keys:
            continue
        col = keys.index(column)
        pairs = [(a, b) for a in located for b in located if a < b and table.rows[a][col].strip() != table.rows[b][col].strip()]
        if pairs:
            a, b = rng(seed, "swap", path, column).choice(pairs)
            rows = [list(r) for r in table.rows]
            rows[a][col], rows[b][col] = rows[b][col], rows[a][col]
            yield _wrong(path, "values-swapped", table, table.with_rows(rows), declared,
                         f"{column} of rows {a + 1} and {b + 1} swapped")  # fmt: skip
        with_dates = [i for i in located if any(True for _ in written.dates(table.rows[i][col]))]
        for by in ("day", "month"):
            if with_dates:
                i = rng(seed, "date", by, path, column).choice(with_dates)
                rows = [list(r) for r in table.rows]
                rows[i][col] = written.rewrite_dates(rows[i][col], lambda d, f, by=by: written.write_date(written.shift(d, by), f))
                yield _wrong(path, f"date-shifted-{by}", table, table.with_rows(rows), declared,
                             f"{column} of row {i + 1} a {by} later")  # fmt: skip
        unit = UNIT_COLUMNS.get(column.rsplit("_", 1)[-1])
        numeric = [i for i in located if re.fullmatch(r"-?\d+(\.\d+)?", table.rows[i][col].strip())]
        if unit and numeric and column not in _key_columns(declared):
            i = rng(seed, "unit", path, column).choice(numeric)
            rows = [list(r) for r in table.rows]
            rows[i][col] = f"{rows[i][col].strip()} {unit}"
            yield _wrong(path, "unit-substituted", table, table.with_rows(rows), declared,
                         f"{column} of row {i + 1} written in {unit}")  # fmt: skip
        yield from _flips(path, table, declared, column, seed)
    for i in located:
        rows = [r for n, r in enumerate(table.rows) if n != i]
        yield _wrong(path, "row-dropped", table, table.with_rows(rows), declared, f"row {i + 1} left out")
        yield from _wrong_identifier(path, table, declared, i)
    for number, absent in enumerate(r for r in declared if r.absent):
        added = _absent_row(table, absent, located, seed, number)
        if added is not None:
            yield _wrong(path, "row-added", table, table.with_rows([*table.rows, added]), declared,
                         f"a row for an excluded item ({absent.criterion})")  # fmt: skip
    real_keys = [k for k in _key_columns(declared) if k in keys]
    if real_keys and len(located) >= 2:
        pairs = [(a, b) for a in located for b in located if a < b]
        a, b = rng(seed, "wrong-record", path).choice(pairs)
        rows = [list(r) for r in table.rows]
        for key in real_keys:
            col = keys.index(key)
            rows[a][col], rows[b][col] = rows[b][col], rows[a][col]
        yield _wrong(path, "wrong-record", table, table.with_rows(rows), declared,
                     f"the findings of rows {a + 1} and {b + 1} attached to each other's record")  # fmt: skip


def _key_columns(declared: list[DeclaredRow]) -> list[str]:
    return sorted({k for row in declared for k in row.key if k != WHOLE_ROW})


def _flips(path: str, table: Table, declared: list[DeclaredRow], column: str, seed: int) -> Iterator[Variant]:
    """Each declared enumeration cell flipped to another value of the column's vocabulary."""
    col = table.keys.index(column)
    values = [r.values[column] for r in declared if not r.absent and column in r.values]
    if not values or not all(isinstance(v, str) and not written.is_identifier(v) for v in values):
        return
    vocabulary = sorted({v.casefold() for v in values} | {v.casefold() for r in declared for v in r.vocabulary.get(column, [])})
    if len(vocabulary) < 2:
        return
    for row in declared:
        if row.absent or column not in row.values:
            continue
        for i in rows_matching(table, row):
            current = table.rows[i][col].strip().casefold()
            others = [v for v in vocabulary if v != current and v != str(row.values[column]).casefold()]
            if not others:
                continue
            rows = [list(r) for r in table.rows]
            rows[i][col] = rng(seed, "flip", path, column, str(i)).choice(others)
            yield _wrong(path, "status-flipped", table, table.with_rows(rows), declared,
                         f"{column} of row {i + 1} flipped to {rows[i][col]!r}")  # fmt: skip


def _wrong_identifier(path: str, table: Table, declared: list[DeclaredRow], i: int) -> Iterator[Variant]:
    """The row's identifier written wrong: a key cell's, or (whole-row keys) the one the rubric names."""
    taken = {c.strip().casefold() for r in table.rows for c in r}
    named = {t.casefold() for r in declared for t in _literal_terms(r.values.get(WHOLE_ROW))}
    columns = {*_key_columns(declared), *_text_columns(table, declared)}
    found = [(ident.casefold() not in named, col, ident) for col, cell in enumerate(table.rows[i])
             if table.keys[col] in columns for ident in written.identifiers(cell)]  # fmt: skip
    if not found:
        return
    _, col, ident = min(found)
    wrong = written.bump_identifier(ident)
    for _ in range(10):
        if wrong.casefold() not in taken and wrong != ident:
            break
        wrong = written.bump_identifier(wrong)
    rows = [list(r) for r in table.rows]
    rows[i][col] = rows[i][col].replace(ident, wrong)
    yield _wrong(path, "wrong-identifier", table, table.with_rows(rows), declared, f"{ident} written {wrong}")


def _literal_terms(value: Any) -> list[str]:
    return literal_terms(value.get("claim", [])) if isinstance(value, dict) else []


def _text_columns(table: Table, declared: list[DeclaredRow]) -> list[str]:
    """For whole-row keys: the columns that name what a row is about (all not checked by value)."""
    if not any(WHOLE_ROW in r.key for r in declared):
        return []
    return [k for k in table.keys if k not in _checked_columns(declared)]


def _absent_row(table: Table, absent: DeclaredRow, located: list[int], seed: int, number: int) -> list[str] | None:
    """A plausible row for an item the rubric says must not be listed: a listed row re-keyed."""
    if not located:
        return None
    template = list(table.rows[rng(seed, "added", str(number)).choice(located)])
    keys = table.keys
    for column in absent.key:
        value = absent.values.get(column)
        if column == WHOLE_ROW:
            literal = _literal_claim(value)
            text_columns = [k for k in keys if k not in _checked_columns([absent])]
            if not literal or not text_columns:
                return None
            for k in text_columns:
                template[keys.index(k)] = ""
            template[keys.index(text_columns[0])] = " ".join(literal)
        elif column in keys and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            template[keys.index(column)] = str(value)
        else:
            return None
    return template
