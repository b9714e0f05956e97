"""A workspace starts as frozen: `serve --run-folder` (and `run`) refuse a run folder whose
`workspace/` differs from the frozen seed — a copy or hard link of a verifier file, a symbolic link,
a pre-written deliverable, a changed seed file, world-writable modes — and accept one whose only
difference is a deliverable that starts absent. Each run folder is staged by worldkit, then
tampered with by the test."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import TRIAGE
from worldkit._cli.main import run as cli
from worldkit.errors import CheckFailed
from worldkit.frozen.seed import require_fresh_workspace, workspace_differences
from worldkit.overlay import load_overlay
from worldkit.run.folder import stage_run_folder

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("seed") / "run"
    stage_run_folder(load_overlay(TRIAGE), root, run_id="seed-run")
    return root


@pytest.fixture
def folder(staged: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(staged, copy)
    return copy


def _copy_truth(root: Path) -> None:
    shutil.copyfile(root / "package" / "verifier" / "truth.json", root / "workspace" / "notes.json")


def _link_truth(root: Path) -> None:
    os.link(root / "package" / "verifier" / "truth.json", root / "workspace" / "notes.json")


def _link_truth_over_the_seed(root: Path) -> None:
    (root / "workspace" / "triage.md").unlink()
    os.link(root / "package" / "verifier" / "reference" / "files" / "expected.md", root / "workspace" / "triage.md")


def _hard_link_the_seed_outside(root: Path) -> None:
    os.link(root / "workspace" / "triage.md", root / "elsewhere.md")  # same bytes; a second name outside


def _symlink_truth(root: Path) -> None:
    (root / "workspace" / "notes.json").symlink_to(root / "package" / "verifier" / "truth.json")


def _prewrite_deliverable(root: Path) -> None:
    (root / "workspace" / "triage.md").write_text("# Triage\n\nSOP checked: SOP-001\nNeeds revision (yes/no): yes\n")


def _hidden_copy(root: Path) -> None:
    (root / "workspace" / ".cache").mkdir()
    shutil.copyfile(root / "package" / "verifier" / "rubric.json", root / "workspace" / ".cache" / "r.json")


def _world_writable_file(root: Path) -> None:
    (root / "workspace" / "triage.md").chmod(0o666)


def _world_writable_dir(root: Path) -> None:
    (root / "workspace").chmod(0o777)


ATTACKS: dict[str, tuple[Callable[[Path], None], str]] = {
    "copy of verifier/truth.json": (_copy_truth, "notes.json: not in the frozen seed"),
    "hard link of verifier/truth.json": (_link_truth, "notes.json: a file with 2 hard links"),
    "hard link of a verifier file over the seed": (_link_truth_over_the_seed, "triage.md: a file with 2 hard links"),
    "seed file hard-linked outside": (_hard_link_the_seed_outside, "triage.md: a file with 2 hard links"),
    "symlink to verifier/truth.json": (_symlink_truth, "notes.json: a symbolic link"),
    "pre-written deliverable": (_prewrite_deliverable, "triage.md: differs from the frozen seed"),
    "hidden copy of the rubric": (_hidden_copy, ".cache/r.json: not in the frozen seed"),
    "world-writable file": (_world_writable_file, "triage.md: mode 0666"),
    "world-writable directory": (_world_writable_dir, "mode 0777"),
}


def test_a_fresh_workspace_starts_as_frozen(folder: Path) -> None:
    assert workspace_differences(folder / "workspace", folder / "package" / "candidate", load_overlay(TRIAGE)) == []


def test_a_deliverable_may_start_absent_but_no_other_seed_file(folder: Path) -> None:
    overlay = load_overlay(TRIAGE)
    (folder / "workspace" / "triage.md").unlink()
    require_fresh_workspace(folder / "workspace", folder / "package" / "candidate", overlay)
    # Without the permission to write it, the same absence is a difference.
    problems = workspace_differences(folder / "workspace", folder / "package" / "candidate", None)
    assert problems == ["triage.md: in the frozen seed, missing from the workspace"]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_each_tampered_workspace_is_refused(folder: Path, name: str) -> None:
    tamper, expected = ATTACKS[name]
    tamper(folder)
    with pytest.raises(CheckFailed) as caught:
        require_fresh_workspace(folder / "workspace", folder / "package" / "candidate", load_overlay(TRIAGE))
    assert expected in caught.value.message


def test_serve_run_folder_refuses_a_copied_verifier_file(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _copy_truth(folder)
    code = cli(["serve", "--run-folder", str(folder), "--store", f"sqlite:///{folder.parent / 's.db'}"])
    err = capsys.readouterr().err
    assert code == 1 and "does not start as frozen" in err and "notes.json" in err and len(err.strip().splitlines()) == 1
