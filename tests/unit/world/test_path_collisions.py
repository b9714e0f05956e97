"""A world whose document paths collide on some target is refused at load, naming both paths: a file
where another needs a folder (`a` beside `a/b.md`), names equal after Unicode normalization (NFC vs
NFD) or case folding, and a component a target would change (a trailing dot or space). Each
colliding pair is written by hand."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.errors import InvalidWorld
from worldkit.world import load_world

CAFE_NFC = unicodedata.normalize("NFC", "Café.md")
CAFE_NFD = unicodedata.normalize("NFD", "Café.md")


def _doc(doc_id: str, path: str) -> dict:
    return {"id": doc_id, "path": path, "system": "drive", "text": f"{doc_id}\n", "visible_from": "2025-01-01"}


@pytest.mark.parametrize(("first", "second", "words"), [
    ("SOPs/SOP-001.md/annex.md", None, "is a file, but"),               # beside D-SOP's SOPs/SOP-001.md
    ("Notes", None, "is a file, but"),                                   # a file where Notes/ is a folder
    (f"SOPs/{CAFE_NFC}", f"SOPs/{CAFE_NFD}", "Unicode normalization"),
    ("SOPs/Report.md", "SOPs/report.md", "without case"),
    ("sops/other.md", "SOPs/Other.md", "without case"),
])  # fmt: skip
def test_colliding_paths_are_refused_with_both_named(tmp_path: Path, first: str, second: str | None, words: str) -> None:
    spec = WorldSpec()
    spec.data["documents"].append(_doc("D-X1", first))
    if second is not None:
        spec.data["documents"].append(_doc("D-X2", second))
    with pytest.raises(InvalidWorld) as caught:
        load_world(spec.write(tmp_path / "w"))
    message = caught.value.message
    assert words in message and "field path" in message
    named = [p for p in (first, second) if p is not None]
    assert all(p in message for p in named)
    assert message.count("Shared/") >= 2  # both colliding paths are named


@pytest.mark.parametrize("path", ["Notes/name. ", "Notes/name.", "Notes/name ", "Notes /x.md", "Notes/ lead.md"])
def test_a_component_a_target_would_change_is_refused(tmp_path: Path, path: str) -> None:
    spec = WorldSpec()
    spec.data["documents"].append(_doc("D-X1", path))
    with pytest.raises(InvalidWorld) as caught:
        load_world(spec.write(tmp_path / "w"))
    assert "ends with a dot or a space" in caught.value.message and "D-X1" in caught.value.message


def test_distinct_paths_still_load(tmp_path: Path) -> None:
    """Prefixes that are not whole components, and one spelling of a non-ASCII name, do not collide."""
    spec = WorldSpec()
    spec.data["documents"] += [_doc("D-X1", "SOPs/a.md"), _doc("D-X2", "SOPs/ab.md"), _doc("D-X3", "SOPs/a/b.md"),
                               _doc("D-X4", f"SOPs/{CAFE_NFC}")]  # fmt: skip
    assert load_world(spec.write(tmp_path / "w")).revision("r1").documents["D-X4"].path == f"SOPs/{CAFE_NFC}"
