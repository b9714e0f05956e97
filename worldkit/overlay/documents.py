"""Read a deliverable file the way the person who saved it meant it: any encoding, any office format.

A check names a workspace path (`audit-findings.csv`, `P8-update.md`); what is at that path may
be what any careful employee's tools write there:

- text in UTF-8 (with or without a byte-order mark), UTF-16 (with a byte-order mark), or a
  legacy single-byte code page such as Windows-1252 / Latin-1 (Excel's "CSV" on Windows). The
  encoding is detected by `charset-normalizer`, never guessed here; bytes no encoding explains
  are refused with the reason;
- an Excel workbook (`.xlsx`, whatever the file is called): its first sheet that holds any value,
  as comma-separated text (one line per row, cells quoted as CSV quotes them; dates as ISO dates);
- a Word document (`.docx`): its paragraphs in order, headings as markdown headings, and each
  table as a markdown pipe table at its place in the document.

The format is recognized from the bytes (a ZIP package holding `xl/` or `word/`), not from the
file name: a folder names, worldkit reads. This module only reads; it never writes or repairs.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from charset_normalizer import from_bytes

__all__ = ["Document", "DocumentError", "decode_text", "document_of", "read_document"]

_WESTERN = {"cp1252", "latin_1", "iso8859_15"}
_BOMS = (("utf-8-sig", b"\xef\xbb\xbf"), ("utf-16", b"\xff\xfe"), ("utf-16", b"\xfe\xff"))


class DocumentError(ValueError):
    """The file cannot be read as text, a workbook or a document (the message says why)."""


@dataclass(frozen=True)
class Document:
    """A deliverable's text and how it was read."""

    text: str
    """The text: as written for a text file; CSV for a workbook; markdown for a Word document."""
    form: str
    """`text (<encoding>)`, `xlsx` or `docx`."""


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding) of a text file's bytes; raises `DocumentError` when no encoding fits."""
    for encoding, bom in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding).removeprefix("\ufeff"), encoding
            except UnicodeDecodeError as error:
                raise DocumentError(f"starts with a {encoding} byte-order mark but is not {encoding} ({error.reason})") from None
    if b"\x00" in data:
        raise DocumentError("holds NUL bytes and no UTF-16 byte-order mark: it is not a text file")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise DocumentError("is not text in any encoding charset-normalizer knows; save it as UTF-8")
    # Short files often fit several code pages equally well; among the equally good ones the
    # Western one (what Excel on an English or Western European Windows writes) is taken.
    for match in matches:
        tied = (match.chaos, match.coherence) == (best.chaos, best.coherence)
        if tied and _WESTERN & set(match.could_be_from_charset):
            return str(match), match.encoding
    return str(best), best.encoding


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _xlsx_text(data: bytes) -> str:
    from openpyxl import load_workbook

    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except Exception as error:  # openpyxl raises many kinds for a damaged package
        raise DocumentError(f"is a damaged Excel workbook ({type(error).__name__}: {error})") from None
    try:
        for sheet in book.worksheets:
            rows = [[_cell_text(v) for v in row] for row in sheet.iter_rows(values_only=True)]
            rows = [row for row in rows if any(cell.strip() for cell in row)]
            if rows:
                width = max(max((i + 1 for i, c in enumerate(r) if c.strip()), default=0) for r in rows)
                out = io.StringIO()
                csv.writer(out, lineterminator="\n").writerows(row[:width] for row in rows)
                return out.getvalue()
    finally:
        book.close()
    return ""


def _docx_text(data: bytes) -> str:
    from docx import Document as open_docx
    from docx.table import Table as DocxTable
    from docx.text.paragraph import Paragraph

    try:
        document = open_docx(io.BytesIO(data))
    except Exception as error:  # python-docx raises many kinds for a damaged package
        raise DocumentError(f"is a damaged Word document ({type(error).__name__}: {error})") from None
    parts: list[str] = []
    for block in document.iter_inner_content():
        if isinstance(block, Paragraph):
            text = block.text.strip()
            style = (block.style.name if block.style is not None else "") or ""
            if text and style.startswith("Heading") and style.removeprefix("Heading").strip().isdigit():
                text = "#" * int(style.removeprefix("Heading").strip()) + " " + text
            parts.append(text)
        elif isinstance(block, DocxTable):
            rows = [[cell.text.strip().replace("\n", " ").replace("|", "/") for cell in row.cells] for row in block.rows]
            if rows:
                lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
                lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
                parts.append("\n" + "\n".join(lines) + "\n")
    return "\n".join(parts).strip() + "\n"


def _package_kind(data: bytes) -> str | None:
    if not data.startswith(b"PK\x03\x04"):
        return None
    try:
        names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    except zipfile.BadZipFile:
        return None
    if any(n.startswith("xl/") for n in names):
        return "xlsx"
    if any(n.startswith("word/") for n in names):
        return "docx"
    return None


def read_document(file: Path) -> Document:
    """The deliverable at `file` as text (see the module docstring); raises `DocumentError`."""
    return document_of(file.read_bytes())


_KEPT_MAX = 1 << 20
"""Deliverables up to this size (bytes) are kept read (`document_of`); larger ones are read each time."""


def document_of(data: bytes) -> Document:
    """The deliverable whose bytes are `data` as text; raises `DocumentError`.

    A function of the bytes alone, kept for the last distinct deliverables up to `_KEPT_MAX`: grading
    reads one file once per criterion (and verify grades the same reference deliverables for several
    checks), and a workbook or Word document is then parsed once, not each time."""
    return _kept_document(data) if len(data) <= _KEPT_MAX else _document(data)


@lru_cache(maxsize=256)
def _kept_document(data: bytes) -> Document:
    return _document(data)


def _document(data: bytes) -> Document:
    kind = _package_kind(data)
    if kind == "xlsx":
        return Document(_xlsx_text(data), "xlsx")
    if kind == "docx":
        return Document(_docx_text(data), "docx")
    if data.startswith(b"PK\x03\x04"):
        raise DocumentError("is a ZIP archive that is neither an Excel workbook nor a Word document")
    text, encoding = decode_text(data)
    return Document(text, f"text ({encoding})")
