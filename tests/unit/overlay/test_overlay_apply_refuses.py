"""`overlay apply` and `run` refuse exactly what `overlay check` rejects (issue 11), and the judge
reads only workspace files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.overlays.paths import BROKEN, GOOD
from worldkit._cli.main import run as cli
from worldkit.errors import WorldkitError
from worldkit.overlay import Overlay, apply_overlay, check_overlay
from worldkit.overlay.errors import OverlayProblems

CHECKABLE = sorted(p for p in BROKEN.glob("*.yaml") if p.stem not in ("invalid-model", "invalid-yaml"))


@pytest.mark.parametrize("overlay", CHECKABLE, ids=lambda p: p.stem)
def test_apply_refuses_every_overlay_check_rejects(overlay: Path, tmp_path: Path) -> None:
    report = check_overlay(overlay)
    assert not report.ok
    with pytest.raises(WorldkitError) as refused:
        apply_overlay(overlay, tmp_path / "pkg")
    assert not (tmp_path / "pkg").exists()
    # Two are refused by their own, earlier error: a stale pin (StaleFingerprint), an absent reference file.
    if overlay.stem not in ("fingerprint-stale", "reference-file-missing"):
        assert isinstance(refused.value, OverlayProblems)
        for problem in report.errors:
            assert problem.code in refused.value.message


@pytest.mark.parametrize("path", ["../../x.csv", "/tmp/x.csv"])
def test_a_deliverable_outside_the_workspace_is_refused_by_apply_and_run(
    mutated: Callable[[Callable[[dict[str, Any]], Any]], Overlay], path: str, tmp_path: Path
) -> None:
    from worldkit.run.runner import run_task

    model = mutated(lambda raw: raw["deliverable"].__setitem__("path", path))
    assert "deliverable-outside-workspace" in {p.code for p in check_overlay(model).errors}
    with pytest.raises(OverlayProblems, match="deliverable-outside-workspace"):
        apply_overlay(model, tmp_path / "pkg")
    with pytest.raises(OverlayProblems, match="deliverable-outside-workspace"):
        run_task(model, "noop", runs_dir=tmp_path / "runs", store_url=f"sqlite:///{tmp_path / 's.db'}")


def test_a_curated_packet_naming_a_file_outside_the_projection_is_refused_under_every_condition(
    mutated: Callable[[Callable[[dict[str, Any]], Any]], Overlay], tmp_path: Path
) -> None:
    model = mutated(lambda raw: raw["curated"]["curator-1"].append("../verifier/truth.json"))
    assert not check_overlay(model).ok
    for condition in ("full", "curated:curator-1"):
        with pytest.raises(OverlayProblems):
            apply_overlay(model, tmp_path / condition.replace(":", "-"), condition)


def test_the_cli_apply_exits_1_like_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = BROKEN / "deliverable-outside-workspace.yaml"
    assert cli(["overlay", "check", str(bad)]) == 1
    assert cli(["overlay", "apply", str(bad), "--out", str(tmp_path / "pkg")]) == 1
    assert "deliverable-outside-workspace" in capsys.readouterr().err
    assert cli(["overlay", "apply", str(GOOD), "--out", str(tmp_path / "ok")]) == 0


def test_the_judge_reads_only_workspace_files(tmp_path: Path) -> None:
    import os

    from worldkit.grade.judge import read_deliverables

    secret = tmp_path / "secret.csv"
    secret.write_text("outside secret")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "report.md").write_text("inside")
    (workspace / "link.md").symlink_to(secret)
    os.mkfifo(workspace / "pipe.md")  # never opened for writing: a blocking read would hang here
    texts = read_deliverables(workspace, [str(secret), "../secret.csv", "link.md", "pipe.md", "report.md"])
    assert texts["report.md"] == "inside"
    assert all("outside secret" not in (text or "") for text in texts.values())
    assert texts["pipe.md"] is None and texts["link.md"] is None


def test_apply_checks_an_overlay_once_per_projection_and_again_when_either_changes(
    mutated: Callable[[Callable[[dict[str, Any]], Any]], Overlay], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A campaign applies one overlay to one projection many times: `overlay check` runs once for an
    (overlay content, projection fingerprint) pair in a process; any change to the overlay is checked
    afresh, and a refused overlay is refused every time."""
    import worldkit.overlay.apply as apply_module
    import worldkit.overlay.problems as problems

    monkeypatch.setattr(apply_module, "_CHECKED", {})
    calls: list[str] = []
    real = problems.check_materialized

    def counted(model: Overlay, result: Any, scratch: Path) -> Any:
        calls.append(model.id)
        return real(model, result, scratch)

    monkeypatch.setattr(problems, "check_materialized", counted)
    apply_overlay(GOOD, tmp_path / "one")
    apply_overlay(GOOD, tmp_path / "two")
    assert len(calls) == 1
    retitled = mutated(lambda raw: raw.__setitem__("title", raw["title"] + " (again)"))
    apply_overlay(retitled, tmp_path / "three")
    assert len(calls) == 2
    broken = mutated(lambda raw: raw["deliverable"].__setitem__("path", "../../x.csv"))
    for n in range(2):
        with pytest.raises(OverlayProblems, match="deliverable-outside-workspace"):
            apply_overlay(broken, tmp_path / f"broken-{n}")
        assert not (tmp_path / f"broken-{n}").exists()
    assert len(calls) == 3


def test_an_overlay_file_is_parsed_once_per_content(tmp_path: Path) -> None:
    """`load_overlay` gives the same frozen Overlay for the same bytes, and a fresh one once the file changes."""
    import shutil

    from worldkit.overlay import load_overlay

    copy = tmp_path / GOOD.name
    shutil.copy(GOOD, copy)
    first = load_overlay(copy)
    assert load_overlay(copy) is first
    copy.write_text(copy.read_text(encoding="utf-8").replace(f"title: {first.title}", "title: Changed title"),
                    encoding="utf-8")  # fmt: skip
    changed = load_overlay(copy)
    assert changed is not first and changed.title == "Changed title"
    copy.write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(WorldkitError, match="not valid YAML"):
        load_overlay(copy)
