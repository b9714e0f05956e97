"""Every command that takes a world accepts its name or its folder, and a world given by folder
brings its project: the overlays and manifests beside its `worlds/` folder, whatever the current folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldkit._cli.main import run


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    assert run(["world", "new", "alpha", "--out", str(root)]) == 0
    return root


def _world_commands(world: str, tmp: Path) -> list[list[str]]:
    return [
        ["world", "show", world],
        ["world", "load", world, "--store", f"sqlite:///{tmp / 'store.db'}"],
        ["world", "stats", world],
        ["freeze", "--world", world, "--overlays"],
        ["materialize", "--world", world, "--rev", "r1", "--date", "2025-06-02", "--seat", "S1", "--out", str(tmp / "view")],
        ["overlay", "new", "--world", world, "--rev", "r1", "--date", "2025-06-02", "--seat", "S1", "--id", "t2",
         "--out", str(tmp / "t2.yaml")],
        ["verify", "--world", world, "--only", "revision-digests,overlay-locks"],
    ]  # fmt: skip


@pytest.mark.parametrize("form", ["name", "relative", "absolute"])
def test_every_world_command_takes_a_name_or_a_path(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    monkeypatch.chdir(project)
    world = {"name": "alpha", "relative": "worlds/alpha", "absolute": str(project / "worlds" / "alpha")}[form]
    for argv in _world_commands(world, tmp_path):
        code = run(argv)
        out = capsys.readouterr()
        assert code == 0, (argv, out.out, out.err)


def test_a_world_given_by_path_finds_its_own_overlays_from_anywhere(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    world = str(project / "worlds" / "alpha")
    assert run(["freeze", "--world", world, "--overlays"]) == 0
    assert capsys.readouterr().out.startswith(f"froze alpha and 1 overlay(s) in {project / 'manifests' / 'alpha'}\n")
    assert run(["world", "stats", world, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overlays"] == 1
    assert run(["verify", "--world", world, "--only", "overlay-locks", "--json"]) == 0
    [locks] = json.loads(capsys.readouterr().out)["checks"]
    assert locks["status"] == "pass", locks
    assert run(["export", "harbor", "--all", "--world", world, "--out", str(tmp_path / "harbor"), "--json"]) == 0
    tasks = json.loads(capsys.readouterr().out)["tasks"]
    assert {t["condition"] for t in tasks} == {"full", "curated:curator-1"}
