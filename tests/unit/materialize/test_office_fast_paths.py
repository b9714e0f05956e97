"""The office renderers' shortcuts write the bytes the libraries' plain paths write.

The DOCX writer reads python-docx's template once and deflates its parts once, through a zip
writer of its own; the PDF writer measures text with faster core fonts; verify's cache-off rebuild
renders each distinct office input once (`once_each`). Each is compared here with the plain
python-docx / fpdf2 / zipfile path it replaces, on inputs that exercise every block kind.
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.render.office import Meta
from worldkit.render.office import cache as office_cache
from worldkit.render.office import docx as docx_format
from worldkit.render.office import pdf as pdf_format
from worldkit.render.office._zip import (
    Member,
    fixed_package,
    noon,
    stamped_core,
    write_package,
)
from worldkit.render.office.markdown import blocks, spans, table_lines

TEXTS = [
    "# Title\n\nA paragraph with **bold** words and an unpaired ** marker.\n",
    "## 2 Scope\n\n- one\n- **two**\n\n1. first\n2. second\n\n> a quote ≤ 5 °C → ok\n",
    "| Lot | Assay | Note |\n|---|---|---|\n| ZV-1 | 99.2 | within |\n| ZV-2 | 98.7 |\n\nAfter the table.\n",
    "### Deep heading\n\n" + " ".join(["A long line that wraps several times on the page."] * 30) + "\n",
    "\n".join(f"- item {n}: " + "x" * (n * 7) for n in range(40)) + "\n",
    "#### Δ α β κ\n\nNon-Latin-1 text: Ω ★ 漢字 and a tab\tinside.\n",
    "",
]
METAS = [
    Meta(title="SOP-QC-014 Stability programme", date=dt.date(2025, 3, 12), author="Ann Analyst"),
    Meta(title="Ünïcode title ≥", date=dt.date(2026, 1, 31), author=""),
]


def _plain_docx(text: str, meta: Meta) -> bytes:
    """The DOCX path the template reuse replaces: a fresh `docx.Document()`, saved and re-packaged by zipfile."""
    import docx

    document = docx.Document()
    props = document.core_properties
    when = noon(meta.date)
    props.title, props.author, props.last_modified_by = meta.title, meta.author, meta.author
    props.created = props.modified = when
    props.last_printed = when
    props.revision = 1
    props.comments = props.keywords = props.subject = props.category = ""

    def paragraph(style_id: str | None):
        made = document.add_paragraph()
        if style_id is not None:
            made._p.style = style_id
        return made

    def runs(made, line: str) -> None:
        for part, bold in spans(line):
            run = made.add_run(part)
            if bold:
                run.bold = True

    for block in blocks(text):
        if block.kind == "heading":
            runs(paragraph(f"Heading{min(block.level, 9)}"), block.text)
        elif block.kind == "table":
            width = max(len(r) for r in block.rows)
            table = document.add_table(rows=len(block.rows), cols=width)
            table._tbl.tblStyle_val = "TableGrid"
            for row, values in zip(table.rows, block.rows):
                for cell, value in zip(row.cells, values + [""] * (width - len(values))):
                    cell.text = value
        else:
            runs(paragraph(docx_format._LISTS.get(block.kind)), block.text)
    buffer = io.BytesIO()
    document.save(buffer)
    return _zipfile_package(buffer.getvalue(), when)


def _zipfile_package(data: bytes, when: dt.datetime) -> bytes:
    """What `fixed_package` wrote with `zipfile` before it had a writer of its own."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for info in source.infolist():
            body = source.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = stamped_core(body, when)
            entry = zipfile.ZipInfo(info.filename, date_time=when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.create_system = 3
            entry.external_attr = 0o100644 << 16
            package.writestr(entry, body, compresslevel=6)
    return out.getvalue()


def _plain_pdf(text: str, meta: Meta) -> bytes:
    """The PDF path with fpdf2's own `FPDF` and core fonts."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_creation_date(noon(meta.date).replace(tzinfo=dt.timezone.utc))
    pdf.set_title(pdf_format.pdf_text(meta.title))
    if meta.author:
        pdf.set_author(pdf_format.pdf_text(meta.author))
    pdf.set_creator("Riverbend document system")
    pdf.set_auto_page_break(True, margin=15)
    pdf.set_margins(18, 18, 18)
    pdf.add_page()
    width = pdf.epw
    for block in blocks(text):
        if block.kind == "heading":
            pdf.set_font("helvetica", "B", pdf_format._SIZES.get(block.level, 10.5))
            pdf.multi_cell(width, 7, pdf_format.pdf_text(block.text.replace("**", "")), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        elif block.kind == "table":
            pdf.set_font("courier", "", 7.5)
            for line in table_lines(block.rows):
                pdf.multi_cell(width, 3.8, pdf_format.pdf_text(line), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        else:
            prefix = {"bullet": "- ", "numbered": f"{block.level}. ", "quote": "> "}.get(block.kind, "")
            pdf.set_font("helvetica", "", 9.5)
            line = prefix + "".join(part for part, _ in spans(block.text))
            pdf.multi_cell(width, 4.8, pdf_format.pdf_text(line), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1.5)
    return bytes(pdf.output())


@pytest.mark.parametrize("meta", METAS, ids=["with-author", "no-author"])
@pytest.mark.parametrize("text", TEXTS)
def test_docx_from_the_read_once_template_equals_a_fresh_document(text: str, meta: Meta) -> None:
    assert docx_format.render(text, meta) == _plain_docx(text, meta)


def test_documents_rendered_one_after_another_do_not_share_content() -> None:
    first, second, again = (docx_format.render(t, METAS[0]) for t in (TEXTS[2], TEXTS[0], TEXTS[2]))
    assert first == again != second
    assert second == _plain_docx(TEXTS[0], METAS[0])


@pytest.mark.parametrize("meta", METAS, ids=["with-author", "no-author"])
@pytest.mark.parametrize("text", TEXTS)
def test_pdf_with_the_faster_core_fonts_equals_fpdf2s_own(text: str, meta: Meta) -> None:
    assert pdf_format.render(text, meta) == _plain_pdf(text, meta)


_NAMES = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FF, blacklist_characters="/\\"), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    members=st.lists(st.tuples(_NAMES, st.binary(max_size=3000)), min_size=0, max_size=6, unique_by=lambda m: m[0]),
    day=st.dates(min_value=dt.date(1980, 1, 1), max_value=dt.date(2107, 12, 31)),
    seconds=st.integers(min_value=0, max_value=86399),
)
def test_the_zip_writer_writes_what_zipfile_writes(members: list[tuple[str, bytes]], day: dt.date, seconds: int) -> None:
    when = dt.datetime.combine(day, dt.time()) + dt.timedelta(seconds=seconds)
    expected = io.BytesIO()
    with zipfile.ZipFile(expected, "w") as package:
        for name, body in members:
            entry = zipfile.ZipInfo(name, date_time=when.timetuple()[:6])
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.create_system = 3
            entry.external_attr = 0o100644 << 16
            package.writestr(entry, body, compresslevel=6)
    assert write_package([Member.of(name, body) for name, body in members], when) == expected.getvalue()


def test_fixed_package_equals_the_zipfile_rewrite() -> None:
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["lot", "assay"])
    buffer = io.BytesIO()
    book.save(buffer)
    when = noon(dt.date(2025, 3, 12))
    assert fixed_package(buffer.getvalue(), when) == _zipfile_package(buffer.getvalue(), when)


def test_a_timestamp_zip_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="1980"):
        write_package([Member.of("a", b"x")], dt.datetime(1979, 12, 31))


def _counting() -> tuple[list[str], object]:
    calls: list[str] = []

    def render(tag: str = "x") -> bytes:
        calls.append(tag)
        return b"%PDF-" + tag.encode()

    return calls, render


def test_once_each_renders_each_distinct_input_once_with_the_caches_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(office_cache.ENV, "off")
    calls, render = _counting()
    other = Meta(title=METAS[0].title, date=METAS[0].date + dt.timedelta(days=1), author=METAS[0].author)
    with office_cache.once_each():
        a = office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("a"))
        b = office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("b"))  # same key: not rendered
        c = office_cache.cached(".pdf", TEXTS[0], other, lambda: render("c"))  # another date: rendered
        d = office_cache.cached(".docx", TEXTS[0], METAS[0], lambda: render("d"))  # another format: rendered
        with office_cache.fresh():
            office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("e"))  # a fresh() block renders anew
    assert calls == ["a", "c", "d", "e"] and a == b != c
    with office_cache.once_each():  # a new block keeps nothing of the last one
        office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("f"))
    office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("g"))  # outside a block: every time
    office_cache.cached(".pdf", TEXTS[0], METAS[0], lambda: render("h"))
    assert calls[4:] == ["f", "g", "h"]


def test_once_each_neither_reads_nor_writes_the_cache_folder(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDKIT_CACHE", str(tmp_path))
    monkeypatch.delenv(office_cache.ENV, raising=False)
    calls, render = _counting()
    office_cache.cached(".pdf", TEXTS[1], METAS[0], lambda: render("stored"))  # now in the cache folder
    monkeypatch.setenv(office_cache.ENV, "off")
    with office_cache.once_each():
        office_cache.cached(".pdf", TEXTS[1], METAS[0], lambda: render("anew"))
        office_cache.cached(".pdf", TEXTS[2], METAS[0], lambda: render("new"))
    assert calls == ["stored", "anew", "new"]
    assert len([p for p in (tmp_path / "office").rglob("*") if p.is_file()]) == 1


def test_the_cache_off_rebuild_process_renders_in_a_once_each_block(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    import sys

    from worldkit.verify import rebuild

    seen: list[bool] = []

    class Built:
        class manifest:  # noqa: N801 - stands in for a Manifest
            fingerprint = "f"

        def tree_sha256(self) -> str:
            return "t"

        def discard(self) -> None:
            pass

    def build(package, rev, date, seat, out):
        seen.append(office_cache._ONCE[-1] is not None)
        return Built()

    monkeypatch.setattr(rebuild, "build_projection", build)
    monkeypatch.setattr(rebuild, "load_world", lambda path: type("Package", (), {"revision_names": []})())
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps([["r1", "2026-03-02", "S"], ["r2", "2026-03-02", "S"]])))
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert rebuild.main(["--nice", "0", "world", "out"]) == 0
    assert seen == [True, True] and office_cache._ONCE[-1] is None
