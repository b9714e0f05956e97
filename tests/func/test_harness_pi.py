"""The real Pi coding agent (`pi:MODEL`) on a packet and on a WorkWorlds task, offline: a scripted
OpenAI-compatible endpoint on 127.0.0.1 plays the model; the run's tools reach Pi through its
MCP extension (the bridge); its own tools are hidden; every call is logged by the run's own
server; the run records the harness's name and version, usage and transcript, and Table 8's
settings reach the endpoint.

Skips when Pi is missing (`bash tests/harness/install.sh` installs it), except under CI=true,
where that is a failure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jira_export import write_jira_export
from tests.scripted_chat import ScriptedChat
from worldkit._cli.main import run
from worldkit.errors import UsageError
from worldkit.infoorg.reference import load_reference
from worldkit.store import Store, read_events

REPO = Path(__file__).resolve().parents[2]
THREAD_FIXTURE_MANIFEST = REPO / "manifests" / "infoorg" / "thread-fixture.json"
VERSION = "pi-coding-agent 0.73.1"

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("restore_check_registry")]


@pytest.fixture(scope="module")
def pi() -> Path:
    from worldkit.agents.harness.pi import pi_binary

    try:
        return pi_binary()
    except UsageError as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the Pi harness is missing: {missing.message}")
        pytest.skip(missing.message)


@pytest.fixture(scope="module")
def packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pi")
    assert run(["infoorg", "build", "--family", "thread", "--source", str(write_jira_export(root / "export")),
                "--out", str(root / "packets"), "--tasks", "1", "--manifest", str(THREAD_FIXTURE_MANIFEST)]) == 0
    return root / "packets" / "thread-001"


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}}  # fmt: skip


def _calls(calls: list[tuple[str, dict[str, Any]]], tag: int) -> dict[str, Any]:
    tool_calls = [{"id": f"call_{tag}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                  for i, (name, args) in enumerate(calls)]  # fmt: skip
    return _completion({"role": "assistant", "content": None, "tool_calls": tool_calls}, "tool_calls")


def test_pi_organizes_a_packet_through_the_logged_tools(pi: Path, packet: Path, tmp_path: Path, capsys) -> None:
    groups: dict[tuple[str, ...], list[str]] = {}
    for record, path in load_reference(packet).paths().items():
        groups.setdefault(path, []).append(record)

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        names = {t["function"]["name"] for t in body.get("tools", [])}
        assert names == {"organizer_list_files", "organizer_read_file", "organizer_search_files",
                         "organizer_move_files", "organizer_check_inventory"}  # only the five record operations
        done = sum(m["role"] == "tool" for m in body["messages"])
        if done == 0:
            return 200, _calls([("organizer_list_files", {})], 0)
        if done == 1:
            return 200, _calls([("organizer_move_files", {"ids": ids, "destination": list(path)})
                                for path, ids in sorted(groups.items())], 1)  # fmt: skip
        return 200, _completion({"role": "assistant", "content": '{"assignments": []}'}, "stop")

    store = f"sqlite:///{tmp_path / 's.db'}"
    with ScriptedChat(answer) as chat:
        code = run(["infoorg", "run", "--packet", str(packet), "--agent", "pi:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", store, "--run-id", "pi-1", "--json"])
        bodies = [r["body"] for r in chat.requests]
    out, err = capsys.readouterr()
    assert code == 0, err + out
    result = json.loads(out)
    assert result["status"] == "completed" and result["agent"] == "pi:scripted"
    assert result["harness"]["harness"] == "pi" and result["harness"]["harness_version"] == VERSION
    assert result["score"]["valid"] and result["score"]["S"] == 1.0 and result["replay_matches"]
    usage = result["usage"]
    assert usage["steps"] == len(bodies) == 3 and usage["tokens_in"] == 3 * 900 and usage["tokens_out"] == 3 * 40
    assert usage["tool_calls"] == 1 + len(groups) and usage["transcript"] == "transcript.jsonl"
    # Table 8's effort; its 128,000-token limit as Pi sends it (Pi caps a response at 32,000)
    assert all(b["reasoning_effort"] == "medium" and b["max_completion_tokens"] == 32_000 for b in bodies)
    assert result["harness"]["max_output_tokens"] == 32_000
    assert "bounded record workspace" in json.dumps(bodies[0]["messages"][0])  # Figure 11 in the system prompt
    with Store.open(store) as opened:
        tools = [e.tool for e in read_events(opened, "pi-1")]
    assert tools == ["list_files"] + ["move_files"] * len(groups)  # every call went through the run's server
    transcript = (tmp_path / "runs" / "pi-1" / "transcript.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["message"]["role"] == "toolResult" for line in transcript) == 1 + len(groups)


def test_pi_works_a_workworlds_task_through_the_seat_tools(pi: Path, tmp_path: Path, capsys) -> None:
    from tests.fixtures.overlays.paths import GOOD

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        names = {t["function"]["name"] for t in body.get("tools", [])}
        assert "seat_list_files" in names and "seat_write_file" in names and "bash" not in names
        if not any(m["role"] == "tool" for m in body["messages"]):
            return 200, _calls([("seat_list_files", {})], 0)
        return 200, _completion({"role": "assistant", "content": "Listed the files."}, "stop")

    store = f"sqlite:///{tmp_path / 's.db'}"
    with ScriptedChat(answer) as chat:
        code = run(["run", "--overlay", str(GOOD), "--agent", "pi:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", store])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (record_file,) = (tmp_path / "runs").glob("*/execution-record.json")
    record = json.loads(record_file.read_bytes())
    assert VERSION in json.dumps(record)  # the harness and its version are in the record
    with Store.open(store) as opened:
        assert [e.tool for e in read_events(opened, record["run_id"])] == ["list_files"]


def test_a_campaign_of_two_harnesses_two_models_three_families_prints_every_table(
    pi: Path, shared_data: Path, tmp_path: Path, capsys
) -> None:
    from tests.func.scripted_organizer import Models
    from tests.func.test_infoorg_report import build_three_families

    packets = build_three_families(tmp_path / "packets", shared_data)
    capsys.readouterr()
    models = Models(list(packets.values()))
    with ScriptedChat(models.reply) as chat:
        agents = "".join(f"  - {{agent: '{h}:{m}', options: {{base_url: '{chat.url}'}}}}\n"
                         for h in ("openai", "pi") for m in ("model-a", "model-b"))
        design = tmp_path / "design.yaml"
        design.write_text("tasks: [" + ", ".join(str(p) for p in packets.values()) + "]\n"
                          f"agents:\n{agents}conditions: {{full: 1}}\nseed: 2\n")
        code = run(["campaign", "run", str(design), "--out", str(tmp_path / "c"), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    assert out.startswith("12 planned, 12 done, 0 failed")
    assert run(["report", str(tmp_path / "c")]) == 0
    text = capsys.readouterr()[0]
    for title in ("Table 3:", "Table 4:", "Table 10:", "Table 11:", "Table 12:", "Table 13:", "Table 16:", "Figure 2 data:"):
        assert title in text, title
    assert run(["report", str(tmp_path / "c"), "--json"]) == 0
    tables = json.loads(capsys.readouterr()[0])
    rows = {(r["model"], r["harness"]): r["avg"]["score"] for r in tables["table3"]}
    assert set(rows) == {("model-a", "ReAct-FC"), ("model-a", "Pi"), ("model-b", "ReAct-FC"), ("model-b", "Pi")}
    assert rows[("model-a", "ReAct-FC")] == rows[("model-a", "Pi")] == 100.0
    assert 0 < rows[("model-b", "Pi")] < 100 and rows[("model-b", "Pi")] == pytest.approx(rows[("model-b", "ReAct-FC")])
    assert [(m["model"], m["configs"]) for m in tables["table11"]["models"]] == [("model-a", 2), ("model-b", 2)]
    assert set(tables["table16"]["models"]) == {"model-a", "model-b"} and not tables["table16"]["unrecorded"]


def test_an_endpoint_that_refuses_fails_the_run_with_a_result(pi: Path, packet: Path, tmp_path: Path, capsys) -> None:
    with ScriptedChat(lambda body, n: (400, {"error": {"message": "no such model: scripted"}})) as chat:
        code = run(["infoorg", "run", "--packet", str(packet), "--agent", "pi:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}", "--run-id", "pi-2",
                    "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    result = json.loads((tmp_path / "runs" / "pi-2" / "result.json").read_bytes())
    assert code == 1 and result["status"] == "failed", err + out
    assert "Pi harness" in result["error"] and "no such model" in result["error"]
