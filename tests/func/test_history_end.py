"""A date after the world's history is accepted, with a note saying so (nothing happens after its last day)."""

from __future__ import annotations

from pathlib import Path

from tests.builders import WorldSpec
from worldkit._cli.main import run


def test_a_date_after_the_history_prints_a_note_and_one_within_it_does_not(tmp_path: Path, capsys) -> None:
    world = WorldSpec().write(tmp_path / "mini")
    base = ["materialize", "--world", str(world), "--rev", "r1", "--seat", "S1"]
    assert run([*base, "--date", "2025-07-01", "--out", str(tmp_path / "a")]) == 0
    assert "note:" not in capsys.readouterr().err
    assert run([*base, "--date", "2026-01-01", "--out", str(tmp_path / "b")]) == 0
    captured = capsys.readouterr()
    assert "note: 2026-01-01 is after the end of mini r1's history (2025-12-01)" in captured.err
    assert "note" not in captured.out
