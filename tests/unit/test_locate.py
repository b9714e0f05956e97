"""The search path of `worldkit.locate`: command line, $WORLDKIT_PATH, the project upward, shipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from worldkit import locate
from worldkit.errors import UsageError
from worldkit.overlay.load import resolve_overlay
from worldkit.world.load import resolve_world


def _root(base: Path, world: str, overlay: str | None = None) -> Path:
    (base / "worlds" / world).mkdir(parents=True)
    (base / "worlds" / world / "world.yaml").write_text("id: x\n")
    if overlay:
        (base / "overlays" / world).mkdir(parents=True)
        (base / "overlays" / world / f"{overlay}.yaml").write_text("id: y\n")
    return base


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in (locate.PATH_ENV_VAR, locate.WORLDS_ENV_VAR, locate.OVERLAYS_ENV_VAR):
        monkeypatch.delenv(name, raising=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    return tmp_path


def test_the_project_is_found_upward_from_the_current_folder(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _root(clean_env / "proj", "mine", "t1")
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert locate.project_root() == project.resolve()
    assert resolve_world("mine") == (project / "worlds" / "mine").resolve()
    assert resolve_overlay("mine/t1") == (project / "overlays" / "mine" / "t1.yaml").resolve()


def test_the_shipped_worlds_are_found_from_an_empty_folder(clean_env: Path) -> None:
    assert locate.project_root() is None
    assert resolve_world("pharmaco_demo").name == "pharmaco_demo"
    assert resolve_overlay("pharmaco_demo/stability-update").name == "overlay.yaml"
    assert locate.find_manifest("infoorg", "design.json") is not None


def test_command_line_roots_come_before_the_environment_and_the_project(
    clean_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = _root(clean_env / "cli", "pharmaco_demo")
    env = _root(clean_env / "env", "pharmaco_demo")
    monkeypatch.setenv(locate.PATH_ENV_VAR, str(env))
    assert resolve_world("pharmaco_demo") == (env / "worlds" / "pharmaco_demo").resolve()
    with locate.extra_roots([cli]):
        assert resolve_world("pharmaco_demo") == (cli / "worlds" / "pharmaco_demo").resolve()
    assert locate._extra == []


def test_a_folder_of_worlds_is_accepted_as_a_root(clean_env: Path) -> None:
    base = _root(clean_env / "elsewhere", "loose")
    with locate.extra_roots([base / "worlds"]):
        assert resolve_world("loose") == (base / "worlds" / "loose").resolve()


def test_manifests_sit_beside_the_worlds_folder(tmp_path: Path) -> None:
    assert locate.manifest_dir(tmp_path / "worlds" / "w", "w") == tmp_path / "manifests" / "w"
    assert locate.manifest_dir(tmp_path / "w", "w") == tmp_path / "manifests" / "w"


def test_an_unknown_world_lists_the_folders_searched_and_the_worlds_found(clean_env: Path) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_world("no-such-world")
    assert "pharmaco_demo" in caught.value.message and "Available worlds" in caught.value.message


def test_worlds_is_a_global_option_accepted_anywhere(clean_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from worldkit._cli.main import run

    repo = Path(__file__).resolve().parents[2]
    copy = clean_env / "copy" / "worlds"
    copy.mkdir(parents=True)
    (copy / "renamed").symlink_to(repo / "worlds" / "pharmaco_demo", target_is_directory=True)
    assert run(["world", "show", "renamed"]) == 2
    capsys.readouterr()
    assert run(["world", "show", "renamed", "--worlds", str(copy.parent)]) == 0
    assert "Riverbend Parenterals" in capsys.readouterr().out
    assert run(["--worlds", str(copy), "world", "show", "renamed"]) == 0
