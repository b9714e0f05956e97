"""The ReAct-FC harness against a scripted OpenAI-compatible endpoint, and packet campaigns'
Table 3 / Table 13 output."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jira_export import write_jira_export
from tests.scripted_chat import ScriptedChat
from worldkit._cli.main import run
from worldkit.infoorg.instructions import render_tool_instruction
from worldkit.infoorg.reference import load_reference
from worldkit.store import Store, read_events

REPO = Path(__file__).resolve().parents[2]
THREAD_FIXTURE_MANIFEST = REPO / "manifests" / "infoorg" / "thread-fixture.json"
TOOLS = {"list_files", "read_file", "search_files", "move_files", "check_inventory"}

pytestmark = pytest.mark.usefixtures("restore_check_registry")  # loading a packet registers a check


@pytest.fixture(scope="module")
def packets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    export = write_jira_export(tmp_path_factory.mktemp("export") / "export")
    out = tmp_path_factory.mktemp("built") / "packets"
    assert run(["infoorg", "build", "--family", "thread", "--source", str(export), "--out", str(out),
                "--tasks", "3", "--manifest", str(THREAD_FIXTURE_MANIFEST)]) == 0
    return out


class ScriptedModel:
    """Plays a model: list, read one record (to tell the packet), 201 calls in one response, the
    reference's moves, then a JSON declaration that misstates the layout."""

    def __init__(self, packets: list[Path]) -> None:
        self.references = [load_reference(p) for p in packets]
        self.requests: list[dict[str, Any]] = []

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(body)
        messages = body["messages"]
        turn = sum(m["role"] == "assistant" for m in messages)
        tools = [m for m in messages if m["role"] == "tool"]
        if turn == 0:
            return self._calls(turn, [("list_files", {})])
        if turn == 1:
            ids = [e["id"] for e in json.loads(tools[-1]["content"])["entries"]]
            return self._calls(turn, [("read_file", {"id": ids[0]})] + [("check_inventory", {})] * 200)
        if turn == 2:
            ids = [e["id"] for e in json.loads(tools[0]["content"])["entries"]]
            text = json.loads(tools[1]["content"])["text"]
            digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
            reference = next(r for r in self.references if r.records[ids[0]].sha256 == digest)
            groups: dict[tuple[str, ...], list[str]] = {}
            for record, path in reference.paths().items():
                groups.setdefault(path, []).append(record)
            return self._calls(turn, [("move_files", {"ids": g, "destination": list(p)}) for p, g in sorted(groups.items())])
        declaration = {"assignments": [{"id": "F000", "path": ["inbox", "F000.txt"]}]}
        return {"choices": [{"message": {"role": "assistant", "content": json.dumps(declaration)}}],
                "usage": {"total_tokens": 7}}

    @staticmethod
    def _calls(turn: int, calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        tool_calls = [{"id": f"call-{turn}-{i}", "type": "function",
                       "function": {"name": name, "arguments": json.dumps(args)}} for i, (name, args) in enumerate(calls)]
        message = {"role": "assistant", "content": None, "reasoning_content": f"thinking {turn}", "tool_calls": tool_calls}
        return {"choices": [{"message": message}], "usage": {"total_tokens": 100}}


@pytest.fixture
def endpoint(packets: Path):
    model = ScriptedModel(sorted(p for p in packets.iterdir() if (p / "overlay.json").is_file()))
    with ScriptedChat(lambda body, n: (200, model.reply(body))) as chat:
        yield model, chat.url


def test_react_fc_runs_packets_and_prints_table3_and_table13(capsys, packets: Path, endpoint, tmp_path: Path) -> None:
    model, url = endpoint
    store = f"sqlite:///{tmp_path / 's.db'}"
    chosen = [packets / "thread-001", packets / "thread-002"]
    code = run(["infoorg", "run", "--packet", str(chosen[0]), "--packet", str(chosen[1]), "--agent", "openai:scripted-1",
                "--base-url", url, "--out", str(tmp_path / "runs"), "--store", store, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    report = json.loads(out)
    # Files on disk are scored (the reference's moves: S = 1), not the misstated declaration.
    for result in report["runs"]:
        assert result["agent"] == "openai:scripted-1" and result["score"]["valid"] and result["score"]["S"] == 1.0
        assert json.loads(result["agent_message"])["assignments"][0]["path"][0] == "inbox"
        assert result["replay_matches"]
    cell = report["table3"]["openai:scripted-1"]
    assert cell["thread"]["score"] == 100.0 and cell["thread"]["tasks"] == 2 and cell["avg"]["score"] == 100.0
    assert report["table13"]["thread"]["categories"] == {"none": 2, "parent": 0, "leaf": 0, "both": 0}
    assert report["table13"]["thread"]["parent"]["agreed"] == 1.0

    # The harness: Figure 11 as system message, the packet's request as task, the five tools.
    episodes = [r for r in model.requests if len(r["messages"]) == 2]
    assert len(episodes) == 2 and len(model.requests) == 8
    for first, path in zip(episodes, chosen):
        assert first["messages"][0] == {"role": "system", "content": render_tool_instruction()}
        assert first["messages"][1] == {"role": "user", "content": (path / "candidate" / "request.md").read_text()}
        assert {t["function"]["name"] for t in first["tools"]} == TOOLS and first["model"] == "scripted-1"
    # Full history: each request resends the previous one, the reply (reasoning included) and every result.
    for before, after in zip(model.requests[:3], model.requests[1:4]):
        grown = after["messages"][len(before["messages"]):]
        assert after["messages"][: len(before["messages"])] == before["messages"]
        assert grown[0]["role"] == "assistant" and grown[0]["reasoning_content"].startswith("thinking")
        assert [m["tool_call_id"] for m in grown[1:]] == [c["id"] for c in grown[0]["tool_calls"]]
    refused = model.requests[2]["messages"][-1]
    assert refused["content"] == "error: not executed; at most 200 tool calls in one response"
    with Store.open(store) as opened:
        events = list(read_events(opened, report["runs"][0]["run_id"]))
    assert sum(e.tool == "check_inventory" for e in events) == 199  # the 201st call was not executed


def test_campaign_over_packets_prints_the_tables(capsys, packets: Path, tmp_path: Path) -> None:
    design = tmp_path / "design.yaml"
    design.write_text(f"tasks: [{packets / 'thread-001'}, {packets / 'thread-003'}]\n"
                      "agents: [noop, baseline:silhouette]\nconditions: {full: 1}\nseed: 3\n")
    code = run(["campaign", "run", str(design), "--out", str(tmp_path / "c"), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("4 planned, 4 done, 0 failed")
    assert "Table 3 layout" in out and "Table 13 layout" in out
    lines = out.splitlines()
    noop = next(line for line in lines if line.startswith("noop "))
    assert noop.split("|")[1].split() == ["0.0", "0.0", "0.0"]
    assert any(line.startswith("baseline:silhouette ") for line in lines)
    assert any(line.startswith("thread   parent issue / subtask") and line.split()[-4:] != ["0", "0", "0", "0"]
               for line in lines)
