"""`worldkit schema`: the committed schemas/ are current, generator banks have a schema, stamping is safe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from worldkit._cli.main import run
from worldkit._cli.schema import (
    YAML_SCHEMA_PREFIX,
    all_schemas,
    stamp_yaml,
    yaml_schema_line,
    yaml_schema_name,
)
from worldkit.canon import pretty_json

REPO = Path(__file__).resolve().parents[2]
BANKS = REPO / "worlds" / "pharmaco_demo" / "gen" / "banks"


class _DatesAsText(yaml.SafeLoader):
    """YAML as an editor's language server sees it against a JSON Schema: dates stay strings."""


_DatesAsText.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_as_editor(path: Path) -> object:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_DatesAsText)  # noqa: S506 - a SafeLoader subclass


def validator(name: str) -> jsonschema.Validator:
    schema = json.loads((REPO / "schemas" / name).read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def test_the_committed_schemas_are_what_worldkit_schema_writes() -> None:
    fresh = all_schemas()
    committed = {p.name: p.read_text(encoding="utf-8") for p in (REPO / "schemas").glob("*.schema.json")}
    assert sorted(committed) == sorted(fresh), "run `worldkit schema --out schemas` and commit schemas/"
    for name, schema in fresh.items():
        assert committed[name] == pretty_json(schema), f"schemas/{name} is stale: run `worldkit schema --out schemas`"


def test_every_generator_bank_fits_the_bank_schema_and_wrong_banks_do_not() -> None:
    check = validator("generator-bank.schema.json")
    banks = sorted(BANKS.glob("*.yaml"))
    assert len(banks) >= 10
    for bank in banks:
        assert not list(check.iter_errors(load_as_editor(bank))), bank
    sops = load_as_editor(BANKS / "sops_qa.yaml")
    topic = dict(sops["sops"][0])  # type: ignore[index]
    del topic["sections"]
    for wrong in ({"sops": [topic]}, {"sops": []}, {"points": {"hplc": []}}, {"vendors": None}, {"Bad Name": "x"}, {},
                  {"sops": [{**sops["sops"][0], "number": "QA-1"}]}):  # type: ignore[index]
        assert list(check.iter_errors(wrong)), wrong


def test_stamping_sets_only_the_first_line_and_is_idempotent(tmp_path: Path) -> None:
    world = tmp_path / "worlds" / "infoorg"
    shutil.copytree(REPO / "worlds" / "infoorg", world)
    schemas = tmp_path / "schemas"
    people = world / "data" / "org" / "people.yaml"
    body = people.read_text(encoding="utf-8").partition("\n")[2] if people.read_text().startswith(YAML_SCHEMA_PREFIX) \
        else people.read_text(encoding="utf-8")
    people.write_text("# yaml-language-server: $schema=old/place.json\n" + body, encoding="utf-8")
    before = yaml.safe_load(people.read_text(encoding="utf-8"))
    assert run(["schema", "--out", str(schemas), "--stamp", str(tmp_path / "worlds")]) == 0
    lines = people.read_text(encoding="utf-8").splitlines()
    assert lines[0] == f"{YAML_SCHEMA_PREFIX}../../../../schemas/world-data.schema.json"
    assert (people.parent / lines[0].removeprefix(YAML_SCHEMA_PREFIX)).resolve() == schemas / "world-data.schema.json"
    assert "\n".join(lines[1:]) + "\n" == body and yaml.safe_load(people.read_text(encoding="utf-8")) == before
    assert not stamp_yaml(people, schemas)  # already current
    assert (world / "world.yaml").read_text(encoding="utf-8").startswith(f"{YAML_SCHEMA_PREFIX}../../schemas/world.schema.json\n")


def test_schema_names_follow_where_a_file_sits() -> None:
    assert yaml_schema_name(Path("worlds/w/world.yaml")) == "world.schema.json"
    assert yaml_schema_name(Path("worlds/w/data/org/people.yaml")) == "world-data.schema.json"
    assert yaml_schema_name(Path("worlds/w/gen/banks/sops.yaml")) == "generator-bank.schema.json"
    assert yaml_schema_name(Path("overlays/w/task/overlay.yaml")) == "overlay.schema.json"
    assert yaml_schema_name(Path("overlays/w/task.yaml")) == "overlay.schema.json"
    for unknown in ("worlds/w/notes.yaml", "worlds/w/gen/core.py", "design.yaml", "overlays/readme.yaml"):
        assert yaml_schema_name(Path(unknown)) is None, unknown
    assert yaml_schema_line(Path("design.yaml"), Path("schemas")) is None


def test_stamp_refuses_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema", "--out", str(tmp_path / "s"), "--stamp", str(tmp_path / "nope")]) == 2
    assert "--stamp" in capsys.readouterr().err


def _shipped_yaml() -> list[Path]:
    return sorted(p for top in ("worlds", "overlays") for p in (REPO / top).rglob("*.y*ml"))


def test_every_shipped_yaml_names_its_schema_on_its_first_line_and_fits_it() -> None:
    shipped = _shipped_yaml()
    assert len(shipped) > 40
    problems = []
    for path in shipped:
        where = path.relative_to(REPO)
        expected = yaml_schema_line(path, REPO / "schemas")
        if expected is None:
            problems.append(f"{where}: no schema for a YAML file here (see worldkit._cli.schema.yaml_schema_name)")
            continue
        first = path.read_text(encoding="utf-8").partition("\n")[0]
        if first != expected:
            problems.append(f"{where}: first line is {first!r}, not {expected!r} "
                            "(run `worldkit schema --out schemas --stamp worlds --stamp overlays`)")
            continue
        target = (path.parent / first.removeprefix(YAML_SCHEMA_PREFIX)).resolve()
        assert target.is_file(), f"{where}: {target} does not exist"
        errors = list(validator(target.name).iter_errors(load_as_editor(path)))
        problems += [f"{where}: {'/'.join(map(str, e.absolute_path))}: {e.message[:160]}" for e in errors[:3]]
    assert not problems, "\n".join(problems)
