"""A mutated copy's load that takes its base entities from the untouched package equals a load from source."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.builders import WorldSpec
from worldkit.errors import InvalidWorld
from worldkit.verify.inject import edit_changeset
from worldkit.verify.mutations import load_mutated
from worldkit.verify.reuse import WorldSources
from worldkit.world.load import _load_package
from worldkit.world.models import WorldFile

GENERATOR = '''
from pathlib import Path

HERE = Path(__file__).resolve().parent


def generate(world, rng):
    words = (HERE / "gen" / "words.txt").read_text(encoding="utf-8").split()
    return {"documents": [
        {"id": f"D-GEN-{n}", "path": f"Gen/{word}.md", "system": "drive", "visible_from": "2025-01-01",
         "text": f"{word} {rng.randrange(1000)} {world.company.name}\\n"}
        for n, word in enumerate(words)
    ]}
'''


def _world(root: Path) -> Path:
    world = WorldSpec().write(root / "worlds" / "mini")
    body = yaml.safe_load((world / "world.yaml").read_text(encoding="utf-8"))
    body["generator"] = {"module": "generator.py", "seed": 7}
    (world / "world.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    (world / "generator.py").write_text(GENERATOR, encoding="utf-8")
    (world / "gen").mkdir()
    (world / "gen" / "words.txt").write_text("alpha beta gamma\n", encoding="utf-8")
    (world / "README.md").write_text("not read by anything\n", encoding="utf-8")
    return world


@pytest.fixture()
def sources(tmp_path: Path) -> WorldSources:
    world = _world(tmp_path / "base")
    return WorldSources.of(_load_package(world))


def _copy(sources: WorldSources, root: Path) -> Path:
    target = root / "worlds" / "mini"
    shutil.copytree(sources.package.root, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_generator_inputs_are_the_files_and_fields_it_read(sources: WorldSources) -> None:
    assert sources.generator_files is not None and sources.generator_fields is not None
    assert {"generator.py", "gen/words.txt"} <= sources.generator_files
    assert not {"README.md", "templates/note.md.j2"} & sources.generator_files
    assert "company" in sources.generator_fields and "revisions" not in sources.generator_fields


def _edit(world: Path, rel: str, text: str) -> None:
    (world / rel).write_text((world / rel).read_text(encoding="utf-8") + text, encoding="utf-8")


@pytest.mark.parametrize("edit", ["template", "readme", "changeset", "company", "data", "generator-input", "generator"])
def test_a_mutated_load_equals_a_load_from_source(sources: WorldSources, tmp_path: Path, edit: str) -> None:
    world = _copy(sources, tmp_path / "copy")
    if edit == "template":
        _edit(world, "templates/note.md.j2", "\nAmended.\n")
    elif edit == "readme":
        _edit(world, "README.md", "more\n")
    elif edit == "changeset":
        edit_changeset(world, "r1", update={"documents": [{"id": "D-DESK", "set": {"text": "changed\n"}}]})
    elif edit == "company":  # a world-file field the generator reads
        body = yaml.safe_load((world / "world.yaml").read_text(encoding="utf-8"))
        body["company"]["name"] = "Another Co"
        (world / "world.yaml").write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    elif edit == "data":
        _edit(world, "data/all.yaml", "\n")
    elif edit == "generator-input":
        _edit(world, "gen/words.txt", "delta\n")
    else:
        _edit(world, "generator.py", "\nEXTRA = 1\n")
    hook = sources.entities(world)
    spec = WorldFile.model_validate(yaml.safe_load((world / "world.yaml").read_text(encoding="utf-8")))
    assert (hook is not None and hook(spec) is not None) == (edit in ("template", "readme", "changeset"))
    fast, full = load_mutated(world, sources), _load_package(world)
    assert fast == full
    assert [fast.revision(r).digest for r in fast.revision_names] == [full.revision(r).digest for r in full.revision_names]
    if edit in ("company", "generator-input"):  # the generator's output changed: a stale reuse would show here
        assert fast.base["documents"] != sources.package.base["documents"]


def test_a_copy_that_does_not_load_fails_as_a_load_from_source(sources: WorldSources, tmp_path: Path) -> None:
    world = _copy(sources, tmp_path / "copy")
    (world / "templates" / "note.md.j2").write_bytes(b"\xff\xfe not utf-8")
    assert sources.entities(world) is not None
    with pytest.raises(InvalidWorld) as full:
        _load_package(world)
    with pytest.raises(InvalidWorld) as fast:
        load_mutated(world, sources)
    assert fast.value.message == full.value.message
