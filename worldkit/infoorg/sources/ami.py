"""Recap family source: AMI abstractive meeting summaries (`abstractive/*.abssumm.xml`).

Appendix A.4: each summary file supplies a meeting, its sections (abstract, actions, decisions,
problems) and their sentences; a record is one sentence with outer whitespace removed, and its
reference path is (meeting, section). Files are ISO-8859-1 NITE XML: the XML parser honours the
declaration; bytes are never decoded by hand. Empty sentences and the annotators' placeholders
for "nothing to report" (`*NA*`, `NA.`, `*NA*.`: 47 in the corpus) are not records: A.4 rejects
empty records, and a placeholder carries no content that could place it. A section left empty
is simply absent from the reference.

Reads files only; never writes, never selects tasks.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from worldkit.infoorg.sources.records import InvalidSource, SourceRecord, SourceUnit

SECTIONS: tuple[str, ...] = ("abstract", "actions", "decisions", "problems")
"""The summary sections, in file order."""

_NITE_ID = "{http://nite.sourceforge.net/}id"
_PLACEHOLDER = re.compile(r"^[\W_]*NA[\W_]*$")


def is_placeholder(text: str) -> bool:
    """True for an empty sentence or an `NA` placeholder (`*NA*`, `NA.`, `*NA*.`, ...)."""
    return not text.strip() or bool(_PLACEHOLDER.match(text.strip()))


def _abstractive_dir(source: Path) -> Path:
    candidates = [source / "abstractive", *sorted(source.glob("*/abstractive"))]
    for candidate in candidates:
        if candidate.is_dir() and any(candidate.glob("*.abssumm.xml")):
            return candidate
    raise InvalidSource(
        f"{source}: no `abstractive/*.abssumm.xml` files found; pass --source the AMI manual "
        "annotations folder (`ami_public_manual_1.6.2`) or the folder that contains it"
    )


def read_meeting(path: Path, locator_root: Path) -> SourceUnit:
    """The records of one summary file, in section order then sentence order."""
    meeting = path.name.split(".", 1)[0]
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        raise InvalidSource(f"{path}: not well-formed XML ({error}); re-copy the file") from error
    locator = path.relative_to(locator_root).as_posix()
    records: list[SourceRecord] = []
    seen: set[str] = set()
    for section in SECTIONS:
        for element in root.findall(section):
            for sentence in element.iter("sentence"):
                sentence_id = sentence.get(_NITE_ID) or ""
                text = (sentence.text or "").strip()
                if is_placeholder(text):
                    continue
                if not sentence_id or sentence_id in seen:
                    raise InvalidSource(
                        f"{path}: sentence without a unique nite:id ({sentence_id!r}); "
                        "the file is not an AMI abstractive summary"
                    )
                seen.add(sentence_id)
                records.append(
                    SourceRecord(text=text, path=(meeting, section), source=f"{locator}#{sentence_id}")
                )
    return SourceUnit(unit_id=meeting, group=meeting, records=tuple(records))


def meeting_units(source: Path) -> list[SourceUnit]:
    """One unit per summary file, sorted by meeting id (the fixed candidate order's basis)."""
    folder = _abstractive_dir(source)
    files = sorted(folder.glob("*.abssumm.xml"), key=lambda p: p.name)
    return [read_meeting(path, source) for path in files]


__all__ = ["SECTIONS", "is_placeholder", "meeting_units", "read_meeting"]
