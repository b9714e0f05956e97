"""Per-document readers (`readable_by`) beside the permission rules: granted, denied, named, schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run
from worldkit.access import Policy
from worldkit.errors import InvalidWorld
from worldkit.materialize import materialize
from worldkit.verify import verify_world
from worldkit.world import load_world

HR_NOTE = {"id": "D-HRNOTE", "path": "Notes/hr note.md", "system": "hr", "text": "for HR and Ann\n",
           "classification": "internal", "visible_from": "2025-01-01", "department": "HR"}  # fmt: skip


def _world(tmp_path: Path, readers: dict | None) -> Path:
    spec = WorldSpec()
    spec.data["documents"].append({**HR_NOTE, **({"readable_by": readers} if readers is not None else {})})
    return spec.write(tmp_path / "worlds" / "mini")


def test_readers_are_granted_and_the_decision_names_them(tmp_path: Path) -> None:
    state = load_world(_world(tmp_path, {"roles": ["lead"], "people": ["P1"]})).revision("r1")
    policy, doc = Policy(state), state.documents["D-HRNOTE"]
    assert policy.document("P1", doc).reason == "readable_by:person:P1"
    assert policy.document("P3", doc).reason == "readable_by:role:lead"
    assert policy.document("P4", doc).reason == "rule:R-HR"  # a rule that grants is named first
    assert policy.document("P2", doc) is None  # neither a rule nor a reader: denied


def test_readers_reach_the_projection_and_verify_passes(tmp_path: Path) -> None:
    world = _world(tmp_path, {"people": ["P1"]})
    seen = {s: {e.path for e in materialize(world, "r1", "2025-07-01", s, tmp_path / s).manifest.files}
            for s in ("S1", "S2")}  # fmt: skip
    assert "files/HR/Notes/hr note.md" in seen["S1"] and "files/HR/Notes/hr note.md" not in seen["S2"]
    assert run(["freeze", "--world", str(world), "--date", "2025-07-01"]) == 0
    report = verify_world(world, only=["projection-rebuild", "access-audit"], jobs=1)
    assert [c.status for c in report.checks] == ["pass", "pass"]


def test_an_unset_readable_by_leaves_the_digest_as_before(tmp_path: Path) -> None:
    without = load_world(WorldSpec().write(tmp_path / "a" / "mini")).revision("r1")
    assert "readable_by" not in json.dumps(without.canonical())
    named = load_world(_world(tmp_path / "b", {"people": ["P1"]})).revision("r1")
    other = load_world(_world(tmp_path / "c", {"people": ["P2"]})).revision("r1")
    assert named.digest != other.digest  # who reads a document is part of the world's digest


def test_unknown_reader_is_an_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(InvalidWorld, match=r"D-HRNOTE.*readable_by\.roles.*unknown role 'nobody'"):
        load_world(_world(tmp_path, {"roles": ["nobody"]}))


def test_schema_shows_readable_by(tmp_path: Path) -> None:
    assert run(["schema", "--out", str(tmp_path / "schemas")]) == 0
    schema = json.loads((tmp_path / "schemas" / "world-data.schema.json").read_text())
    assert "readable_by" in schema["$defs"]["Document"]["properties"]
    assert set(schema["$defs"]["Readers"]["properties"]) == {"roles", "people"}
