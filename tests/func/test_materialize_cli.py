"""`worldkit materialize` and `worldkit world show|load` end to end through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict:
    assert run(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture()
def world(tmp_path: Path) -> Path:
    return WorldSpec().write(tmp_path / "world")


def test_materialize_json_and_text(world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["materialize", "--world", str(world), "--rev", "r1", "--date", "2025-07-01", "--seat", "S1"]
    info = _json(capsys, [*base, "--out", str(tmp_path / "a"), "--json"])
    assert {"fingerprint", "files", "revision_digest", "tool_bundle_sha256"} <= info.keys()
    assert run([*base, "--out", str(tmp_path / "b")]) == 0
    assert f"fingerprint:     {info['fingerprint']}" in capsys.readouterr().out


def test_in_process_the_command_leaves_the_callers_heap_as_it_was(
    world: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called through `run()` (a test, a notebook), materialize freezes nothing of the caller's heap and
    forks no office renderers: the process goes on after it. The program (`main`) does both."""
    import gc

    import worldkit.materialize
    from worldkit._process import thaw_all

    frozen = gc.get_freeze_count()
    thaw_all()
    forked = []
    real = worldkit.materialize.materialize
    monkeypatch.setattr(worldkit.materialize, "materialize", lambda *a, **k: (forked.append(k["office_workers"]), real(*a, **k))[1])
    try:
        argv = ["materialize", "--world", str(world), "--rev", "r1", "--date", "2025-07-01", "--seat", "S1"]
        assert run([*argv, "--out", str(tmp_path / "a")]) == 0
        assert gc.get_freeze_count() == 0
    finally:
        if frozen:
            gc.freeze()
    assert forked == [False]
    done = subprocess.run([sys.executable, "-c", _PROGRAM, *argv, "--out", str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "office renderers: True"


_PROGRAM = """
import atexit, sys
import worldkit.materialize
seen = []
real = worldkit.materialize.materialize
worldkit.materialize.materialize = lambda *a, **k: (seen.append(k["office_workers"]), real(*a, **k))[1]
atexit.register(lambda: print(f"office renderers: {seen == [True]}"))
sys.argv[0] = "worldkit"
from worldkit._cli.main import main
main()
"""


def test_refuses_non_empty_dir_without_force(world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    argv = ["materialize", "--world", str(world), "--rev", "r1", "--date", "2025-07-01", "--seat", "S1", "--out", str(out)]
    assert run(argv) == 2
    assert "is not empty; pass --force" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"
    assert run([*argv, "--force"]) == 0
    assert not (out / "keep.txt").exists()


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--seat", "S9", "unknown seat 'S9' in mini r1; valid seats: S1, S2, S4"),
        ("--rev", "r7", "unknown revision 'r7' of world mini; valid revisions: r1, r2"),
        ("--date", "07/01/2025", "malformed date '07/01/2025'; use YYYY-MM-DD, e.g. 2026-03-02"),
    ],
)
def test_bad_arguments_list_choices(world: Path, tmp_path: Path, capsys, flag: str, value: str, message: str) -> None:
    args = {"--world": str(world), "--rev": "r1", "--date": "2025-07-01", "--seat": "S1", "--out": str(tmp_path / "o")}
    args[flag] = value
    argv = ["materialize", *[x for pair in args.items() for x in pair]]
    assert run(argv) == 2
    assert capsys.readouterr().err.strip() == f"error: {message}"
    assert not (tmp_path / "o").exists()


def test_invalid_world_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = WorldSpec()
    spec.item("seats", "S1")["person"] = "P-GHOST"
    root = spec.write(tmp_path / "bad")
    assert run(["world", "show", str(root)]) == 3
    err = capsys.readouterr().err
    assert "entity S1" in err and "field person" in err and "unknown person 'P-GHOST'" in err


def test_world_show_json(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    info = _json(capsys, ["world", "show", str(world), "--json"])
    assert [r["name"] for r in info["revisions"]] == ["r1", "r2"]
    assert all(len(r["digest"]) == 64 for r in info["revisions"])
    assert {"id": "S1", "person": "P1", "name": "Ann Analyst", "roles": ["analyst"]} in info["seats"]
    assert info["dates"] == {"first": "2025-01-01", "last": "2025-12-01"}
    assert info["counts"]["documents"] == 5 and info["counts"]["people"] == 4


def test_world_load_on_both_backends(world: Path, store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    first = _json(capsys, ["world", "load", str(world), "--store", store_url, "--json"])
    assert [r["status"] for r in first["revisions"]] == ["stored", "stored"]
    again = _json(capsys, ["world", "load", str(world), "--store", store_url, "--json"])
    assert [r["status"] for r in again["revisions"]] == ["unchanged", "unchanged"]
    assert [r["digest"] for r in again["revisions"]] == [r["digest"] for r in first["revisions"]]


def test_world_load_refuses_changed_revision(world: Path, store_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "load", str(world), "--store", store_url]) == 0
    (world / "templates" / "note.md.j2").write_text("changed {{ doc.id }}\n")
    assert run(["world", "load", str(world), "--store", store_url]) != 0
    assert "r1" in capsys.readouterr().err


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from worldkit._cli.main import app

    command = typer.main.get_command(app)

    def walk(cmd, path):
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, [*path, name])

    for path, cmd in walk(command, []):
        assert (cmd.help or "").strip(), f"worldkit {' '.join(path)} has no help text"
        assert run([*path, "--help"]) == 0
    capsys.readouterr()


def test_schema_command_writes_schemas(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["schema", "--out", str(tmp_path / "s")]) == 0
    world_schema = json.loads((tmp_path / "s" / "world.schema.json").read_text())
    assert world_schema["additionalProperties"] is False
    assert "revisions" in world_schema["properties"]
