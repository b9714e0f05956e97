"""A format library that fails is named as such (library, version, document), not blamed on the template."""

from __future__ import annotations

import datetime as dt
from importlib import metadata

import pytest

from tests.builders import WorldSpec
from worldkit.errors import ExitCode, InvalidWorld
from worldkit.materialize import materialize
from worldkit.render import office
from worldkit.render.office import FORMATS, LibraryFailed, Meta
from worldkit.render.office.cache import fresh

META = Meta(title="t", date=dt.date(2026, 3, 2))


def _pdf_raising(error: Exception) -> office.Format:
    def render(text: str, meta: Meta) -> bytes:
        raise error

    return office.Format("PDF", render, FORMATS[".pdf"].extract, "fpdf2", "fpdf")


def test_an_exception_of_python_inside_the_library_is_the_library_s_failure() -> None:
    fmt = _pdf_raising(TypeError("'GraphicsState' object is not subscriptable"))
    with pytest.raises(LibraryFailed) as caught:
        office._render(fmt, "text", META)
    message = caught.value.for_document("DOC-1 (a.pdf)").message
    assert f"fpdf2 {metadata.version('fpdf2')} failed while writing document DOC-1 (a.pdf) as PDF" in message
    assert "TypeError: 'GraphicsState' object is not subscriptable" in message and "not the template's fault" in message
    assert caught.value.exit_code == ExitCode.ENVIRONMENT


def test_the_library_s_own_refusal_of_the_text_stays_the_template_s_problem() -> None:
    from fpdf.errors import FPDFException

    with pytest.raises(FPDFException):
        office._render(_pdf_raising(FPDFException("Not enough horizontal space")), "text", META)


def test_materialize_names_the_library_and_the_document(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = WorldSpec()
    spec.data["documents"].append({"id": "DOC-P", "path": "Reports/report.pdf", "system": "drive",
                                   "text": "# Report\n\nBody text.\n", "visible_from": "2025-01-01"})
    world = spec.write(tmp_path / "mini")
    broken = _pdf_raising(AttributeError("'NoneType' object has no attribute 'cw'"))
    monkeypatch.setitem(FORMATS, ".pdf", broken)
    with fresh(), pytest.raises(LibraryFailed) as caught:
        materialize(world, "r1", "2025-07-01", "S1", tmp_path / "out")
    assert not isinstance(caught.value, InvalidWorld)
    assert "document DOC-P (Reports/report.pdf)" in caught.value.message and "fpdf2 " in caught.value.message
