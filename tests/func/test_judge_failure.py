"""A judge that fails says so: `run`, `grade`, `regrade` and `judge-batch` exit 1 with one line
naming the endpoint and the criteria left `grader_error`, and the record says the same."""

from __future__ import annotations

import pytest

import json
import socket
from pathlib import Path

from tests.fixtures.overlays.paths import GOOD
from tests.scripted_chat import ScriptedChat, completion
from worldkit._cli.main import run
from worldkit.record.execution import find_records, read_record

# a run folder names its overlay by id: the fixture overlays must be on the configured path
pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def _down_url() -> str:
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _judge_args(url: str) -> list[str]:
    return ["--judge", "openai", "--judge-base-url", url, "--judge-model", "jm", "--judge-retries", "0",
            "--judge-backoff", "0"]  # fmt: skip


def test_run_grade_and_regrade_exit_1_naming_the_endpoint(capsys, tmp_path: Path) -> None:
    url = _down_url()
    store = f"sqlite:///{tmp_path / 's.db'}"
    code = run(["run", "--overlay", str(GOOD), "--agent", "oracle", "--out", str(tmp_path / "runs"), "--store", store,
                *_judge_args(url)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and url in lines[0] and "S1 left grader_error" in lines[0], err
    (path,) = find_records([tmp_path / "runs"])
    record = read_record(path)
    assert url in record.judge_failure and "S1 left grader_error" in record.judge_failure
    assert {c.id: c.result for c in record.criteria}["S1"] == "grader_error"

    assert run(["grade", str(path.parent), "--force", "--store", store, *_judge_args(url)]) == 1
    assert "S1 left grader_error" in capsys.readouterr().err
    assert run(["regrade", str(path.parent), *_judge_args(url)]) == 1
    assert "S1 left grader_error" in capsys.readouterr().err
    # With a judge that answers, the same run grades and exits 0.
    with ScriptedChat(lambda body, n: (200, completion("PASS - fine"))) as judge:
        assert run(["grade", str(path.parent), "--force", "--store", store, *_judge_args(judge.url)]) == 0
    assert read_record(path).judge_failure == ""


def test_judge_batch_counts_and_exit_1(capsys, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = f"sqlite:///{tmp_path / 's.db'}"
    for agent in ("oracle", "noop", "oracle"):
        assert run(["run", "--overlay", str(GOOD), "--agent", agent, "--out", str(runs), "--store", store]) == 0
    capsys.readouterr()

    def answer(body: dict, n: int):  # the noop run's item fails every time; the oracle's is judged
        prompt = body["messages"][-1]["content"]
        return (200, completion("PASS - ok")) if "Lee Lead approved" in prompt else (500, {"error": "overloaded"})

    with ScriptedChat(answer) as judge:
        argv = ["judge-batch", str(runs), *_judge_args(judge.url), "--write"]
        assert run(argv) == 1
        out, err = capsys.readouterr()
        assert "3 criterion executions in 3 run(s) (1 grader_error, 2 pass); 2 distinct item(s) sent to openai:jm" in out
        assert judge.url in err and "left grader_error" in err and err.count("error:") == 1
        assert run([*argv, "--json"]) == 1
        result = json.loads(capsys.readouterr().out)
    assert result["executions"] == 3 and result["counts"] == {"grader_error": 1, "pass": 2}
    failed = [read_record(p) for p in find_records([runs]) if read_record(p).agent == "noop"]
    assert failed and "S1 left grader_error" in failed[0].judge_failure
