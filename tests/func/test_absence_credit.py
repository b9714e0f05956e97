"""Doing nothing earns nothing: an absence is credited only beside content, through `worldkit grade`.

The deliverables are written here by hand (never by the mutation generator), for the fixture task
`absence/cc1-memo` (tests/fixtures/overlays/absence): A1, A2 and S1 ask for content; A3 (a text
absent), A4 (a regex that must not match), A5 (forbidden claims only), A6 (no prohibited change)
and S2 (truth with unsafe claims only) only assert absences.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import FIXTURES, GOOD
from worldkit._cli.main import run
from worldkit.overlay.grading import absence_only, asks_content
from worldkit.overlay.load import load_overlay

MEMO = FIXTURES / "absence" / "cc1-memo.yaml"
ABSENCES = ["A3", "A4", "A5", "A6", "S2"]


def _grade(capsys: pytest.CaptureFixture[str], overlay: Path, workspace: Path) -> dict[str, str]:
    code = run(["grade", "--overlay", str(overlay), "--workspace", str(workspace), "--judge", "facts", "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    body = json.loads(out)
    return {cid: result for cid, result in body["criteria"].items()}


def _workspace(tmp_path: Path, files: dict[str, str]) -> Path:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name, text in files.items():
        (workspace / name).write_text(text, encoding="utf-8")
    return workspace


def test_absence_only_is_decided_from_the_check_types() -> None:
    overlay = load_overlay(MEMO)
    assert [c.id for c in overlay.rubric if absence_only(overlay, c)] == ABSENCES
    assert [c.id for c in overlay.rubric if asks_content(overlay, c)] == ["A1", "A2", "S1"]
    report = load_overlay(GOOD)
    assert [c.id for c in report.rubric if not asks_content(report, c)] == ["C1", "C7", "C9", "C11"]  # C1: a bare file


@pytest.mark.parametrize("memo", [
    "# CC-1\n\nI have looked into the change control and found nothing to flag.\n",
    "Lee asked where change control CC-1 stands and which sampling window it set.\n"
    "I will look into this and come back to you with the answer.\n",
])  # fmt: skip
def test_an_absence_alone_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], memo: str) -> None:
    criteria = _grade(capsys, MEMO, _workspace(tmp_path, {"memo.md": memo}))
    assert set(criteria.values()) == {"fail"}, criteria


def test_an_absence_beside_content_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memo = "Status of the change control\n\nCC-1 was approved in April 2025. Samples are now pulled within 3 days.\n"
    criteria = _grade(capsys, MEMO, _workspace(tmp_path, {"memo.md": memo}))
    assert criteria == {"A1": "pass", "A2": "pass", "A3": "pass", "A4": "pass", "A5": "pass", "A6": "pass",
                        "S1": "fail", "S2": "pass"}  # fmt: skip  # S1: it never names Lee Lead


def test_a_broken_absence_still_fails_beside_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memo = "CC-1 was approved in April 2025 by Lee Lead; the window is 3 days, down from seven days.\n"
    files = {"memo.md": memo, "draft.md": "notes\n"}
    criteria = _grade(capsys, MEMO, _workspace(tmp_path, files))
    assert [c for c, r in criteria.items() if r == "fail"] == ["A4", "A6"], criteria


def test_undecided_content_leaves_an_absence_unknown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without the event log the mail and record criteria are unknown: an absence beside them is
    neither credited on content nobody saw nor failed for content that may be there."""
    workspace = _workspace(tmp_path, {"report.md": "# Status report\n\nA short report for Lee follows.\n"})
    code = run(["grade", "--overlay", str(GOOD), "--workspace", str(workspace), "--json"])
    body = json.loads(capsys.readouterr().out)
    assert code == 0
    criteria = body["criteria"]
    assert criteria["C2"] == criteria["C3"] == "fail" and criteria["C8"] == "unknown"
    assert criteria["C1"] == criteria["C7"] == "unknown", criteria


@pytest.mark.parametrize(("agent", "expected"), [("oracle", "pass"), ("noop", "fail")])
def test_oracle_passes_everything_and_noop_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], agent: str, expected: str
) -> None:
    code = run(["run", "--overlay", str(MEMO), "--agent", agent, "--judge", "facts", "--out", str(tmp_path / "run"),
                "--json"])  # fmt: skip
    body = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(body["criteria"].values()) == {expected}, body["criteria"]


@pytest.mark.usefixtures("fixture_overlays_on_path")
def test_a_batch_judges_content_verdict_credits_the_absences(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Graded without a judge, a memo whose only content is semantic leaves the absences unknown;
    `judge-batch --write` decides that content, and the absences follow it as in a single run."""
    from tests.scripted_chat import ScriptedChat, completion, tool_call
    from worldkit.record.execution import find_records, read_record

    memo = "# CC-1\n\nLee Lead approved it in the spring, as its history shows.\n"
    script = [tool_call("c1", "write_file", {"path": "memo.md", "content": memo}), completion("Memo written.")]

    def agent(body: dict, n: int) -> tuple[int, dict]:
        return 200, script[min(sum(m["role"] == "assistant" for m in body["messages"]), len(script) - 1)]

    runs = tmp_path / "runs"
    with ScriptedChat(agent) as endpoint:
        assert run(["run", "--overlay", str(MEMO), "--agent", "openai", "--base-url", endpoint.url, "--model", "m",
                    "--out", str(runs), "--json"]) == 0  # fmt: skip
    first = json.loads(capsys.readouterr().out)["criteria"]
    assert first == {"A1": "fail", "A2": "fail", "A3": "unknown", "A4": "unknown", "A5": "unknown", "A6": "unknown",
                     "S1": "ungraded", "S2": "ungraded"}  # fmt: skip
    assert run(["judge-batch", str(runs), "--judge", "facts", "--write", "--json"]) == 0
    capsys.readouterr()
    [path] = find_records([runs])
    after = {c.id: c.result for c in read_record(path).criteria}
    assert after == {"A1": "fail", "A2": "fail", "A3": "pass", "A4": "pass", "A5": "pass", "A6": "pass",
                     "S1": "pass", "S2": "pass"}  # fmt: skip
