"""Deliverables read whatever a person's tools saved: encodings, Excel workbooks, Word documents."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from docx import Document as WordDocument
from openpyxl import Workbook

from worldkit.overlay.context import GradingContext
from worldkit.overlay.documents import DocumentError, decode_text, read_document
from worldkit.overlay.tables import read_table

ROWS = [["record_id", "finding", "classification"],
        ["STB-ZV23005-5C-24M", "Results entered before the pull – “chronology”", "Major"],
        ["STB-ZV23007-5C-12M", "Same analyst reported and approved", "major"]]  # fmt: skip


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "cp1252", "latin-1"])
def test_a_table_saved_in_any_common_encoding_decodes_to_the_same_text(encoding: str) -> None:
    text = "\n".join(",".join(r) for r in ROWS) + "\nSTB-1,Café naïve at 5 °C ± 3 °C,minor\n"
    if encoding == "latin-1":  # no typographic dashes or quotes in Latin-1
        text = text.replace("–", "-").replace("“", '"').replace("”", '"')
    data = text.encode(encoding)
    if encoding == "utf-16-le":
        data = b"\xff\xfe" + data  # what Excel's "Unicode text" writes: a mark, then little-endian
    decoded, _ = decode_text(data)
    assert decoded == text


def test_bytes_that_are_no_text_are_refused_with_the_reason() -> None:
    with pytest.raises(DocumentError, match="NUL bytes"):
        decode_text(b"a,b\x00\x00c")


def test_an_excel_workbook_reads_as_the_table_it_holds(tmp_path: Path) -> None:
    book = Workbook()
    book.active.title = "Empty"
    sheet = book.create_sheet("Findings")
    for row in ROWS:
        sheet.append(row)
    sheet.append(["STB-ZV23004-5C-36M", dt.datetime(2026, 1, 26), 3.0])
    path = tmp_path / "DI-findings.csv"  # saved under the requested name, whatever the format
    book.save(path)
    document = read_document(path)
    assert document.form == "xlsx"
    table = read_table(document.text)
    assert table.header == ["record_id", "finding", "classification"]
    assert [r["record_id"] for r in table.rows] == ["STB-ZV23005-5C-24M", "STB-ZV23007-5C-12M", "STB-ZV23004-5C-36M"]
    assert table.rows[0]["finding"] == "Results entered before the pull – “chronology”"
    assert table.rows[2] == {"record_id": "STB-ZV23004-5C-36M", "finding": "2026-01-26", "classification": "3"}


def test_a_word_document_reads_as_markdown_with_its_tables_in_place(tmp_path: Path) -> None:
    doc = WordDocument()
    doc.add_heading("Audit of the change", level=1)
    doc.add_paragraph("The near miss was stopped at line clearance.")
    table = doc.add_table(rows=len(ROWS), cols=3)
    for i, row in enumerate(ROWS):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    doc.add_paragraph("Closing remark.")
    path = tmp_path / "memo.md"
    doc.save(path)
    document = read_document(path)
    assert document.form == "docx"
    lines = document.text.splitlines()
    assert lines[0] == "# Audit of the change"
    assert "| record_id | finding | classification |" in lines
    assert "| STB-ZV23007-5C-12M | Same analyst reported and approved | major |" in lines
    assert lines.index("| record_id | finding | classification |") < lines.index("Closing remark.")


def test_a_zip_that_is_no_office_file_is_refused(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "x.csv"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data.txt", "a,b")
    with pytest.raises(DocumentError, match="neither an Excel workbook nor a Word document"):
        read_document(path)


def test_grading_context_defaults_to_a_known_state() -> None:
    context = GradingContext(workspace=Path("."), records={}, sent=[], events=None, projection=Path("."))
    assert context.state_known and context.request == ""
