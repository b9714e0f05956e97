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
    (row,) = report["tables"]["table3"]
    assert (row["model"], row["harness"]) == ("scripted-1", "ReAct-FC")
    cell = row["families"]["thread"]
    assert cell["score"] == 100.0 and cell["tasks"] == 2
    assert row["avg"] is None and row["missing"] == ["recap", "design"]  # Avg needs all three families
    assert report["tables"]["table13"]["thread"]["categories"] == {"none": 2, "parent": 0, "leaf": 0, "both": 0}
    assert report["tables"]["table13"]["thread"]["parent"]["agreed"] == 1.0

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
    assert "Table 3:" in out and "Table 12:" in out and "Table 13:" in out
    lines = out.splitlines()
    noop = next(line for line in lines if line.startswith("—") and " noop " in line)
    assert noop.split()[2:5] == ["0.0", "0.0", "0.0"]  # Trip., Pen., Score on Thread
    assert any(line.startswith("Silhouette ") for line in lines)  # the baseline goes to Table 12
    assert any(line.startswith("thread  parent issue / subtask") and line.split()[-4:] != ["0", "0", "0", "0"]
               for line in lines)


def _two_turns(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
    """List the records, then answer; usage split into prompt and completion tokens."""
    if not any(m["role"] == "tool" for m in body["messages"]):
        reply = {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}}
    else:
        reply = {"choices": [{"message": {"role": "assistant", "content": '{"assignments": []}'}, "finish_reason": "stop"}],
                 "usage": {"prompt_tokens": 2500, "completion_tokens": 45, "total_tokens": 2545}}
    return 200, reply


def test_react_fc_records_usage_and_transcript_and_sends_table8(capsys, packets: Path, tmp_path: Path) -> None:
    with ScriptedChat(_two_turns) as chat:
        code = run(["infoorg", "run", "--packet", str(packets / "thread-001"), "--agent", "openai:scripted-1",
                    "--base-url", chat.url, "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}",
                    "--run-id", "meta-1", "--json"])
        requests = [r["body"] for r in chat.requests]
        out, err = capsys.readouterr()
        code2 = run(["infoorg", "run", "--packet", str(packets / "thread-001"), "--agent", "openai:scripted-1",
                     "--base-url", chat.url, "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}",
                     "--run-id", "meta-2", "--reasoning-effort", "provider-default", "--max-output-tokens", "0"])
        later = [r["body"] for r in chat.requests[len(requests):]]
    assert (code, code2) == (0, 0), err + capsys.readouterr().err
    result = json.loads(out)
    # Table 8 by default: reasoning effort medium, 128,000 output tokens per response.
    assert all(r["reasoning_effort"] == "medium" and r["max_completion_tokens"] == 128_000 for r in requests)
    assert all("reasoning_effort" not in r and "max_completion_tokens" not in r for r in later)
    usage = result["usage"]
    assert (usage["tokens_in"], usage["tokens_out"], usage["steps"], usage["tool_calls"]) == (3700, 75, 2, 1)
    assert usage["stop_reason"] == "done" and usage["transcript"] == "transcript.jsonl"
    harness = result["harness"]
    assert (harness["harness"], harness["model"], harness["reasoning_effort"], harness["max_output_tokens"]) == (
        "react-fc", "scripted-1", "medium", 128_000)
    assert harness["harness_version"].startswith("worldkit ")
    transcript = tmp_path / "runs" / "meta-1" / "transcript.jsonl"
    assert hashlib.sha256(transcript.read_bytes()).hexdigest() == usage["transcript_sha256"]
    entries = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert [e["kind"] for e in entries] == ["settings", "message", "message", "response", "message", "response"]
    assert entries[0]["settings"] == {"max_completion_tokens": 128_000, "reasoning_effort": "medium"}
    assert entries[4]["message"]["role"] == "tool" and '"entries"' in entries[4]["message"]["content"]
    assert entries[5]["usage"]["completion_tokens"] == 45 and entries[5]["finish_reason"] == "stop"


def test_an_unreachable_endpoint_ends_the_run_failed_with_a_result(capsys, packets: Path, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = run(["infoorg", "run", "--packet", str(packets / "thread-002"), "--agent", "openai:m",
                "--base-url", f"http://127.0.0.1:{port}/v1", "--out", str(tmp_path / "runs"),
                "--store", f"sqlite:///{tmp_path / 's.db'}", "--run-id", "down-1"])
    out, err = capsys.readouterr()
    assert code == 1, err
    assert "internal error" not in err and "ExceptionGroup" not in err
    assert err.startswith("error: 1 of 1 run(s) failed; first: run down-1:") and "result.json" in err
    assert "status FAILED:" in out
    result = json.loads((tmp_path / "runs" / "down-1" / "result.json").read_bytes())
    assert result["status"] == "failed" and "127.0.0.1" in result["error"]
    assert result["usage"]["stop_reason"] == "error" and result["score"]["valid"]  # the untouched inbox is scored
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as opened:
        assert [e.tool for e in read_events(opened, "down-1")] == ["worldkit:run-failed"]


def test_run_refuses_a_packet_that_does_not_match_the_frozen_manifest(capsys, tmp_path: Path) -> None:
    import shutil

    export = write_jira_export(tmp_path / "export")
    changed = tmp_path / "changed"
    shutil.copytree(export, changed)
    out = tmp_path / "p"
    assert run(["infoorg", "build", "--family", "thread", "--source", str(export), "--out", str(out / "ok"),
                "--tasks", "1", "--manifest", str(THREAD_FIXTURE_MANIFEST)]) == 0
    # A packet built from another source (its own manifest written elsewhere) is self-consistent.
    first = (out / "ok" / "thread-001" / "candidate" / "inbox" / "F001.txt").read_text(encoding="utf-8")
    word = max(first.split(), key=len).encode()
    data = next(p for p in sorted(changed.rglob("*.json")) if word in p.read_bytes())
    data.write_bytes(data.read_bytes().replace(word, b"X" + word[1:], 1))
    assert run(["infoorg", "build", "--family", "thread", "--source", str(changed), "--out", str(out / "other"),
                "--tasks", "1", "--manifest", str(tmp_path / "own.json"), "--write-manifest"]) == 0
    capsys.readouterr()
    base = ["--agent", "noop", "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}",
            "--manifest", str(THREAD_FIXTURE_MANIFEST)]
    code = run(["infoorg", "run", "--packet", str(out / "other" / "thread-001"), *base])
    _, err = capsys.readouterr()
    assert code == 1 and "differs from the frozen manifest" in err and "thread-001" in err
    assert not (tmp_path / "runs").exists()
    assert run(["infoorg", "run", "--packet", str(out / "ok" / "thread-001"), *base, "--json"]) == 0
    assert json.loads(capsys.readouterr()[0])["manifest_status"] == "match"
