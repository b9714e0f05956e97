"""Read a table deliverable the way a person or a spreadsheet writes it.

`read_table` accepts: a UTF-8 byte-order mark; LF, CRLF or CR line ends; `,` `;` tab or `|` as
the separator (the one that splits the header line into the most columns wins; ties go to the
order listed); spaces after separators; quoted cells (with the separator or doubled quotes
inside); blank lines; a markdown pipe table (leading and trailing `|`, a `|---|` rule line).
Header names are matched by `header_key`: case folded, surrounding spaces dropped, inner runs
of spaces, `-` and `.` made `_` (`Equipment ID` → `equipment_id`). Cells are stripped.

Notes are not rows: a line whose first cell opens with `Note`, `Notes`, `Footnote`, `Remark`,
`Source`, `N.B.` or a footnote mark (`*`, `†`, `‡`), or a line holding only a first cell of four
or more words (a sentence written under the table), is kept in `Table.notes`, not in `rows`.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

DELIMITERS = (",", ";", "\t", "|")


@dataclass(frozen=True)
class Table:
    """A parsed table: normalized header keys, and one dict per data row (key → stripped cell)."""

    header: list[str]
    rows: list[dict[str, str]]
    delimiter: str
    notes: tuple[str, ...] = ()
    """Lines under or among the rows that are notes, not rows (module docstring)."""


class TableError(ValueError):
    """The text is not a table with a header row."""


def header_key(name: str) -> str:
    return re.sub(r"[\s\-.]+", "_", name.strip().strip('"').strip().casefold()).strip("_")


def _lines(text: str) -> list[str]:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return [line for line in text.split("\n") if line.strip()]


def _split(line: str, delimiter: str) -> list[str]:
    return next(csv.reader([line], delimiter=delimiter, skipinitialspace=True), [])


def _is_rule(cells: list[str]) -> bool:
    return bool(cells) and all(re.fullmatch(r":?-{2,}:?", c.strip()) for c in cells if c.strip())


_NOTE_HEAD = re.compile(r"^\s*(?:[*\u2020\u2021]|(?:notes?|footnotes?|remarks?|source|n\.\s?b\.?)\b)", re.IGNORECASE)


def _is_note(cells: list[str]) -> bool:
    filled = [c for c in cells if c.strip()]
    if not filled:
        return False
    if _NOTE_HEAD.match(cells[0]):
        return True
    return len(filled) == 1 and bool(cells[0].strip()) and len(cells[0].split()) >= 4


def read_table(text: str) -> Table:
    """Parse `text` (see the module docstring); raises `TableError` when there is no header."""
    lines = _lines(text)
    if not lines:
        raise TableError("the file holds no table (no non-blank line)")
    try:
        delimiter = max(DELIMITERS, key=lambda d: (len(_split(lines[0], d)), -DELIMITERS.index(d)))
        reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter, skipinitialspace=True)
        raw = [[cell.strip() for cell in row] for row in reader]
    except csv.Error as error:  # e.g. a cell over the csv module's field limit (128 KiB)
        raise TableError(f"the file cannot be read as a table ({error})") from None
    if delimiter == "|":
        raw = [row[1:] if row and row[0] == "" else row for row in raw]
        raw = [row[:-1] if row and row[-1] == "" else row for row in raw]
        raw = [row for row in raw if not _is_rule(row)]
    header = [header_key(h) for h in raw[0]]
    if len([h for h in header if h]) < 2:
        raise TableError(f"the first line {lines[0][:80]!r} is not a header row of at least two named columns")
    rows = []
    notes = []
    for cells in raw[1:]:
        if not any(cells):
            continue
        if _is_note(cells):
            notes.append(", ".join(c for c in cells if c))
            continue
        row = {name: (cells[i] if i < len(cells) else "") for i, name in enumerate(header) if name}
        rows.append(row)
    return Table(header=[h for h in header if h], rows=rows, delimiter=delimiter, notes=tuple(notes))
