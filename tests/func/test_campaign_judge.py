"""A campaign design names its judge and the judge's calibration: the calibration is read, checked
against the judge and pinned in the plan when the campaign is planned, recorded with every run's
verdicts, and shown by the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from worldkit._cli.main import run
from worldkit.record.execution import find_records, read_record

# a run folder names its overlay by id: the fixture overlays must be on the configured path
pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def _design(folder: Path, judge: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    design = folder / "design.yaml"
    design.write_text(f"tasks: [{GOOD}]\nagents: [oracle]\nconditions: {{full: 1}}\nseed: 3\n{judge}")
    return design


@pytest.fixture
def calibration(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    out = tmp_path / "design" / "facts.json"
    out.parent.mkdir()
    assert run(["judge", "calibrate", "--judge", "facts", "--tasks", str(GOOD), "--out", str(out), "--bootstrap", "50"]) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def test_the_design_judge_s_calibration_is_pinned_recorded_and_reported(tmp_path: Path, capsys, calibration: dict) -> None:
    sha = calibration["sha256"]
    design = _design(tmp_path / "design", "judge: {kind: facts, calibration: facts.json}\n")  # beside the design
    assert run(["campaign", "plan", str(design), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    pinned = plan["judge_calibration"]
    assert (pinned["sha256"], pinned["judge"], pinned["judge_sha256"]) == (sha, "facts", calibration["judge_sha256"])
    assert pinned["overall"] == calibration["overall"] and plan["design"]["judge"]["calibration"] == "facts.json"
    assert run(["campaign", "plan", str(design)]) == 0
    assert f"judge facts: calibration {sha[:12]}, agreement" in capsys.readouterr().out

    out = tmp_path / "camp"
    assert run(["campaign", "run", str(design), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    (path,) = find_records([out / "runs"])
    record = read_record(path)
    assert record.judge["kind"] == "facts" and record.calibration["sha256"] == sha
    assert record.calibration["overall"] == calibration["overall"]
    assert run(["report", str(out), "--replicates", "0"]) == 0
    assert f"Judge facts: calibration {sha[:12]} on 1 task(s)" in capsys.readouterr().out


def test_a_design_without_a_calibration_plans_as_before(tmp_path: Path, capsys) -> None:
    """No `calibration` key and no `judge_calibration` in the plan: its bytes and campaign id stay those
    of designs written before the field existed."""
    design = _design(tmp_path, "judge: {kind: facts}\n")
    assert run(["campaign", "plan", str(design), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert "judge_calibration" not in plan and plan["design"]["judge"] == {"kind": "facts", "model": None,
                                                                           "base_url": None, "options": {}}


@pytest.mark.parametrize(("judge", "message"), [
    ("judge: {kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m, calibration: facts.json}",
     "field judge.calibration: calibration {path} was made with judge 'facts' configured differently from 'openai:m'"),
    ("judge: {kind: facts, calibration: missing.json}",
     "field judge.calibration: no calibration file at {folder}/missing.json; give the file `worldkit judge calibrate --out` wrote"),
    ("judge: {calibration: facts.json}",
     "field judge: judge.calibration needs a judge: set judge.kind (facts, openai, …) to the judge it calibrates"),
    ("judge: {kind: facts, calibration: edited.json}",
     "field judge.calibration: {folder}/edited.json: its contents do not match its sha256 (edited after calibration)"),
])  # fmt: skip
def test_a_calibration_that_does_not_fit_the_judge_is_refused_at_plan_time(
    tmp_path: Path, capsys, calibration: dict, judge: str, message: str,
) -> None:  # fmt: skip
    folder = tmp_path / "design"
    edited = {**calibration, "overall": {**calibration["overall"], "n": calibration["overall"]["n"] + 1}}
    (folder / "edited.json").write_text(json.dumps(edited))
    design = _design(folder, judge + "\n")
    assert run(["campaign", "plan", str(design)]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert f"file {design}" in err
    assert message.format(path=folder / "facts.json", folder=folder) in err
    assert "Traceback" not in err


def test_a_host_whose_judge_differs_from_the_pinned_calibration_runs_nothing(tmp_path: Path, calibration: dict) -> None:
    """The plan pins the calibration; a host that builds the judge otherwise (here: the pinned summary
    names another judge configuration) fails the run before the agent starts, naming the fix."""
    from worldkit.campaign.executor import Campaign, execute_run, load_plan
    from worldkit.errors import UsageError

    design = _design(tmp_path / "design", "judge: {kind: facts, calibration: facts.json}\n")
    plan, resolved = load_plan(design)
    other = plan.model_copy(update={"judge_calibration": {**plan.judge_calibration, "judge_sha256": "0" * 64}})
    out = tmp_path / "camp"
    campaign = Campaign(plan=other, paths={r.planned.id: str(r.path) for r in resolved}, out=out,
                        store_url=f"sqlite:///{tmp_path / 's.db'}")  # fmt: skip
    with pytest.raises(UsageError, match=r"pinned in the plan\) was made with judge 'facts' configured differently"):
        execute_run(campaign, other.runs[0], other.run_id(other.runs[0], 1))
    assert not (out / ".inflight").exists() or not any((out / ".inflight").iterdir())
