"""Recap source: AMI abstractive summaries read as (meeting, section) records (Appendix A.4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit.infoorg.sources.ami import SECTIONS, is_placeholder, meeting_units
from worldkit.infoorg.sources.records import InvalidSource

NITE = "http://nite.sourceforge.net/"


def write_summary(folder: Path, meeting: str, sections: dict[str, list[str]]) -> Path:
    """An NXT abstractive summary in ISO-8859-1, like the AMI files."""
    body, n = [], 0
    for section in ("abstract", "actions", "decisions", "problems"):
        sentences = []
        for text in sections.get(section, []):
            n += 1
            sentences.append(f'<sentence nite:id="{meeting}.ann.s.{n}">{text}</sentence>')
        body.append(f'<{section} nite:id="{meeting}.ann.{section}.1">\n'
                    + "  ".join(sentences) + f"\n</{section}>")
    xml = ('<?xml version="1.0" encoding="ISO-8859-1" standalone="yes"?>\n'
           f'<nite:root xmlns:nite="{NITE}">\n' + "\n".join(body) + "\n</nite:root>\n")
    path = folder / "abstractive" / f"{meeting}.abssumm.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(xml.encode("iso-8859-1"))
    return path


def test_records_are_trimmed_sentences_with_meeting_section_paths(tmp_path: Path) -> None:
    write_summary(tmp_path, "XY1001b", {"abstract": ["  Second meeting.  "], "problems": ["P."]})
    write_summary(tmp_path, "XY1001a", {
        "abstract": ["The team met.", "They talked\n about cost."],
        "actions": ["   "],  # empty after trimming: not a record
        "decisions": ["Price is 25 Euro, caf\u00e9 style."],
    })
    units = meeting_units(tmp_path)
    assert [u.unit_id for u in units] == ["XY1001a", "XY1001b"]
    first = units[0]
    assert first.group == "XY1001a"
    assert [r.path for r in first.records] == [
        ("XY1001a", "abstract"), ("XY1001a", "abstract"), ("XY1001a", "decisions")]
    assert first.records[1].text == "They talked\n about cost."
    assert "caf\u00e9" in first.records[2].text  # ISO-8859-1 decoded by the XML parser
    assert first.records[0].source == "abstractive/XY1001a.abssumm.xml#XY1001a.ann.s.1"
    assert units[1].records[0].text == "Second meeting."


def test_folder_above_abstractive_is_accepted(tmp_path: Path) -> None:
    write_summary(tmp_path / "ami_public_manual_1.6.2", "XY1001a", {"abstract": ["One."]})
    (unit,) = meeting_units(tmp_path)
    assert unit.records[0].source.startswith("ami_public_manual_1.6.2/abstractive/")


def test_missing_or_broken_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InvalidSource, match="no `abstractive/\\*.abssumm.xml` files found"):
        meeting_units(tmp_path)
    broken = tmp_path / "abstractive" / "XY1.abssumm.xml"
    broken.parent.mkdir()
    broken.write_text("<nite:root", encoding="ascii")
    with pytest.raises(InvalidSource, match="XY1.abssumm.xml: not well-formed XML"):
        meeting_units(tmp_path)


def test_shared_ami_data(shared_data: Path) -> None:
    units = meeting_units(shared_data / "ami")
    assert len(units) == 142
    records = [r for u in units for r in u.records]
    # SOURCE.md: 2,649 sentences, none empty after trimming, 47 of them `NA` placeholders
    # (`*NA*` 23, `NA.` 18, `*NA*.` 6), which are not records.
    assert len(records) == 2649 - 47
    assert not any("NA" == r.text.strip("*. ") for r in records)
    assert {r.path[1] for r in records} == set(SECTIONS)
    assert len({r.source for r in records}) == len(records)
    assert all(r.text == r.text.strip() and r.text for r in records)


@pytest.mark.parametrize(
    ("text", "placeholder"),
    [("*NA*", True), ("NA.", True), ("*NA*.", True), ("  ", True), ("", True),
     ("NA", True), ("NAT gateways were discussed.", False), ("The team said NA.", False)],
)
def test_placeholders_are_not_records(text: str, placeholder: bool) -> None:
    assert is_placeholder(text) is placeholder


def test_recap_selection_on_the_shared_data(shared_data: Path) -> None:
    """Issue 18: 50 bundles of 40-60 records and >= 2 meetings, none sharing a record, no
    placeholder; 2,471 records over 136 meetings (the paper: 2,436 over 124)."""
    from worldkit.infoorg.sources import select_tasks

    tasks = select_tasks("recap", shared_data / "ami", 50, seed=0)
    records = [r for t in tasks for r in t.records]
    assert len(tasks) == 50 and len(records) == 2471
    assert len({u.unit_id for t in tasks for u in t.units}) == 136
    assert all(40 <= len(t.records) <= 60 and len(t.units) >= 2 for t in tasks)
    assert len({r.source for r in records}) == len(records)  # bundles laid end to end
    assert not any(is_placeholder(r.text) for r in records)
