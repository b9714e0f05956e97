"""Office formats: deterministic bytes, dated by the document, read back as text by the seat's tools."""

from __future__ import annotations

import datetime as dt
import io
import os
import socket
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.materialize import materialize
from worldkit.materialize.manifest import disk_stamps
from worldkit.mcp.seat import SeatView, default_tool_config
from worldkit.overlay.view import readable_text
from worldkit.render.office import FORMATS, Meta, extract_text, render_office

MARKDOWN = """# SOP-QC-014 Stability programme

| Field | Value |
|---|---|
| Effective | 12 Mar 2025 |
| Owner | QC Stability |

## 1 Purpose

This procedure describes **how** chambers are monitored at 25 °C ± 2 °C — every shift.

- first item
- second item

1. step one
2. step two
"""
CSV = 'lot,condition,assay\nZV-23004,"25 °C/60% RH",99.2\nZV-23005,5 °C,0.50\n'
MAIL = "From: Ann Analyst <ann@mini.example>\nTo: Lee Lead <lee@mini.example>\nSubject: Chamber SC-04 — alarm\n\nHi Lee,\n\nSC-04 read 27.1 °C for 40 min.\n"
SOURCES = {".docx": MARKDOWN, ".pdf": MARKDOWN, ".xlsx": CSV, ".eml": MAIL}
META = Meta(title="SOP-QC-014 Stability programme", date=dt.date(2025, 3, 12), author="Ann Analyst")

_BYTES = """
import datetime as dt, hashlib, sys
sys.path.insert(0, %r)
from tests.unit.materialize.test_office_formats import META, SOURCES
from worldkit.render.office import render_office
print(" ".join(hashlib.sha256(render_office("x" + ext, text, META)).hexdigest() for ext, text in sorted(SOURCES.items())))
"""


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_every_format_is_registered_and_a_text_file_is_not_one() -> None:
    assert set(FORMATS) == set(SOURCES)
    assert render_office("notes.md", MARKDOWN, META) is None and extract_text("notes.md", b"x") is None


@pytest.mark.parametrize("ext", sorted(SOURCES))
def test_the_extracted_text_says_what_the_template_wrote(ext: str) -> None:
    data = render_office("x" + ext, SOURCES[ext], META)
    assert data is not None and data[:4] in (b"PK\x03\x04", b"%PDF", b"From")
    text = _flat(extract_text("x" + ext, data) or "")
    if ext in (".docx", ".pdf"):
        for line in ("SOP-QC-014 Stability programme", "| Effective | 12 Mar 2025 |", "first item", "step two",
                     "chambers are monitored at 25 °C ± 2 °C — every shift."):
            assert line in text.replace("**", ""), (ext, line, text)
    elif ext == ".xlsx":
        assert "ZV-23004,25 °C/60% RH,99.2" in text and "ZV-23005,5 °C,0.50" in text
    else:
        assert "Subject: Chamber SC-04 — alarm" in text and "SC-04 read 27.1 °C for 40 min." in text
    assert socket.gethostname().encode() not in data


def test_bytes_are_identical_across_processes_and_dated_by_the_document() -> None:
    repo = str(Path(__file__).resolve().parents[3])
    digests = {
        subprocess.run([sys.executable, "-c", _BYTES % repo], check=True, capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1
    docx = render_office("x.docx", MARKDOWN, META)
    assert docx is not None
    with zipfile.ZipFile(io.BytesIO(docx)) as package:
        assert {i.date_time for i in package.infolist()} == {(2025, 3, 12, 12, 0, 0)}
        core = package.read("docProps/core.xml").decode()
    assert core.count("2025-03-12T12:00:00Z") == 3  # created, modified, last printed
    pdf = render_office("x.pdf", MARKDOWN, META)
    assert pdf is not None and b"D:20250312120000" in pdf
    later = render_office("x.pdf", MARKDOWN, Meta(META.title, dt.date(2025, 3, 13), META.author))
    assert later != pdf  # the date is in the file, not the clock


def test_a_projection_serves_office_files_as_their_text(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.data["documents"] += [
        {"id": "D-DOCX", "path": "SOPs/SOP-002.docx", "system": "drive", "text": MARKDOWN, "visible_from": "2025-01-05"},
        {"id": "D-PDF", "path": "Reports/report.pdf", "system": "drive", "text": MARKDOWN, "visible_from": "2025-01-06"},
        {"id": "D-XLSX", "path": "Data/results.xlsx", "system": "drive", "text": CSV, "visible_from": "2025-01-07"},
        {"id": "D-EML", "path": "Mail/alarm.eml", "system": "drive", "text": MAIL, "visible_from": "2025-01-08"},
    ]
    world = spec.write(tmp_path / "world")
    out = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "p").out
    again = materialize(world, "r1", "2025-07-01", "S1", tmp_path / "q").out
    paths = ["files/Shared/SOPs/SOP-002.docx", "files/Shared/Reports/report.pdf", "files/Shared/Data/results.xlsx",
             "files/Shared/Mail/alarm.eml"]
    for path in paths:
        assert (out / path).read_bytes() == (again / path).read_bytes()
    assert [disk_stamps(out, paths)[p][:10] for p in paths] == ["2025-01-05", "2025-01-06", "2025-01-07", "2025-01-08"]
    view = SeatView(out, default_tool_config(out))
    names = {e.path for e in view.list_files(limit=100).entries}
    assert {"Shared/SOPs/SOP-002.docx", "Shared/Data/results.xlsx", "Shared/Mail/alarm.eml"} <= names
    first = view.read_file("Shared/SOPs/SOP-002.docx", length=40)
    rest = view.read_file("Shared/SOPs/SOP-002.docx", offset=first.next_offset or 0)
    assert (first.text + rest.text) == view.read_file("Shared/SOPs/SOP-002.docx").text
    assert first.text.startswith("# SOP-QC-014") and first.sha256 == view.read_file("Shared/SOPs/SOP-002.docx").sha256
    assert view.read_file("Shared/SOPs/SOP-002.docx", length=40) == first  # same offsets every time
    hits = {m.path for m in view.search_files("27.1 °C").matches}
    assert hits == {"Shared/Mail/alarm.eml"}
    assert {m.path for m in view.search_files("every shift").matches} >= {"Shared/SOPs/SOP-002.docx", "Shared/Reports/report.pdf"}
    data = (out / "files/Shared/Data/results.xlsx").read_bytes()
    assert "ZV-23005,5 °C,0.50" in readable_text("files/Shared/Data/results.xlsx", data)


def test_a_docx_reads_each_paragraph_in_its_own_style() -> None:
    """`docx.extract` looks each style id up once a document (`names`): every block kind still reads as
    written, a paragraph in an explicit Normal style and one whose style id the document does not
    define read as plain text (python-docx gives the default style for both)."""
    import docx

    from worldkit.render.office.docx import extract

    text = MARKDOWN + "\n### Level three\n\n> quoted **bold** line\n\nplain after\n\n1. again one\n"
    data = render_office("a.docx", text, META)
    document = docx.Document(io.BytesIO(data))
    document.add_paragraph("explicit normal", style="Normal")
    document.add_paragraph("unknown style id")._p.style = "NoSuchStyle"
    document.add_paragraph("a late heading", style="Heading 2")
    buffer = io.BytesIO()
    document.save(buffer)
    read = extract(buffer.getvalue())
    assert read == extract(data)[:-1] + "\n\nexplicit normal\n\nunknown style id\n\n## a late heading\n"
    for line in ("## 1 Purpose", "- first item", "1. step one\n\n2. step two", "### Level three",
                 "> quoted **bold** line", "plain after", "1. again one"):
        assert line in read
