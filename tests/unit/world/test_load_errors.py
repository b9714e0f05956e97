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
        (lambda s: s.item("documents", "D-SOP").update(colour="red"), "D-SOP", "colour", "unknown key `colour`"),
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


_GENERATOR = """import sys

def generate(world, rng):
    docs = [{'id': 'D-GEN-%d' % i, 'path': 'Gen/gen-%d.md' % i, 'system': 'drive', 'text': 'note %d\\n' % i,
             'visible_from': '2025-01-01'} for i in range(3)]
    docs[2].update(BAD)
    sys.modules['worldkit.world.load']._test_generated = docs  # what the test inspects after the load
    return {'documents': docs}
"""


@pytest.mark.parametrize(("bad", "field"), [({}, None), ({"visible_from": "someday"}, "visible_from"), ({"shade": 1}, "shade")])
def test_generated_entities_are_let_go_as_validated_and_a_bad_one_is_still_named(tmp_path: Path, bad, field) -> None:
    import worldkit.world.load as load_module

    spec = WorldSpec()
    spec.world["generator"] = {"module": "generator.py", "seed": 1}
    root = spec.write(tmp_path / "w")
    (root / "generator.py").write_text(_GENERATOR.replace("BAD", repr(bad)))
    try:
        if field is None:
            package = load_world(root)
            assert {"D-GEN-0", "D-GEN-1", "D-GEN-2"} <= set(package.base["documents"])
            # The raw copies are not held until the last entity is validated (100k documents: 170 MB).
            assert load_module._test_generated == [None, None, None]
        else:
            with pytest.raises(InvalidWorld) as caught:
                load_world(root)
            message = caught.value.message
            assert "entity D-GEN-2" in message and field in message and "generator.py" in message
            assert load_module._test_generated[:2] == [None, None] and load_module._test_generated[2]["id"] == "D-GEN-2"
    finally:
        load_module.__dict__.pop("_test_generated", None)
