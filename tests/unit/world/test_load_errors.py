"""A broken world file gets an error naming the file, the entity, the field and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.errors import InvalidWorld
from worldkit.world import load_world


def _load(spec: WorldSpec, tmp_path: Path):
    return load_world(spec.write(tmp_path / "w"))


def test_good_world_loads(tmp_path: Path) -> None:
    package = _load(WorldSpec(), tmp_path)
    assert package.revision_names == ["r1", "r2"]
    assert package.revision("r1").digest != package.revision("r2").digest


@pytest.mark.parametrize(
    ("mutate", "entity", "field", "words"),
    [
        (lambda s: s.item("seats", "S1").update(person="P-GHOST"), "S1", "person", "unknown person 'P-GHOST'"),
        (lambda s: s.item("people", "P1").update(manager="P-NOBODY"), "P1", "manager", "unknown person"),
        (lambda s: s.item("people", "P3").update(manager="P1"), None, "manager", "cycle"),
        (lambda s: s.item("documents", "D-NOTE").update(template="missing.j2"), "D-NOTE", "template", "not found"),
        (lambda s: s.data["groups"][0].update(members=["P-X"]), "list-all", "members", "unknown person"),
        (lambda s: s.item("records", "CC-1")["events"][1].update(date="2025-01-01"), "CC-1", "events.1.date", "before the record exists"),
        (lambda s: s.data["documents"].append(dict(s.item("documents", "D-SOP"))), "D-SOP", "id", "duplicate id"),
        (lambda s: s.data["documents"].append({**s.item("documents", "D-SOP"), "id": "D-SOP2"}), "D-SOP2", "path", "also used"),
        (lambda s: s.item("documents", "D-SOP").update(path="../escape.md"), "D-SOP", "path", "`..`"),
        (lambda s: s.item("documents", "D-SOP").update(colour="red"), "D-SOP", "colour", "unknown field"),
        (lambda s: s.item("documents", "D-SOP").update(visible_from="yesterday"), "D-SOP", "visible_from", "fix the value"),
        (lambda s: s.world["revisions"][1].update(parent="r0"), "r2", "parent", "parent revision 'r0' is missing"),
    ],
)
def test_broken_world_names_file_entity_field(tmp_path: Path, mutate, entity, field, words) -> None:
    spec = WorldSpec()
    mutate(spec)
    with pytest.raises(InvalidWorld) as caught:
        _load(spec, tmp_path)
    message = caught.value.message
    assert words in message
    assert "file " in message and (tmp_path.name in message)
    if entity:
        assert f"entity {entity}" in message
    assert f"field {field}" in message or field in message


def test_bad_yaml_names_line(tmp_path: Path) -> None:
    root = WorldSpec().write(tmp_path / "w")
    (root / "data" / "broken.yaml").write_text("people: [\n  - {id: X\n", encoding="utf-8")
    with pytest.raises(InvalidWorld, match=r"broken\.yaml.*not valid YAML at line"):
        load_world(root)


def test_unknown_world_lists_choices(tmp_path: Path) -> None:
    from worldkit.errors import UsageError

    with pytest.raises(UsageError, match="Available worlds: .*pharmaco_demo"):
        load_world("no-such-world")


def test_streamed_digest_equals_canonical_json_digest(tmp_path: Path) -> None:
    from worldkit.canon import sha256_json

    state = _load(WorldSpec(), tmp_path).revision("r2")
    assert state.digest == sha256_json(state.canonical())
