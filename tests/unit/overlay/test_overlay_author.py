"""Authoring: scaffold a valid overlay, re-pin it, freeze its digests deterministically."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.fixtures.overlays.paths import BROKEN, FIXTURES, GOOD
from worldkit.errors import OutputExists
from worldkit.materialize import materialize
from worldkit.overlay import (
    OverlayProblems,
    check_overlay,
    freeze_overlay,
    load_overlay,
    new_overlay,
    pin_overlay,
    read_lock,
)
from worldkit.overlay.author import lock_path

WORLD = FIXTURES / "world"


def fill_todos(path: Path) -> Path:
    """What an author does with the scaffold: write real text where it says TODO."""
    path.write_text(path.read_text().replace("TODO: title of", "Title of").replace("TODO", "Written"))
    return path


def test_new_scaffolds_a_valid_overlay_pinned_to_the_projection(tmp_path: Path) -> None:
    path = new_overlay(str(WORLD), "r2", "2025-07-01", "S1", "my-task", tmp_path / "overlays" / "my-task.yaml")
    overlay = load_overlay(path)
    direct = materialize(WORLD, "r2", "2025-07-01", "S1", tmp_path / "direct")
    assert overlay.pinned_fingerprint == direct.fingerprint
    assert (overlay.id, overlay.rev, overlay.seat) == ("my-task", "r2", "S1")
    assert not Path(overlay.world).is_absolute()
    report = check_overlay(path)
    # the scaffold's TODOs fail the check, each named by its field; nothing else is wrong with it
    assert [p.locator for p in report.errors] == [
        "title", "request", "deliverable.description", "rubric[1].text", "rubric[1].check.text", "reference.answer",
        "reference.actions[1].args.content",
    ]  # fmt: skip
    assert {p.code for p in report.errors} == {"placeholder-left"}
    assert report.errors[0].message == "still holds the placeholder TODO ('TODO: title of my-task')"
    assert {p.code for p in report.problems if p.severity == "warning"} <= {"counterfactual-missing"}
    filled = fill_todos(path)
    assert check_overlay(filled).ok
    assert path.read_text().startswith("# Task overlay scaffolded")
    with pytest.raises(OutputExists, match="pass --force"):
        new_overlay(str(WORLD), "r2", "2025-07-01", "S1", "my-task", path)


def test_new_defaults_to_overlays_world_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = new_overlay(str(WORLD), "r1", "2025-07-01", "S2", "t1")
    assert path == Path("overlays/mini/t1.yaml")
    assert check_overlay(fill_todos(path)).ok


def test_pin_rewrites_only_the_fingerprint_line(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    stale = tmp_path / "sub" / "stale.yaml"
    shutil.copy(BROKEN / "fingerprint-stale.yaml", stale)
    (tmp_path / "world").symlink_to(WORLD)
    before = stale.read_text()
    result = pin_overlay(stale)
    after = stale.read_text()
    assert result.changed and result.previous == "0" * 64
    assert result.fingerprint == load_overlay(GOOD).pinned_fingerprint
    assert before.replace("0" * 64, result.fingerprint) == after
    assert check_overlay(stale).ok
    assert not pin_overlay(stale).changed and stale.read_text() == after


def test_freeze_writes_deterministic_lock(tmp_path: Path) -> None:
    first = freeze_overlay(GOOD, tmp_path / "m1")
    second = freeze_overlay(GOOD, tmp_path / "m2")
    assert first.path == lock_path(tmp_path / "m1", "mini", "cc1-report")
    assert first.path.read_bytes() == second.path.read_bytes()
    lock = read_lock(first.path)
    assert sorted(lock.conditions) == ["curated:curator-1", "curated:curator-2", "full"]
    assert lock.conditions["full"].fingerprint == lock.fingerprint == load_overlay(GOOD).pinned_fingerprint
    data = json.loads(first.path.read_text())
    assert "time" not in json.dumps(data).lower()


def test_freeze_refuses_an_overlay_with_problems(tmp_path: Path) -> None:
    with pytest.raises(OverlayProblems, match="fix them before freezing:\n  error   evidence-missing"):
        freeze_overlay(BROKEN / "evidence-missing.yaml", tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_scaffold_parses_as_yaml_with_a_quoted_locator(tmp_path: Path) -> None:
    path = new_overlay(str(WORLD), "r2", "2025-07-01", "S1", "odd-id.v2", tmp_path / "o.yaml")
    raw = yaml.safe_load(path.read_text())
    assert raw["evidence"]["C1"][0][0]["locator"].startswith("files/")
