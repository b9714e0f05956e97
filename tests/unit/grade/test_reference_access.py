"""`overlay check` fails an overlay whose reference actions leave a criterion's evidence `not_accessed`,
naming the criterion, the evidence locator and the call that would access it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.fixtures.overlays.paths import GOOD, WORLD
from worldkit._cli.main import run
from worldkit.grade.reference_access import CODE, check_overlay_fully


def _variant(tmp_path: Path, keep) -> Path:  # noqa: ANN001 - a predicate over reference actions
    """The good fixture beside a copy of its world, with only the reference actions `keep` accepts."""
    shutil.copytree(WORLD, tmp_path / "world")
    raw = yaml.safe_load(GOOD.read_text(encoding="utf-8"))
    raw["reference"]["actions"] = [a for a in raw["reference"]["actions"] if keep(a)]
    (tmp_path / "good").mkdir()
    path = tmp_path / "good" / "task.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _access_problems(path: Path) -> dict[str, tuple[str, str]]:
    report = check_overlay_fully(path)
    return {p.locator: (p.message, p.fix) for p in report.problems if p.code == CODE}


def test_the_good_fixture_accesses_every_criterions_evidence(tmp_path: Path) -> None:
    assert _access_problems(_variant(tmp_path, lambda a: True)) == {}


def test_a_mail_never_read_is_named_with_the_read_that_would_access_it(tmp_path: Path) -> None:
    path = _variant(tmp_path, lambda a: a != {"tool": "read_message", "args": {"id": "M1"}})
    problems = _access_problems(path)
    assert set(problems) == {"evidence[C9]"}  # C9's only evidence is mail M1
    message, fix = problems["evidence[C9]"]
    assert "criterion C9's evidence not_accessed under the full projection" in message and "mail M1" in message
    assert fix.startswith("add `{tool: read_message, args: {id: M1}}` to reference.actions")


def test_a_record_listing_is_not_an_access(tmp_path: Path) -> None:
    """Listing the records (query_records) returns no record's content: only get_record accesses CC-1."""

    def keep(action: dict) -> bool:
        return action.get("tool") != "get_record"

    path = _variant(tmp_path, keep)
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    raw["reference"]["actions"].insert(0, {"tool": "query_records", "args": {}})
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    problems = _access_problems(path)
    # C1, C4-C7, C10 and S1 need CC-1 in every set; C2 and C3 have other sets the reads meet.
    assert set(problems) == {f"evidence[{c}]" for c in ("C1", "C4", "C5", "C6", "C7", "C10", "S1")}
    message, fix = problems["evidence[C5]"]
    assert "records CC-1 (fields window_days)" in message
    assert fix.startswith("add `{tool: get_record, args: {id: CC-1}}`") and "query_records" in fix


def test_overlay_check_and_freeze_refuse_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, lambda a: a != {"tool": "read_message", "args": {"id": "M1"}})
    assert run(["overlay", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{CODE} evidence[C9]" in out and "cc1-report: FAILED (1 error(s)" in out
    assert run(["overlay", "freeze", str(path), "--manifests", str(tmp_path / "manifests")]) == 1
    assert f"{CODE}" in capsys.readouterr().err
    assert not (tmp_path / "manifests").exists()
