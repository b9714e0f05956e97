"""`worldkit judge calibrate`: a judge over the labelled counterfactuals, figures checked by hand,
against a scripted OpenAI-compatible endpoint that answers right, wrong and malformed; the
calibration then travels into every execution record the judge grades."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from tests.scripted_chat import ScriptedChat, completion
from worldkit._cli.main import run
from worldkit.record.execution import find_records, read_record

# a run folder names its overlay by id: the fixture overlays must be on the configured path
pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")

QS = str(Path(__file__).resolve().parents[2] / "overlays" / "pharmaco_demo" / "qualification-sweep" / "overlay.yaml")


def _scripted(body: dict, n: int):
    prompt = body["messages"][-1]["content"]
    if "(not produced)" in prompt:
        return 200, completion('{"verdict": "FAIL", "reason": "no memo"}')  # right
    if "can still be used" in prompt:
        return 200, completion("PASS - the memo is fine")  # wrong: this memo keeps HPLC-07 in use
    if "HPLC-04/05/09, not HPLC-07" in prompt:
        return 200, completion("I am not sure what to say here.")  # malformed, every time
    return 200, completion("Verdict: PASS")  # right


def test_calibrate_a_scripted_judge_by_hand(capsys, tmp_path: Path) -> None:
    out = tmp_path / "calibration.json"
    with ScriptedChat(_scripted) as judge:
        argv = ["judge", "calibrate", "--judge", "openai", "--judge-base-url", judge.url, "--judge-model", "jm",
                "--judge-retries", "0", "--tasks", QS, "--out", str(out), "--bootstrap", "200", "--json"]  # fmt: skip
        assert run(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    # QS5's labelled variants: reference, nothing-done, spreadsheet-export, hand-typed and
    # hplc07-by-exclusion must pass; memo-keeps-hplc07 must fail. The judge: right on four, PASS on
    # memo-keeps-hplc07 (wrong), unreadable on hplc07-by-exclusion (undecided).
    overall = summary["overall"]
    assert overall["n"] == 6 and summary["undecided"] == 1 and summary["disagreements"] == 2
    assert overall["agreement"] == pytest.approx(4 / 6, abs=1e-6)
    # κ: pe = (4/6)(4/6) + (2/6)(1/6) = 1/2 → (2/3 − 1/2)/(1/2) = 1/3
    assert overall["kappa"] == pytest.approx(1 / 3, abs=1e-6)
    # AC1 over pass/fail/undecided: π = (2/3, 1/4, 1/12); pe = (2/9 + 3/16 + 11/144)/2 = 35/144 → 61/109
    assert overall["ac1"] == pytest.approx(61 / 109, abs=1e-6)
    assert overall["agreement_ci"] is None  # one task: no task-cluster interval
    wrong = {(d["variant"], d["got"]) for d in summary["disagreement_items"]}
    assert wrong == {("memo-keeps-hplc07", "pass"), ("hplc07-by-exclusion", "grader_error")}
    document = json.loads(out.read_text())
    assert document["judge"]["id"] == "openai:jm" and document["sha256"] == summary["sha256"]


def test_facts_calibration_is_recorded_and_refused_for_another_judge(capsys, tmp_path: Path) -> None:
    out = tmp_path / "facts.json"
    assert run(["judge", "calibrate", "--judge", "facts", "--tasks", str(GOOD), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "judge facts: 2 labelled items over 1 task(s)" in text and "calibration sha256" in text
    sha = json.loads(out.read_text())["sha256"]
    runs = tmp_path / "runs"
    store = f"sqlite:///{tmp_path / 's.db'}"
    argv = ["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(runs), "--store", store,
            "--judge", "facts", "--judge-calibration", str(out)]  # fmt: skip
    run(argv)
    capsys.readouterr()
    (path,) = find_records([runs])
    calibration = read_record(path).calibration
    assert calibration is not None and calibration["sha256"] == sha and calibration["judge"] == "facts"
    assert run(["report", str(runs)]) == 0
    assert f"Judge facts: calibration {sha[:12]}" in capsys.readouterr().out
    # judge-batch writes the calibration with the verdicts it writes
    assert run(["regrade", str(path.parent)]) == 0
    capsys.readouterr()
    rewritten = read_record(path).model_copy(update={"calibration": None})
    from worldkit.record.execution import write_record

    write_record(rewritten, path)
    assert run(["judge-batch", str(runs), "--judge", "facts", "--judge-calibration", str(out), "--write"]) == 0
    assert read_record(path).calibration["sha256"] == sha
    capsys.readouterr()
    # Another judge's calibration, or an edited one, is refused before anything runs.
    with ScriptedChat(lambda body, n: (200, completion("PASS"))) as judge:
        code = run(["grade", str(path.parent), "--force", "--judge", "openai", "--judge-base-url", judge.url,
                    "--judge-model", "jm", "--judge-calibration", str(out)])  # fmt: skip
    assert code == 2 and "configured differently" in capsys.readouterr().err
    edited = json.loads(out.read_text())
    edited["overall"]["agreement"] = 1.0 if edited["overall"]["agreement"] != 1.0 else 0.5
    out.write_text(json.dumps(edited))
    assert run(["grade", str(path.parent), "--force", "--judge", "facts", "--judge-calibration", str(out)]) == 2
    assert "do not match its sha256" in capsys.readouterr().err


@pytest.mark.slow
def test_facts_on_pharmaco_meets_the_bar(capsys) -> None:
    assert run(["judge", "calibrate", "--judge", "facts", "--world", "pharmaco_demo", "--bootstrap", "500", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    overall = summary["overall"]
    assert overall["n"] >= 150 and len(summary["per_task"]) == 8
    assert overall["agreement"] >= 0.95 and overall["kappa"] >= 0.85
    assert overall["kappa_ci"] is not None and overall["kappa_ci"][0] <= overall["kappa"] <= overall["kappa_ci"][1]


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_judge_endpoint_that_is_down_stops_the_calibration_with_exit_5(capsys, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    out = tmp_path / "calibration.json"
    argv = ["judge", "calibrate", "--judge", "openai", "--judge-base-url", url, "--judge-model", "jm",
            "--judge-retries", "0", "--tasks", QS, "--out", str(out)]  # fmt: skip
    assert run(argv) == 5
    captured = capsys.readouterr()
    (line,) = [line for line in captured.err.splitlines() if line.strip()]
    assert f"chat endpoint {url} (model jm) is unreachable" in line
    assert "calibration stopped at qualification-sweep" in line and "start the judge's endpoint" in line
    assert "Traceback" not in captured.err and not out.exists()


def test_a_judge_endpoint_that_keeps_failing_stops_the_calibration_with_exit_5(capsys) -> None:
    with ScriptedChat(lambda body, n: (503, "overloaded")) as judge:
        argv = ["judge", "calibrate", "--judge", "openai", "--judge-base-url", judge.url, "--judge-model", "jm",
                "--judge-retries", "1", "--judge-backoff", "0", "--tasks", QS]  # fmt: skip
        assert run(argv) == 5
        assert len(judge.requests) == 2  # the first item's two attempts, then nothing more
    assert "answered HTTP 503: overloaded (after 2 attempts)" in capsys.readouterr().err
