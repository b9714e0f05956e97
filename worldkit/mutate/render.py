"""Deliverables written the way people save them: encodings, spreadsheets, word-processor files.

Everything here is deterministic: the office formats are re-zipped with fixed entry times and
fixed document properties, so the same text gives the same bytes in every run.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile

FIXED_TIME = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
_ZIP_TIME = (2000, 1, 1, 0, 0, 0)

ENCODINGS = {"utf-8-bom": "utf-8-sig", "utf-16": "utf-16", "cp1252": "cp1252"}
"""Variant name → Python codec (`utf-16` writes a byte-order mark, as Windows tools do)."""


def encode(text: str, codec: str, *, crlf: bool = False) -> bytes | None:
    """`text` in `codec` (optionally CRLF line ends); None when a character cannot be encoded."""
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    try:
        return text.encode(codec)
    except UnicodeEncodeError:
        return None


def _stable_zip(data: bytes) -> bytes:
    """Re-zip with fixed entry times (the office libraries stamp the wall clock)."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            entry = zipfile.ZipInfo(info.filename, _ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o600 << 16
            target.writestr(entry, source.read(info.filename))
    return out.getvalue()


def xlsx(header: list[str], rows: list[list[str]], *, numbers: bool = True) -> bytes:
    """A one-sheet workbook; cells that read as plain numbers are stored as numbers."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Sheet1"
    sheet.append(header)
    for row in rows:
        sheet.append([_cell(value) if numbers else value for value in row])
    book.properties.created = FIXED_TIME.replace(tzinfo=None)
    book.properties.modified = FIXED_TIME.replace(tzinfo=None)
    book.properties.creator = "worldkit mutate"
    buffer = io.BytesIO()
    book.save(buffer)
    return _stable_zip(buffer.getvalue())


def _cell(value: str) -> str | int | float:
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    if re.fullmatch(r"-?\d+\.\d+", value):
        return float(value)
    return value


def docx(markdown: str) -> bytes:
    """A word-processor document from a markdown memo: headings, paragraphs, list items, tables."""
    from docx import Document

    document = Document()
    lines = markdown.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            document.add_heading(_plain(heading.group(2)), level=min(len(heading.group(1)), 4))
        elif line.lstrip().startswith("|"):
            block = []
            while index < len(lines) and lines[index].lstrip().startswith("|"):
                block.append(lines[index])
                index += 1
            _docx_table(document, block)
            continue
        elif line.strip():
            document.add_paragraph(_plain(line.strip()))
        index += 1
    document.core_properties.created = FIXED_TIME
    document.core_properties.modified = FIXED_TIME
    document.core_properties.author = "worldkit mutate"
    buffer = io.BytesIO()
    document.save(buffer)
    return _stable_zip(buffer.getvalue())


def _docx_table(document: object, block: list[str]) -> None:
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block]
    rows = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) for c in r if c)]
    if not rows:
        return
    table = document.add_table(rows=len(rows), cols=max(len(r) for r in rows))  # type: ignore[attr-defined]
    for r, cells in enumerate(rows):
        for c, value in enumerate(cells):
            table.cell(r, c).text = _plain(value)


def _plain(text: str) -> str:
    return re.sub(r"(\*\*|__|`)", "", text)
