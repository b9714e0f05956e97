"""`worldkit judge-batch`: the semantic criteria of many finished runs judged in one blinded,
seeded shuffle, written back into the records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from tests.scripted_chat import ScriptedChat, completion
from worldkit._cli.main import run
from worldkit.record.execution import find_records, read_record

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")


def _judge(body: dict, n: int):
    prompt = body["messages"][-1]["content"]
    return 200, completion("PASS - it names Lee Lead's approval" if "Lee Lead approved" in prompt else "FAIL - no report")


def test_batch_judges_all_runs_blinded_and_writes_the_records(capsys, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    store = f"sqlite:///{tmp_path / 's.db'}"
    for agent in ("oracle", "noop", "oracle"):
        assert run(["run", "--overlay", str(GOOD), "--agent", agent, "--out", str(runs), "--store", store]) == 0
    capsys.readouterr()
    ids = {read_record(p).run_id: read_record(p).agent for p in find_records([runs])}
    with ScriptedChat(_judge) as judge:
        argv = ["judge-batch", str(runs), "--judge-base-url", judge.url, "--judge-model", "jm", "--seed", "3", "--json"]
        assert run(argv) == 0
        dry = json.loads(capsys.readouterr().out)
        assert dry["written"] == [] and dry["items"] == 2  # the two oracle runs wrote the same report
        assert run([*argv, "--write"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["order"] == dry["order"]  # the same seed judges in the same order
        prompts = [m["content"] for b in judge.bodies() for m in b["messages"]]
    assert {rid: v["S1"] for rid, v in result["runs"].items()} == {
        rid: "pass" if agent == "oracle" else "fail" for rid, agent in ids.items()
    }
    assert len(judge.requests) == 4
    for run_id, agent in ids.items():
        assert all(run_id not in p for p in prompts)
    assert all("noop" not in p and "oracle" not in p for p in prompts)
    for path in find_records([runs]):
        record = read_record(path)
        s1 = next(c for c in record.criteria if c.id == "S1")
        assert s1.graded_by == "openai:jm" and record.judge["batch"] is True
        assert s1.result == ("pass" if record.agent == "oracle" else "fail")
        # A regrade without a judge keeps the batch's semantic verdicts.
        assert run(["regrade", str(path.parent)]) == 0
    capsys.readouterr()
