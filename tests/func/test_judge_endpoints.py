"""The `openai` agent and the `openai` judge against two scripted local endpoints (different ports).

On qualification-sweep: the agent writes the sweep table and the memo through the seat's tools;
the judge is sent the memo (and nothing naming the run, agent or condition), its plain
`PASS - …` reply is parsed, `regrade --judge` reproduces the verdicts, and a judge answering 500 is
retried and recorded as `grader_error` (exit 1, naming the endpoint). Endpoint down or answering 500: exit 5, a failed run on
disk and in the store, no traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.overlays.paths import GOOD
from tests.scripted_chat import ScriptedChat, completion, free_port, tool_call
from worldkit._cli.main import run
from worldkit.overlay import load_overlay
from worldkit.record.execution import read_record
from worldkit.store import Store, list_runs, read_events

pytestmark = pytest.mark.usefixtures("fixture_overlays_on_path")

SWEEP = Path(__file__).resolve().parents[2] / "overlays" / "pharmaco_demo" / "qualification-sweep" / "overlay.yaml"
AGENT_MODEL = "scripted-agent-7"
JUDGE_MODEL = "scripted-judge-3"


def _writes(overlay) -> list[dict]:
    return [a.args for a in overlay.reference.actions if a.tool == "write_file"]


def _agent_script(overlay):
    writes = _writes(overlay)
    script = [tool_call("c0", "read_file", "{not json")]  # malformed arguments: logged like any call
    script += [tool_call(f"c{i + 1}", "write_file", {"path": w["path"], "content": w["content"]}) for i, w in enumerate(writes)]
    script.append(tool_call("cr", "read_file", {"path": "workspace/qualification-sweep.md"}))  # re-reads its own memo
    script.append(completion("Sweep written."))
    # The step is read from the conversation, so each run replays the script from its start.
    return lambda body, n: (200, script[min(sum(m["role"] == "assistant" for m in body["messages"]), len(script) - 1)])


def _run(capsys, argv: list[str], code: int = 0) -> dict:
    assert run(argv) == code, capsys.readouterr().err
    captured = capsys.readouterr()
    return json.loads(captured.out) if code == 0 and captured.out.strip().startswith("{") else {"err": captured.err}


@pytest.fixture(scope="module")
def sweep():
    return load_overlay(SWEEP)


def test_agent_and_judge_on_their_own_endpoints(capsys, tmp_path: Path, sweep) -> None:
    memo = next(w["content"] for w in _writes(sweep) if w["path"].endswith(".md"))
    verdicts = {"mode": "pass"}

    def judge_answer(body: dict, n: int):
        if verdicts["mode"] == "500":
            return 500, {"error": {"message": "judge overloaded"}}
        return 200, completion("PASS - the memo asks for the SC-03 deviation and keeps HPLC-07 out of use.")

    store = f"sqlite:///{tmp_path / 'store.db'}"
    with ScriptedChat(_agent_script(sweep)) as agent, ScriptedChat(judge_answer) as judge:
        assert agent.url != judge.url
        judge_args = ["--judge", "openai", "--judge-base-url", judge.url, "--judge-model", JUDGE_MODEL,
                      "--judge-retries", "2", "--judge-backoff", "0"]  # fmt: skip
        summary = _run(capsys, ["run", "--overlay", str(SWEEP), "--agent", "openai", "--base-url", agent.url,
                                "--model", AGENT_MODEL, "--out", str(tmp_path / "runs"), "--store", store,
                                *judge_args, "--json"])  # fmt: skip
        assert summary["agent"] == f"openai:{AGENT_MODEL}"
        assert summary["deterministic_passed"] == summary["deterministic_total"]
        assert summary["criteria"]["QS5"] == "pass" and summary["graded_by"]["QS5"] == f"openai:{JUDGE_MODEL}"
        # The agent's endpoint got only agent calls; the judge's only the judge's.
        assert all(b["model"] == AGENT_MODEL and "tools" in b for b in agent.bodies())
        assert [b["model"] for b in judge.bodies()] == [JUDGE_MODEL]
        request = judge.bodies()[0]
        assert request["temperature"] == 0 and request["response_format"]["type"] == "json_schema"
        prompt = "\n".join(m["content"] for m in request["messages"])
        assert memo.strip().splitlines()[2] in prompt  # the memo is seen
        assert "SC-03,overdue" in prompt  # and the table
        for secret in (summary["run_id"], AGENT_MODEL, "curator", "condition", "oracle"):
            assert secret not in prompt  # blinded

        run_dir = Path(summary["record"]).parent
        record = read_record(run_dir / "execution-record.json")
        assert record.judge["model"] == JUDGE_MODEL and record.judge["prompt_sha256"] and record.judge["max_retries"] == 2
        assert "api_key" not in json.dumps(record.judge)
        assert record.agent_config["id"] == f"openai:{AGENT_MODEL}" and record.agent_config["base_url"] == agent.url
        assert record.agent_config["system_prompt_sha256"] and record.agent_config["max_steps"] == 40
        assert set(record.deliverables) == {"qualification-sweep.csv", "qualification-sweep.md"}
        assert all(record.deliverables.values())
        assert len(record.inputs["revision_digest"]) == 64
        # The malformed call is in the log like any other; re-reading the own memo changes no label.
        malformed = [e for e in record.trajectory if e["arguments"].get("_invalid_json_arguments") == "{not json"]
        assert len(malformed) == 1 and malformed[0]["outcome"] == "error"
        assert "unknown" not in {c.access for c in record.criteria}

        # regrade --judge reproduces the verdicts (a new judge request, same answer).
        again = _run(capsys, ["regrade", str(run_dir), *judge_args, "--json"])
        assert again["same_as_record"] is True and again["criteria"]["QS5"] == "pass"
        assert len(judge.bodies()) == 2

        # A judge answering 500 is retried, then the verdict is recorded as grader_error and the
        # command exits 1 naming the endpoint (the JSON result is still printed, the error on stderr).
        verdicts["mode"] = "500"
        assert run(["grade", str(run_dir), "--force", *judge_args, "--json"]) == 1
        captured = capsys.readouterr()
        failing = json.loads(captured.out)
        assert judge.url in captured.err and "QS5 left grader_error" in captured.err
        assert failing["criteria"]["QS5"] == "grader_error" and "QS5 left grader_error" in failing["judge_failure"]
        assert failing["deterministic_passed"] == failing["deterministic_total"]
        assert len(judge.bodies()) == 2 + 3  # first try + 2 retries
        outcome = next(c for c in read_record(Path(failing["record"])).criteria if c.id == "QS5")
        assert "HTTP 500" in outcome.detail and "after 3 attempts" in outcome.detail
        assert outcome.graded_by == f"openai:{JUDGE_MODEL}"

    # The offline facts judge grades the same folder, and its verdicts say so.
    facts = _run(capsys, ["grade", str(run_dir), "--force", "--judge", "facts", "--json"])
    assert facts["criteria"]["QS5"] == "pass" and facts["graded_by"]["QS5"] == "facts"
    assert facts["judge"]["kind"] == "facts" and facts["access"] == summary["access"]


def _failed(capsys, tmp_path: Path, base_url: str) -> tuple[str, Path]:
    store = f"sqlite:///{tmp_path / 'store.db'}"
    argv = ["run", "--overlay", str(GOOD), "--agent", "openai", "--base-url", base_url, "--model", AGENT_MODEL,
            "--out", str(tmp_path / "runs"), "--store", store, "--retries", "1", "--backoff", "0"]  # fmt: skip
    assert run(argv) == 5
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("error: run ")
    (record_path,) = (tmp_path / "runs").rglob("execution-record.json")
    record = read_record(record_path)
    assert record.status == "failed" and record.criteria == [] and record.rows() == []
    with Store.open(store) as opened:
        (only,) = list_runs(opened)
        events = list(read_events(opened, only.run_id))
    assert only.run_id == record.run_id and events[-1].tool == "worldkit:run-failed" and events[-1].outcome == "error"
    assert record.digests["event_log_head"] == events[-1].hash
    return err, record_path


def test_endpoint_down_fails_the_run_cleanly(capsys, tmp_path: Path) -> None:
    err, _ = _failed(capsys, tmp_path, f"http://127.0.0.1:{free_port()}/v1")
    assert "unreachable" in err and "marked failed" in err


def test_endpoint_answering_500_fails_the_run_cleanly(capsys, tmp_path: Path) -> None:
    with ScriptedChat(lambda body, n: (500, {"error": "boom"})) as broken:
        err, _ = _failed(capsys, tmp_path, broken.url)
        assert len(broken.requests) == 2  # retried once
    assert "HTTP 500" in err and "after 2 attempts" in err


def test_the_judge_never_takes_the_agents_endpoint(capsys, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("WORLDKIT_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("WORLDKIT_JUDGE_MODEL", raising=False)
    monkeypatch.setenv("WORLDKIT_OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("WORLDKIT_OPENAI_MODEL", AGENT_MODEL)
    argv = ["run", "--overlay", str(GOOD), "--agent", "noop", "--out", str(tmp_path), "--judge", "openai",
            "--base-url", "http://127.0.0.1:9/v1", "--model", AGENT_MODEL]  # fmt: skip
    assert run(argv) == 2
    assert "--judge-base-url and --judge-model" in capsys.readouterr().err


def test_two_models_behind_one_endpoint_are_two_agents(capsys, tmp_path: Path) -> None:
    from worldkit.record.execution import load_rows

    store = f"sqlite:///{tmp_path / 'store.db'}"
    with ScriptedChat(lambda body, n: (200, completion("Nothing to do."))) as endpoint:
        for model in ("model-a", "model-b"):
            argv = ["run", "--overlay", str(GOOD), "--agent", "openai", "--base-url", endpoint.url, "--model", model,
                    "--out", str(tmp_path / "runs"), "--store", store]  # fmt: skip
            assert run(argv) == 0
    # A failed run beside them gives no rows.
    _failed(capsys, tmp_path / "down", f"http://127.0.0.1:{free_port()}/v1")
    capsys.readouterr()
    rows = load_rows([tmp_path / "runs", tmp_path / "down" / "runs"])
    assert {row.agent for row in rows} == {"openai:model-a", "openai:model-b"}
