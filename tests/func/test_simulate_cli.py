"""`worldkit simulate ledgers` and `worldkit power` through the CLI: output, progress-free capture, errors."""

from __future__ import annotations

import json

import pytest

from worldkit._cli.main import run


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_ledgers_prints_the_calibration_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "simulate", "ledgers", "--tasks", "3", "--repeats", "1", "--effect", "0",
                       "--access-effect", "10", "--sims", "2", "--replicates", "20", "--seed", "1")  # fmt: skip
    assert code == 0
    assert out.startswith("3 tasks (31 criteria) × 3 agents × 1 full + 1 per packet × 2 packets = 27 runs; 2 ledgers")
    assert "Planted-effect calibration" in out
    rows = {tuple(line.split()[:2]): line.split() for line in out.splitlines()
            if line.strip().startswith(("pass ", "access "))}
    assert set(rows) == {("pass", "paper"), ("pass", "mancl"), ("access", "paper"), ("access", "mancl")}
    assert rows[("pass", "paper")][2] == "+0.0" and rows[("access", "mancl")][2] == "+10.0"


def test_simulate_ledgers_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "simulate", "ledgers", "--tasks", "2", "--repeats", "1", "--effect", "5",
                       "--access-effect", "10", "--sims", "2", "--replicates", "10", "--json")  # fmt: skip
    assert code == 0
    report = json.loads(out)
    assert report["sims"] == 2 and report["passed"]["paper"]["truth"] == pytest.approx(0.05)
    assert report["intervals"] == ["paper", "mancl"]


def test_power_with_the_small_sample_interval(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "power", "--design", "paper", "--tasks", "3", "--effect", "10", "--access-effect", "20",
                       "--repeats", "1,2", "--sims", "3", "--interval", "mancl", "--json")  # fmt: skip
    assert code == 0
    report = json.loads(out)
    assert report["interval"] == "mancl"
    assert [row["repeats"] for row in report["rows"]] == [1, 2]
    assert report["rows"][0]["passed"]["with_interval"] == 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["power", "--design", "paper", "--effect", "5", "--repeats", "two"], "--repeats 'two': give whole numbers"),
        (["power", "--effect", "5"], "give either --ledgers PILOT or --design D"),
        (["power", "--design", "paper"], "--design needs --effect"),
        (["power", "--design", "nowhere.yaml", "--effect", "5"], "no such file"),
        (["simulate", "ledgers", "--effect", "0", "--access-effect", "0", "--tasks", "1"], "--tasks must be at least 2"),
        (["simulate", "ledgers", "--effect", "0", "--access-effect", "99.9", "--sims", "2"], "cannot be planted"),
        (["simulate", "ledgers", "--effect", "0", "--access-effect", "0", "--interval", "wild"], "choose among paper, mancl"),
        (["power", "--design", "paper", "--effect", "5", "--interval", "paper,mancl"], "power takes one method"),
    ],
)
def test_bad_input_is_a_usage_error(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = cli(capsys, *argv)
    assert code == 2
    assert message in err
    assert "Traceback" not in err


def test_report_shows_the_small_sample_interval_only_when_asked(capsys: pytest.CaptureFixture[str], shared_data) -> None:  # noqa: ANN001
    ledgers = str(shared_data / "workworld")
    code, out, _ = cli(capsys, "report", "--ledgers", ledgers, "--replicates", "0", "--json")
    assert code == 0 and json.loads(out)["small_sample"] == []
    code, out, _ = cli(capsys, "report", "--ledgers", ledgers, "--replicates", "0", "--interval", "mancl", "--json")
    assert code == 0
    found = {e["outcome"]: e for e in json.loads(out)["small_sample"]}
    assert 1 < found["pass"]["df"] < 7  # Bell–McCaffrey: 8 tasks of 5 to 14 criteria give fewer than G − 1
    assert found["pass"]["lower"] < 0 < found["pass"]["difference"] < found["pass"]["upper"]
    assert found["access"]["lower"] > 0
