"""Materialize edges of issue 11: a date before the world starts, template output size, crash leftovers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run as cli
from worldkit._fs import atomic_directory, sweep_stale
from worldkit.errors import InvalidWorld, UsageError
from worldkit.materialize import materialize


def test_a_date_before_the_world_starts_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = WorldSpec().write(tmp_path / "w")
    with pytest.raises(UsageError, match=r"date 1999-01-01 is before world mini starts"):
        materialize(world, "r1", "1999-01-01", "S1", tmp_path / "p")
    assert not (tmp_path / "p").exists()
    argv = ["materialize", "--world", str(world), "--rev", "r1", "--date", "1999-01-01", "--seat", "S1",
            "--out", str(tmp_path / "q")]
    assert cli(argv) == 2
    assert "before world mini starts" in capsys.readouterr().err and not (tmp_path / "q").exists()


@pytest.mark.parametrize("body", [
    "{% for i in range(100000) %}{% for j in range(100000) %}xxxxxxxxxx{% endfor %}{% endfor %}",
    "{{ 'x' * 1000000000 }}",
    "{{ ['x'] * 1000000000 }}",
    "{{ 10 ** 100000000 }}",
])
def test_a_template_with_unbounded_output_is_refused(tmp_path: Path, body: str) -> None:
    spec = WorldSpec()
    spec.templates["note.md.j2"] = body
    world = spec.write(tmp_path / "w")
    with pytest.raises(InvalidWorld, match="produces too much output") as caught:
        materialize(world, "r2", "2025-07-01", "S1", tmp_path / "p")
    assert "templates/note.md.j2" in caught.value.message


def _dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


def test_crash_leftovers_are_swept_on_the_next_start(tmp_path: Path) -> None:
    world = WorldSpec().write(tmp_path / "w")
    dead = _dead_pid()
    leftovers = [tmp_path / f".p.tmp-{dead}-0123abcd", tmp_path / f".p.old-{dead}-89abcdef",
                 tmp_path / f".other.tmp-{dead}-00000000"]
    for folder in leftovers:
        (folder / "files").mkdir(parents=True)
        (folder / "files" / "x.md").write_text("half")
    (leftovers[1] / "files").chmod(0o500)
    live = tmp_path / f".p.tmp-{os.getpid()}-fedcba98"
    live.mkdir()
    keep = tmp_path / ".p.tmp-notes"
    keep.mkdir()
    materialize(world, "r1", "2025-07-01", "S1", tmp_path / "p")
    materialize(world, "r1", "2025-07-01", "S1", tmp_path / "p", force=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == sorted([live.name, keep.name])
    assert sweep_stale(tmp_path / "p") == []


def test_force_leaves_no_old_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for _ in range(2):
        with atomic_directory(out, force=True) as tmp:
            (tmp / "ro").mkdir()
            (tmp / "ro" / "f").write_text("x")
            (tmp / "ro").chmod(0o500)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
