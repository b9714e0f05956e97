"""A folder names, worldkit resolves: a run folder or package that names a hostile overlay or world
(by path, by a forged digest, or by planting one inside itself) is refused, and no code it brings
runs. Every forged folder here is made by the test: a real run folder or package, copied, then
tampered with by hand."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import FIXTURES, GOOD, WORLD
from worldkit._cli.main import run
from worldkit.locate import OVERLAYS_ENV_VAR, WORLDS_ENV_VAR

MARKER_ENV = "WORLDKIT_TEST_HOSTILE_MARKER"
GENERATOR = """import os, pathlib
def generate(world, rng):
    pathlib.Path(os.environ["{env}"]).write_text("the hostile generator ran")
    return {{}}
"""


@pytest.fixture(autouse=True)
def _fixtures_on_the_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The fixture overlays and world are the configured path; the marker a hostile generator writes."""
    monkeypatch.setenv(OVERLAYS_ENV_VAR, str(FIXTURES))
    monkeypatch.setenv(WORLDS_ENV_VAR, str(FIXTURES))
    marker = tmp_path / "hostile-generator-ran"
    monkeypatch.setenv(MARKER_ENV, str(marker))
    return marker


@pytest.fixture(scope="module")
def oracle_folder(tmp_path_factory) -> Path:
    """One real run folder: an oracle run of the good fixture, with its record removed (ungraded)."""
    base = tmp_path_factory.mktemp("resolve")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(base / "runs"),
                    "--store", f"sqlite:///{base / 'store.db'}", "--json"]) == 0  # fmt: skip
    folder = Path(json.loads(out.getvalue())["record"]).parent
    (folder / "execution-record.json").unlink()
    return folder


def _hostile_copy(base: Path, *, rubric_note: str = "hostile") -> Path:
    """A hostile copy of the good overlay beside a copy of its world that carries a generator."""
    world = base / "world"
    shutil.copytree(WORLD, world)
    (world / "generator.py").write_text(GENERATOR.format(env=MARKER_ENV), encoding="utf-8")
    spec = (world / "world.yaml").read_text(encoding="utf-8")
    (world / "world.yaml").write_text(spec + "generator: {module: generator.py, seed: 1}\n", encoding="utf-8")
    overlay = base / "overlays" / "good" / "cc1-report.yaml"
    overlay.parent.mkdir(parents=True)
    text = GOOD.read_text(encoding="utf-8").replace("world: ../world", "world: ../../world")
    overlay.write_text(text.replace("title: Report the status", f"title: ({rubric_note}) Report the status"),
                       encoding="utf-8")  # fmt: skip
    return overlay


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def _edit(path: Path, **changes: object) -> None:
    body = json.loads(path.read_text(encoding="utf-8"))
    body.update(changes)
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _grade(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = run(["grade", *argv, "--json"])
    out = capsys.readouterr().out
    body = json.loads(out)
    return code, body.get("error", "") if code else ""


def _digest(overlay: Path) -> str:
    from worldkit.overlay import load_overlay, overlay_digest

    return overlay_digest(load_overlay(overlay))


def test_the_hostile_generator_runs_when_its_world_is_loaded(tmp_path: Path, _fixtures_on_the_path) -> None:
    """The marker is a working detector: loading the hostile world (as the attack wanted) writes it."""
    from worldkit.world.load import load_world

    _hostile_copy(tmp_path / "evil")
    load_world(tmp_path / "evil" / "world")
    assert _fixtures_on_the_path.exists()


def test_an_untampered_folder_grades(capsys, oracle_folder: Path, tmp_path: Path) -> None:
    code, _ = _grade(capsys, str(_copy(oracle_folder, tmp_path)))
    assert code == 0


def test_a_hostile_overlay_path_is_never_opened(capsys, oracle_folder: Path, tmp_path: Path, _fixtures_on_the_path) -> None:
    """run.json names a hostile overlay file by path: the path is ignored, the overlay is resolved by id."""
    hostile = _hostile_copy(tmp_path / "evil")
    folder = _copy(oracle_folder, tmp_path)
    _edit(folder / "run.json", overlay_path=str(hostile))
    code, _ = _grade(capsys, str(folder))
    assert code == 0 and not _fixtures_on_the_path.exists()
    record = json.loads((folder / "execution-record.json").read_text())
    assert record["inputs"]["overlay_path"] == str(GOOD.resolve())


def test_a_hostile_overlay_digest_is_refused(capsys, oracle_folder: Path, tmp_path: Path, _fixtures_on_the_path) -> None:
    """run.json and package.json both name the hostile copy's digest (and path): refused, nothing run."""
    hostile = _hostile_copy(tmp_path / "evil")
    digest = _digest(hostile)
    folder = _copy(oracle_folder, tmp_path)
    _edit(folder / "run.json", overlay_path=str(hostile), overlay_sha256=digest)
    _edit(folder / "package" / "package.json", overlay_sha256=digest)
    code, error = _grade(capsys, str(folder))
    assert code == 1 and f"digest {digest[:12]}" in error and "configured path" in error
    assert len(error.splitlines()) == 1
    assert not _fixtures_on_the_path.exists() and not (folder / "execution-record.json").exists()


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("world", "../evil/world", "is not an id"),
    ("world", "/tmp", "is not an id"),
    ("overlay", "../../evil/overlays/good/cc1-report", "is not an id"),
    ("world", "nosuchworld", "are of other worlds"),
])  # fmt: skip
def test_a_package_naming_its_task_by_path_is_refused(capsys, oracle_folder: Path, tmp_path: Path, field: str,
                                                      value: str, expected: str, _fixtures_on_the_path) -> None:  # fmt: skip
    _hostile_copy(tmp_path / "evil")

    folder = _copy(oracle_folder, tmp_path)
    _edit(folder / "package" / "package.json", **{field: value})
    if field == "overlay":
        _edit(folder / "run.json", overlay=value)
    code, error = _grade(capsys, str(folder))
    assert code == 1 and expected in error
    assert not _fixtures_on_the_path.exists()


@pytest.mark.parametrize(("field", "value"), [("seat", "S-OTHER"), ("condition", "curated:nope"),
                                              ("overlay", "cc1-triage")])  # fmt: skip
def test_run_json_and_package_json_must_agree(capsys, oracle_folder: Path, tmp_path: Path, field: str, value: str) -> None:
    folder = _copy(oracle_folder, tmp_path)
    _edit(folder / "run.json", **{field: value})
    code, error = _grade(capsys, str(folder))
    assert code == 1 and f"name different {field}" in error


def test_an_overlay_planted_inside_the_folder_is_not_used(capsys, oracle_folder: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, _fixtures_on_the_path) -> None:  # fmt: skip
    """The folder carries its own `overlays/` and is the current project: what is inside it is never used."""
    folder = _copy(oracle_folder, tmp_path)
    hostile = _hostile_copy(folder / "planted")
    digest = _digest(hostile)
    shutil.move(str(folder / "planted" / "overlays"), str(folder / "overlays"))
    (folder / "overlays" / "good" / "cc1-report.yaml").write_text(
        (folder / "overlays" / "good" / "cc1-report.yaml").read_text().replace("../../world", "../../planted/world"))
    _edit(folder / "run.json", overlay_sha256=digest)
    _edit(folder / "package" / "package.json", overlay_sha256=digest)
    monkeypatch.delenv(OVERLAYS_ENV_VAR)
    monkeypatch.chdir(folder)
    code, error = _grade(capsys, str(folder))
    assert code == 1 and "not on the configured path" in error
    assert not _fixtures_on_the_path.exists()


def test_verify_workspace_resolves_the_world_by_id(capsys, tmp_path: Path, _fixtures_on_the_path) -> None:
    """A package whose package.json names a hostile world by path: the path is never loaded and the
    check fails; with the world's id it passes and says which world (and generator) it used."""
    package = tmp_path / "pkg"
    assert run(["overlay", "apply", str(GOOD), "--out", str(package)]) == 0
    capsys.readouterr()
    assert run(["verify", "--workspace", str(package), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    frozen = next(c for c in report["checks"] if c["id"] == "frozen-workspace")
    assert frozen["counts"]["world_source"] == str(WORLD.resolve()) and frozen["counts"]["generator"] is None

    _hostile_copy(tmp_path / "evil")

    _edit(package / "package.json", world=str(tmp_path / "evil" / "world"))
    code = run(["verify", "--workspace", str(package), "--json"])
    out = capsys.readouterr().out
    assert code == 1 and "is not an id" in out
    assert not _fixtures_on_the_path.exists()


@pytest.mark.parametrize("tamper", ["duplicate", "compact"])
def test_run_json_with_a_duplicate_key_or_other_bytes_is_refused(capsys, oracle_folder: Path, tmp_path: Path,
                                                                 tamper: str) -> None:  # fmt: skip
    folder = _copy(oracle_folder, tmp_path)
    path = folder / "run.json"
    body = json.loads(path.read_text(encoding="utf-8"))
    if tamper == "duplicate":  # the same key twice, by hand: which copy counts depends on the reader
        text = path.read_text(encoding="utf-8").rstrip()
        path.write_text(text[:-1].rstrip() + f',\n  "overlay": {json.dumps(body["overlay"])}\n}}\n', encoding="utf-8")
    else:
        path.write_text(json.dumps(body), encoding="utf-8")
    code, error = _grade(capsys, str(folder))
    assert code == 3 and "run.json" in error
    assert ("duplicate key" if tamper == "duplicate" else "canonical bytes") in error
