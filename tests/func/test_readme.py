"""The README's quick start is true: two commands, and the demo output it shows is what runs print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from worldkit._cli.main import run

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_quick_start_shows_exactly_two_commands() -> None:
    block = README.split("## Quick start", 1)[1].split("```console", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("$ ")]
    assert commands == ["$ make demo", "$ make test"]


def test_demo_materialize_output_in_readme_is_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["materialize", "--world", "pharmaco_demo", "--rev", "r2", "--date", "2026-03-02",
            "--seat", "EMP-QC-001", "--out", str(tmp_path / "p")]
    assert run(argv) == 0
    printed = capsys.readouterr().out.splitlines()[1:]
    for line in printed:
        assert line in README, f"README's demo output is stale; expected the line {line!r}"


def test_demo_task_digests_in_readme_are_current(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = re.search(r"DEMO_TASK := (\S+)", (Path(__file__).resolve().parents[2] / "Makefile").read_text()).group(1)
    assert run(["overlay", "apply", task, "--out", str(tmp_path / "t")]) == 0
    for line in capsys.readouterr().out.splitlines()[1:]:
        assert line in README, f"README's demo output is stale; expected the line {line!r}"
