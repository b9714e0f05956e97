"""fpdf2's line breaking for one run of plain text in a core font, without measuring each line again.

`FPDF.multi_cell` breaks text into lines with `MultiLineBreak.get_line`, which adds one character
at a time and, for each, sums the widths of every character already on the line: quadratic in the
line's length, and most of the time a PDF of this toolkit takes to render. `LineBreak` is that
class with `get_line` done in one pass, for the case every PDF here is (one fragment of text in a
core font of `worldkit.render.office.pdf`, no character spacing or stretching, word wrapping, no
soft hyphens, newlines or form feeds, a fixed width): it keeps the line's width as the same
integer sum of the same per-mille widths and turns it into points with the same float operations
fpdf2 uses, so every comparison, every break and every `TextLine` is fpdf2's own. Any other input
goes to fpdf2's `get_line` unchanged. Installed once, by `install`, for the module `multi_cell`
reads it from; the equivalence is tested against fpdf2's own class on random text.

fpdf2 changes its line breaking between releases (2.8.9 compares widths with a 1e-9 tolerance and
keeps its graphics state as an object, not a dict), so the one-pass class is installed only for the
releases in `VERIFIED`, each with the comparison that release makes; on any other release
`multi_cell` keeps fpdf2's own class, and the PDFs are still fpdf2's own, only slower.
"""

from __future__ import annotations

from typing import Any

_INSTALLED: list[type] = []

VERIFIED: dict[str, float | None] = {"2.8.3": None, "2.8.4": None, "2.8.9": 1e-9}
"""fpdf2 releases whose `MultiLineBreak.get_line` this module reproduces → the tolerance with which that
release finds a line too wide (None: a plain `>`; else `FloatTolerance.greater_than`)."""


def install(font_class: type) -> bool:
    """Make `fpdf.fpdf.MultiLineBreak` the one-pass `LineBreak`, for text in fonts of `font_class`,
    if the installed fpdf2 is one of `VERIFIED`; True if it is (or already was) installed."""
    if _INSTALLED:
        return _INSTALLED[0] is not None
    import fpdf
    import fpdf.fpdf as fpdf_module

    if fpdf.FPDF_VERSION not in VERIFIED:
        _INSTALLED.append(None)
        return False
    tolerance = VERIFIED[fpdf.FPDF_VERSION]
    from fpdf.enums import Align, WrapMode
    from fpdf.line_break import (
        BREAKING_SPACE_SYMBOLS_STR,
        FORM_FEED,
        NBSP,
        NEWLINE,
        SOFT_HYPHEN,
        SPACE,
        MultiLineBreak,
        TextLine,
    )

    unhandled = frozenset((NEWLINE, FORM_FEED, SOFT_HYPHEN))
    breaking = frozenset(BREAKING_SPACE_SYMBOLS_STR)

    class LineBreak(MultiLineBreak):
        def __init__(self, fragments: Any, max_width: Any, margins: Any, **options: Any) -> None:
            super().__init__(fragments, max_width, margins, **options)
            self._fast = None
            if callable(max_width) or len(fragments) != 1:
                return
            fragment = fragments[0]
            if (
                type(fragment.font) is not font_class
                or self.print_sh
                or self.wrapmode != WrapMode.WORD
                or self.skip_leading_spaces
                or self.first_line_indent
                or self.line_height != 1.0
                or fragment.char_spacing != 0
                or fragment.font_stretching != 100
                or fragment.text_shaping_parameters
                or not unhandled.isdisjoint(fragment.characters)
            ):
                return
            self._fast = (fragment, fragment.font.cw, fragment.font_size_pt, fragment.k, fragment.font_size)

        def get_line(self) -> Any:
            if self._fast is None:
                return super().get_line()
            fragment, cw, size_pt, k, font_size = self._fast
            forced_before = self.idx_last_forced_break
            self.idx_last_forced_break = None
            if self.fragment_index == 1:
                return None
            chars = fragment.characters
            end = len(chars)
            line_max = self.get_width(font_size)
            limit = line_max
            for margin in self.margins:
                limit -= margin
            index = self.character_index
            line: list[str] = []
            begun = False  # a character was added: fpdf2's line then holds a fragment, kept even if emptied
            units = 0  # the line's width: fpdf2's integer sum of the core font's widths
            width: float = 0  # as `CurrentLine.width` gives it (the int 0 while the line is empty)
            spaces = 0
            hint = None  # (index in the text, characters on the line, spaces before it): a space to break at
            height = 0
            while index < end:
                char = chars[index]
                char_width = cw[char] * size_pt * 0.001 / k
                if (width + char_width - limit > tolerance) if tolerance else (width + char_width > limit):
                    if char in breaking:
                        self.character_index = index + 1
                        return self._line(line, begun, units, spaces, self.align, height, line_max)
                    if hint is not None:
                        at, kept, spaces = hint
                        self.character_index = at + 1
                        del line[kept:]
                        units = sum(map(cw.__getitem__, line))
                        return self._line(line, begun, units, spaces, self.align, height, line_max)
                    if forced_before == index:
                        from fpdf.errors import FPDFException

                        raise FPDFException("Not enough horizontal space to render a single character")
                    self.idx_last_forced_break = index
                    self.character_index = index
                    align = Align.L if self.align == Align.J else self.align
                    return self._line(line, begun, units, spaces, align, height, line_max)
                height, begun = font_size, True
                if char in breaking:
                    hint = (index, len(line), spaces)
                    spaces += 1
                elif char == NBSP:
                    char = SPACE
                    spaces += 1
                line.append(char)
                units += cw[char]
                width = units * size_pt * 0.001 / k
                index += 1
            self.character_index = 0
            self.fragment_index = 1
            self._is_first_line = False
            if not width:
                return None
            return self._line(line, begun, units, spaces, Align.L if self.align == Align.J else self.align, height, line_max)

        def _line(self, line: list[str], begun: bool, units: int, spaces: int, align: Any, height: float,
                  line_max: float) -> Any:
            self._is_first_line = False
            fragment = self._fast[0]
            if begun:
                made = fragment.__class__(characters=line, graphics_state=fragment.graphics_state, k=fragment.k,
                                          link=fragment.link)
                fragments, width = [made], units * self._fast[2] * 0.001 / self._fast[3]
            else:
                fragments, width = [], 0
            return TextLine(fragments=fragments, text_width=width, number_of_spaces=spaces, align=align,
                            height=height, max_width=line_max, trailing_nl=False, trailing_form_feed=False,
                            indent=0)

    fpdf_module.MultiLineBreak = LineBreak
    _INSTALLED.append(LineBreak)
    return True
