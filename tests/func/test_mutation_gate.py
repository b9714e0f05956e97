"""The mutation gate through the CLI, on fixture overlays: `overlay check` reports the campaign's
failures as errors, `overlay freeze` and `freeze --world W --overlays` refuse a rubric that fails
it, and freeze a rubric that passes it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import FIXTURES, WORLD
from worldkit._cli.main import run

MEMO = FIXTURES / "absence" / "cc1-memo.yaml"
SOUND = "check: {type: regex, path: memo.md, pattern: 'CC-1\\b[^\\n]*\\bapproved\\b', case: insensitive}"
STRICT = "check: {type: contains, path: memo.md, text: 'CC-1 is approved', case: sensitive}"


@pytest.fixture()
def strict(tmp_path: Path) -> Path:
    """The absence fixture with A1 a case-sensitive literal: a right memo that writes `cc-1` fails it."""
    shutil.copytree(WORLD, tmp_path / "world")
    text = MEMO.read_text(encoding="utf-8")
    assert SOUND in text
    overlay = tmp_path / "absence" / "cc1-memo.yaml"
    overlay.parent.mkdir()
    overlay.write_text(text.replace(SOUND, STRICT), encoding="utf-8")
    return overlay


def test_check_reports_the_campaign_failures_as_errors(strict: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["overlay", "check", str(MEMO), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    assert run(["overlay", "check", str(strict), "--json"]) == 1
    problems = json.loads(capsys.readouterr().out)["problems"]
    failing = [(p["code"], p["locator"]) for p in problems if p["severity"] == "error"]
    assert failing == [("mutation-right-fails", "rubric[A1]")], problems
    assert "identifiers in lower case" in next(p["message"] for p in problems if p["code"] == "mutation-right-fails")


def test_freeze_refuses_a_rubric_the_campaign_fails(
    strict: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifests = tmp_path / "manifests"
    assert run(["overlay", "freeze", str(strict), "--manifests", str(manifests)]) == 1
    err = capsys.readouterr().err
    assert "the mutation campaign fails, so its rubric is not frozen" in err and "rubric[A1]" in err
    assert not manifests.exists()
    assert run(["overlay", "freeze", str(MEMO), "--manifests", str(manifests)]) == 0
    assert (manifests / "mini" / "overlays" / "cc1-memo.json").is_file()


def test_refreeze_refuses_through_the_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["world", "new", "beta", "--out", str(tmp_path)]) == 0
    world, overlay = tmp_path / "worlds" / "beta", tmp_path / "overlays" / "beta" / "first-task.yaml"
    assert run(["freeze", "--world", str(world), "--overlays"]) == 0  # the scaffold's rubric passes the campaign
    lock = tmp_path / "manifests" / "beta" / "overlays" / "first-task.json"
    frozen = lock.read_bytes()
    capsys.readouterr()
    sound = r"check: {type: regex, path: answer.md, pattern: 'REQ-2\b[^\n]*\bapproved\b', case: insensitive}"
    text = overlay.read_text(encoding="utf-8")
    assert sound in text
    overlay.write_text(text.replace(sound, sound.replace("insensitive", "sensitive")))  # `req-2` is REQ-2 too
    assert run(["freeze", "--world", str(world), "--overlays"]) == 1
    out = capsys.readouterr().out
    assert "the mutation campaign fails" in out and "rubric[C5]" in out, out
    assert lock.read_bytes() == frozen  # the failing overlay keeps its old lock
