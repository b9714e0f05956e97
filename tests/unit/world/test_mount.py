"""`mount` (issue 17): the schema and the code agree. Omitted, a drive mounts at its system id (the
documented default); given empty, or on a system that holds no files, it is an error naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.errors import InvalidWorld
from worldkit.materialize.project import plan_projection
from worldkit.world import load_world
from worldkit.world.models import System


def _systems(spec: WorldSpec) -> list[dict]:
    return spec.world["company"]["systems"]


def test_an_omitted_mount_mounts_the_drive_at_its_id(tmp_path: Path) -> None:
    spec = WorldSpec()
    drive = next(s for s in _systems(spec) if s["id"] == "drive")
    del drive["mount"]
    state = load_world(spec.write(tmp_path / "w")).revision("r1")
    assert state.systems["drive"].folder == "drive"
    seat = next(iter(state.seats))
    projection = plan_projection(state, state.documents[next(iter(state.documents))].visible_from, seat)
    paths = [f.path for f in projection.files() if f.surface == "files"]
    assert paths and any(p.startswith("files/drive/") for p in paths)
    assert not any(p.startswith("files/Shared/") for p in paths)


def test_an_empty_mount_is_refused_naming_the_system_and_the_fix(tmp_path: Path) -> None:
    spec = WorldSpec()
    next(s for s in _systems(spec) if s["id"] == "drive")["mount"] = ""
    with pytest.raises(InvalidWorld) as caught:
        load_world(spec.write(tmp_path / "w"))
    message = caught.value.message
    assert "world.yaml" in message and "entity drive" in message and "company.systems.0" in message
    assert "`mount` is empty; omit the field to mount the system at files/drive/" in message
    assert "Value error" not in message and "(got {" not in message


@pytest.mark.parametrize(
    ("system", "match"),
    [
        ({"id": "mail", "name": "Mail", "kind": "mail", "mount": "Mail"}, "applies only to drive and personal"),
        ({"id": "d2", "name": "D2", "kind": "drive", "mount": "a/b"}, "one folder name"),
        ({"id": "d2", "name": "D2", "kind": "drive", "mount": ".."}, "one folder name"),
        ({"id": "d2", "name": "D2", "kind": "drive", "mount": " D2"}, "one folder name"),
    ],
)
def test_a_mount_that_cannot_be_a_folder_is_refused(system: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        System.model_validate(system)


def test_the_schema_documents_the_default() -> None:
    schema = System.model_json_schema()["properties"]["mount"]
    assert schema["default"] == "" and "Omit it to use the system id" in schema["description"]
