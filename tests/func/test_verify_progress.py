"""Verify shows progress on stderr only on a terminal, never with --json, and the report is unchanged."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.builders import WorldSpec
from worldkit._cli.main import run


@pytest.fixture()
def mini(tmp_path: Path) -> Path:
    world = WorldSpec().write(tmp_path / "worlds" / "mini")
    assert run(["freeze", "--world", str(world), "--date", "2025-07-01"]) == 0
    return world


ARGS = ["--only", "revision-digests,projection-rebuild,access-audit"]


def test_not_a_terminal_means_no_progress(mini: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run(["verify", "--world", str(mini), *ARGS]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out.startswith("verify mini\n")


def test_on_a_terminal_progress_goes_to_stderr(
    mini: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert run(["verify", "--world", str(mini), *ARGS]) == 0
    captured = capsys.readouterr()
    assert "verify" in captured.err and "3/3" in captured.err
    plain = captured.out
    monkeypatch.undo()
    assert run(["verify", "--world", str(mini), *ARGS]) == 0
    assert capsys.readouterr().out == plain  # the report itself is the same


def test_json_is_silent_even_on_a_terminal(
    mini: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert run(["verify", "--world", str(mini), "--json", *ARGS]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert json.loads(captured.out)["status"] == "pass"


def test_mutation_progress_counts_every_mutation(
    mini: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from worldkit.verify.mutations import run_mutations

    seen: list[tuple[str, int, int]] = []
    run_mutations(mini, 3, 1, manifests=mini.parent.parent / "manifests" / "mini",
                  progress=lambda label, done, total: seen.append((label, done, total)))
    assert [s[1:] for s in seen] == [(0, 3), (1, 3), (2, 3), (3, 3)]
    assert seen[1][0].startswith("mutation 1: ")


def test_the_progress_bar_starts_no_thread(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A second thread would make verify's scheduler refuse to fork (it then runs every check in
    turn), so on a terminal the bar is drawn by its callback, never by a refresh thread."""
    import threading

    from worldkit._cli.output import progress_bar

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    before = threading.active_count()
    with progress_bar("verify") as tick:
        assert tick is not None
        during = threading.active_count()
        tick("a step", 1, 2)
        tick("the last step", 2, 2)
    assert during == before
    assert "2/2" in capsys.readouterr().err
