"""YAML loading refuses what it used to drop silently (issue 11): duplicate keys, impossible dates,
one data file under two suffixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run as cli
from worldkit.errors import InvalidOverlay, InvalidWorld
from worldkit.world import load_world


def test_a_duplicate_collection_key_is_refused_naming_file_and_key(tmp_path: Path) -> None:
    root = WorldSpec().write(tmp_path / "w")
    extra = "documents:\n  - {id: D-A}\npeople: []\ndocuments:\n  - {id: D-B}\n"
    (root / "data" / "dup.yaml").write_text(extra, encoding="utf-8")
    with pytest.raises(InvalidWorld) as caught:
        load_world(root)
    message = caught.value.message
    assert "dup.yaml" in message and "duplicate key 'documents'" in message
    assert "at line 4" in message and "first at line 1" in message


def test_a_duplicate_field_inside_an_entity_is_refused(tmp_path: Path) -> None:
    root = WorldSpec().write(tmp_path / "w")
    (root / "world.yaml").write_text((root / "world.yaml").read_text() + "id: other\n", encoding="utf-8")
    with pytest.raises(InvalidWorld, match=r"world\.yaml.*duplicate key 'id'"):
        load_world(root)


def test_merge_keys_still_work(tmp_path: Path) -> None:
    import yaml

    from worldkit.world.yamlsafe import StrictLoader

    assert yaml.load("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\n", Loader=StrictLoader)["b"] == {"k": 3, "j": 2}


def test_an_impossible_date_is_a_clear_error_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = WorldSpec()
    spec.item("documents", "D-SOP")["visible_from"] = "DATE"
    root = spec.write(tmp_path / "w")
    text = (root / "data" / "all.yaml").read_text().replace("visible_from: DATE", "visible_from: 2025-02-30")
    (root / "data" / "all.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidWorld, match=r"impossible date or time '2025-02-30'"):
        load_world(root)
    assert cli(["world", "show", str(root)]) == 3
    err = capsys.readouterr().err
    assert "2025-02-30" in err and "Traceback" not in err


def test_a_yml_file_is_read_like_a_yaml_file(tmp_path: Path) -> None:
    root = WorldSpec().write(tmp_path / "w")
    expected = load_world(root).revision("r1").digest
    split = WorldSpec().write(tmp_path / "split", split=True)
    (split / "data" / "people.yaml").rename(split / "data" / "people.yml")
    (split / "data" / "documents.yaml").rename(split / "data" / "documents.YML")
    assert load_world(split).revision("r1").digest == expected


def test_one_data_file_under_two_suffixes_is_refused(tmp_path: Path) -> None:
    root = WorldSpec().write(tmp_path / "w", split=True)
    (root / "data" / "people.yml").write_text("roles: []\n", encoding="utf-8")
    with pytest.raises(InvalidWorld, match=r"people\.(yml|yaml) and people\.(yaml|yml) are one data file"):
        load_world(root)


def test_an_overlay_with_a_duplicate_key_is_refused(tmp_path: Path) -> None:
    from tests.fixtures.overlays.paths import GOOD
    from worldkit.overlay import load_overlay

    text = GOOD.read_text(encoding="utf-8")
    bad = GOOD.parent / "dup-key.yaml"
    try:
        bad.write_text(text + "\nrequest: another request\n", encoding="utf-8")
        with pytest.raises(InvalidOverlay, match="duplicate key 'request'"):
            load_overlay(bad)
    finally:
        bad.unlink()
