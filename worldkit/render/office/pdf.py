"""PDF (fpdf2, core fonts) from the Markdown subset, and its text back (pypdf).

The core fonts carry Windows-1252; the few characters outside it that world text uses are
written as their usual ASCII forms (`≤` as `<=`), so the extracted text says the same. The PDF
is dated by the document (creation date), and fpdf2's document id is a digest of the content
and that date, so the bytes are a function of the text alone.

fpdf2's line breaking measures the line again for every character it adds; the core fonts here
(`_font`) measure with the same integer sum of the same widths, only without a generator, and
their plain runs of text are broken into lines in one pass (`_linebreak`), so the breaks and the
bytes are fpdf2's own.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from worldkit.render.office import _linebreak
from worldkit.render.office._zip import noon
from worldkit.render.office.markdown import blocks, spans, table_lines

if TYPE_CHECKING:
    from worldkit.render.office import Meta

_ASCII = {"≤": "<=", "≥": ">=", "→": "->", "←": "<-", "−": "-", "≈": "~", "✓": "x", "✗": "-", "\u2009": " ",
          "\u202f": " ", "\u2011": "-", "Δ": "delta ", "α": "alpha", "β": "beta", "κ": "kappa"}
_SIZES = {1: 16, 2: 13, 3: 11.5}


def pdf_text(text: str) -> str:
    """`text` as the PDF's core fonts can show it (and as its extracted text reads)."""
    for char, ascii_form in _ASCII.items():
        text = text.replace(char, ascii_form)
    return text.encode("cp1252", errors="replace").decode("cp1252")


_FONT_CLASS: list[type] = []


def _font(pdf, family: str, style: str, size: float) -> None:
    """`pdf.set_font(family, style, size)`, the core font it adds made a `CoreFont` whose text width is
    computed without a generator (the font is made by fpdf2 itself, whose constructor differs between
    releases, then given the subclass)."""
    if not _FONT_CLASS:
        from fpdf.fonts import CoreFont

        class _CoreFont(CoreFont):
            __slots__ = ()

            def get_text_width(self, text, font_size_pt, _):
                return (len(text), sum(map(self.cw.__getitem__, text)) * font_size_pt * 0.001)

        _FONT_CLASS.append(_CoreFont)
        _linebreak.install(_CoreFont)
    pdf.set_font(family, style, size)
    font = pdf.current_font
    if type(font) is _FONT_CLASS[0].__base__:
        font.__class__ = _FONT_CLASS[0]


def render(text: str, meta: Meta) -> bytes:
    import datetime as dt

    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_creation_date(noon(meta.date).replace(tzinfo=dt.timezone.utc))
    pdf.set_title(pdf_text(meta.title))
    if meta.author:
        pdf.set_author(pdf_text(meta.author))
    pdf.set_creator("Riverbend document system")
    pdf.set_auto_page_break(True, margin=15)
    pdf.set_margins(18, 18, 18)
    pdf.add_page()
    width = pdf.epw
    for block in blocks(text):
        if block.kind == "heading":
            _font(pdf, "helvetica", "B", _SIZES.get(block.level, 10.5))
            pdf.multi_cell(width, 7, pdf_text(block.text.replace("**", "")), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1)
        elif block.kind == "table":
            _font(pdf, "courier", "", 7.5)
            for line in table_lines(block.rows):
                pdf.multi_cell(width, 3.8, pdf_text(line), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(2)
        else:
            prefix = {"bullet": "- ", "numbered": f"{block.level}. ", "quote": "> "}.get(block.kind, "")
            _font(pdf, "helvetica", "", 9.5)
            line = prefix + "".join(part for part, _ in spans(block.text))
            pdf.multi_cell(width, 4.8, pdf_text(line), new_x="LMARGIN", new_y="NEXT")
            pdf.ln(1.5)
    return bytes(pdf.output())


def extract(data: bytes) -> str:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(data))
    return "\n\n".join(page.extract_text() for page in reader.pages) + "\n"
