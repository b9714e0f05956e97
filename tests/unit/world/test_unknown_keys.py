"""An unknown key in world, overlay or campaign YAML is named as unknown, with the key it most likely meant."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit.campaign.design import load_design
from worldkit.errors import InvalidWorld, WorldkitError
from worldkit.overlay.load import load_overlay
from worldkit.world.load import load_world

REPO = Path(__file__).resolve().parents[3]


def test_a_misspelt_world_key_is_unknown_not_a_missing_one(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.world["revisons"] = spec.world.pop("revisions")
    with pytest.raises(InvalidWorld) as caught:
        load_world(spec.write(tmp_path / "mini"))
    assert "unknown key `revisons`; did you mean `revisions`?" in caught.value.message
    assert "missing" not in caught.value.message


def test_a_misspelt_key_inside_an_entity_names_the_entity_and_the_key(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.item("people", "P1")["titel"] = spec.item("people", "P1").pop("title")
    with pytest.raises(InvalidWorld) as caught:
        load_world(spec.write(tmp_path / "mini"))
    assert "entity P1" in caught.value.message and "unknown key `titel`; did you mean `title`?" in caught.value.message


def test_a_key_like_nothing_lists_the_known_keys(tmp_path: Path) -> None:
    spec = WorldSpec()
    spec.world["zzzz"] = 1
    with pytest.raises(InvalidWorld, match=r"unknown key `zzzz`; known keys: .*revisions"):
        load_world(spec.write(tmp_path / "mini"))


def test_overlay_yaml(tmp_path: Path) -> None:
    shutil.copytree(REPO / "overlays" / "pharmaco_demo" / "qualification-sweep", tmp_path / "qs")
    path = tmp_path / "qs" / "overlay.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("\ndeliverable:", "\ndeliverables:", 1), encoding="utf-8")
    with pytest.raises(WorldkitError) as caught:
        load_overlay(path)
    assert "unknown key `deliverables`; did you mean `deliverable`?" in caught.value.message


def test_campaign_yaml(tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text("tasks: [qualification-sweep]\nagent: [oracle]\nconditions: {full: 1}\nseed: 1\n", encoding="utf-8")
    with pytest.raises(WorldkitError) as caught:
        load_design(design)
    assert "unknown key `agent`; did you mean `agents`?" in caught.value.message
