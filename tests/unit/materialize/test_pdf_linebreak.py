"""The PDF writer's one-pass line breaking gives fpdf2's own lines and bytes.

`worldkit.render.office._linebreak.LineBreak` replaces fpdf2's `MultiLineBreak` for plain runs of
text in the writer's core fonts. Each test runs fpdf2's class and the replacement on the same
input and compares every `TextLine` (characters, width, spaces, alignment, height) or the PDF's
bytes; the inputs reach every branch: breaks at a space, at a space that overflows, inside a word
too long for the line, non-breaking spaces, tabs, runs of spaces, and widths too narrow for a
character (fpdf2's error).
"""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from worldkit.render.office import Meta
from worldkit.render.office import pdf as pdf_format

fpdf_module = pytest.importorskip("fpdf.fpdf")
from fpdf import FPDF  # noqa: E402
from fpdf.errors import FPDFException  # noqa: E402
from fpdf.line_break import MultiLineBreak  # noqa: E402

pdf_format.render("x", Meta(title="t", date=dt.date(2025, 1, 1), author=""))  # installs the replacement
LineBreak = fpdf_module.MultiLineBreak
FONTS = [("helvetica", "", 9.5), ("helvetica", "B", 16), ("courier", "", 7.5)]
WORDS = st.lists(
    st.one_of(
        st.sampled_from(["a", "of", "the", "lot", "assay", "ZV-1", "99.2%", "≤", "Ünïcode", "x" * 40,
                         "supercalifragilisticexpialidocious" * 3]),
        st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789.,;:()-/éü€", min_size=1, max_size=25),
    ),
    max_size=80,
)
GAPS = st.sampled_from([" ", " ", " ", "  ", "\t", "\xa0", " \xa0 ", "   "])


def _text(words: list[str], gaps: list[str]) -> str:
    out = []
    for n, word in enumerate(words):
        out.append(word)
        out.append(gaps[n % len(gaps)] if gaps else " ")
    return pdf_format.pdf_text("".join(out))


def _lines(cls: type, text: str, font: tuple[str, str, float], width: float) -> list[tuple] | str:
    pdf = FPDF(format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.add_page()
    pdf_format._font(pdf, *font)
    fragments = pdf._preload_font_styles(pdf.normalize_text(text).replace("\r", ""), False)  # as multi_cell does
    breaker = cls(fragments, width, [pdf.c_margin, pdf.c_margin], align="J" if width > 20 else "L")
    lines = []
    try:
        while (line := breaker.get_line()) is not None:
            lines.append((
                [("".join(f.characters), f.graphics_state is fragments[0].graphics_state, f.k, f.link)
                 for f in line.fragments],
                line.text_width, type(line.text_width), line.number_of_spaces, line.align, line.height,
                line.max_width, line.trailing_nl, line.trailing_form_feed, line.indent,
            ))  # fmt: skip
            if len(lines) > 10_000:
                return "runaway"
    except FPDFException as error:
        lines.append(("error", str(error)))
    return lines


def test_the_replacement_is_installed_for_multi_cell() -> None:
    assert LineBreak is not MultiLineBreak and issubclass(LineBreak, MultiLineBreak)


@settings(max_examples=300)
@given(WORDS, st.lists(GAPS, max_size=5), st.sampled_from(FONTS),
       st.sampled_from([174.0, 120.5, 60.0, 25.0, 12.0, 4.0, 2.5]))  # fmt: skip
def test_lines_equal_fpdf2s(words: list[str], gaps: list[str], font: tuple[str, str, float], width: float) -> None:
    text = _text(words, gaps)
    assert _lines(LineBreak, text, font, width) == _lines(MultiLineBreak, text, font, width)


@pytest.mark.parametrize("text", [
    "", " ", "   ", "\xa0", "word", " leading space", "trailing space ", "a  b   c    d",
    "x" * 400, ("y" * 150 + " ") * 3, "\t\ttabs\tand words\t", "soft\xadhyphen " * 30, "two\nlines " * 20,
    "form\x0cfeed", " " * 300 + "after many spaces",
])  # fmt: skip
@pytest.mark.parametrize("width", [174.0, 30.0, 3.0, 0.5])
def test_edge_cases_equal_fpdf2s(text: str, width: float) -> None:
    """Soft hyphens, newlines and form feeds go to fpdf2's own `get_line` (the result must be equal too)."""
    for font in FONTS:
        assert _lines(LineBreak, text, font, width) == _lines(MultiLineBreak, text, font, width)


@settings(max_examples=40)
@given(st.lists(st.tuples(st.sampled_from(["# ", "## ", "- ", "1. ", "> ", "", ""]), WORDS), max_size=12))
def test_pdf_bytes_equal_fpdf2s(paragraphs: list[tuple[str, list[str]]]) -> None:
    text = "\n\n".join(prefix + " ".join(words) for prefix, words in paragraphs) + "\n"
    meta = Meta(title="Stability ≥ 5", date=dt.date(2026, 3, 2), author="Ann Analyst")
    fast = pdf_format.render(text, meta)
    fpdf_module.MultiLineBreak = MultiLineBreak
    try:
        plain = pdf_format.render(text, meta)
    finally:
        fpdf_module.MultiLineBreak = LineBreak
    assert fast == plain
