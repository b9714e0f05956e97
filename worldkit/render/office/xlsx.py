"""XLSX (openpyxl) from CSV text, and its cells back as CSV lines."""

from __future__ import annotations

import csv
import io
import re
from typing import TYPE_CHECKING

from worldkit.render.office._zip import fixed_package, noon

if TYPE_CHECKING:
    from worldkit.render.office import Meta

_INT = re.compile(r"^-?(0|[1-9]\d{0,14})$")
_FLOAT = re.compile(r"^-?\d+\.\d+$")
_BAD_SHEET = re.compile(r"[\[\]:*?/\\]")


def _value(text: str) -> str | int | float:
    """A number where the cell holds one that reads back the same; text otherwise."""
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text) and repr(float(text)) == text.lstrip("+"):
        return float(text)
    return text


def render(text: str, meta: Meta) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = (_BAD_SHEET.sub(" ", meta.title).strip() or "Sheet1")[:31]
    for row in csv.reader(io.StringIO(text)):
        sheet.append([_value(v) for v in row])
    when = noon(meta.date)
    props = book.properties
    props.creator = props.lastModifiedBy = meta.author or None
    props.title = meta.title
    props.created = props.modified = when
    buffer = io.BytesIO()
    book.save(buffer)
    return fixed_package(buffer.getvalue(), when)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)
    return str(value)


def extract(data: bytes) -> str:
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    sheets = book.worksheets
    for sheet in sheets:
        if len(sheets) > 1:
            out.write(f"## {sheet.title}\n")
        for row in sheet.iter_rows(values_only=True):
            writer.writerow([_cell(v) for v in row])
    book.close()
    return out.getvalue()
