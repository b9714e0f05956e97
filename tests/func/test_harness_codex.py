"""The real Codex CLI (`codex:MODEL`) on a packet and on a WorkWorlds task, offline: a scripted
Responses API endpoint on 127.0.0.1 plays the model; the run's tools reach Codex over MCP (the
bridge); every call is logged by the run's own server; Codex's own shell is confined to its
scratch folder; the run records the harness's name and version, usage and transcript, and
Table 8's reasoning effort reaches the endpoint.

Skips when the CLI is missing (`bash tests/harness/install.sh` installs it), except under
CI=true, where that is a failure.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jira_export import write_jira_export
from tests.scripted_chat import ScriptedChat, function_call, output_text, response, tool_names
from worldkit._cli.main import run
from worldkit.errors import UsageError
from worldkit.infoorg.reference import load_reference
from worldkit.store import Store, read_events

REPO = Path(__file__).resolve().parents[2]
THREAD_FIXTURE_MANIFEST = REPO / "manifests" / "infoorg" / "thread-fixture.json"
VERSION = "codex-cli 0.162.1"
ORGANIZER = "mcp__organizer"  # Codex offers each MCP server's tools as one Responses API namespace

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("restore_check_registry")]


@pytest.fixture(scope="module")
def codex() -> Path:
    from worldkit.agents.harness.codex import codex_binary

    try:
        return codex_binary()
    except UsageError as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the Codex CLI is missing: {missing.message}")
        pytest.skip(missing.message)


@pytest.fixture
def home_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "codex-runs"
    monkeypatch.setenv("WORLDKIT_CODEX_HOME_ROOT", str(root))
    return root


@pytest.fixture(scope="module")
def packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("codex")
    assert run(["infoorg", "build", "--family", "thread", "--source", str(write_jira_export(root / "export")),
                "--out", str(root / "packets"), "--tasks", "1", "--manifest", str(THREAD_FIXTURE_MANIFEST)]) == 0
    return root / "packets" / "thread-001"


def _outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in body["input"] if item.get("type") == "function_call_output"]


def test_codex_organizes_a_packet_through_the_logged_tools(codex: Path, home_root: Path, packet: Path, tmp_path: Path,
                                                         capsys) -> None:  # fmt: skip
    groups: dict[tuple[str, ...], list[str]] = {}
    for record, path in load_reference(packet).paths().items():
        groups.setdefault(path, []).append(record)
    escape = tmp_path / "escaped.txt"

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        names = tool_names(body)
        assert {"mcp__organizer.list_files", "mcp__organizer.move_files", "mcp__organizer.check_inventory"} <= names
        assert "exec_command" in names and "web_search" not in names
        done = len(_outputs(body))
        if done == 0:  # Codex's own shell: it writes in its scratch folder, never beside it
            return 200, response(function_call("call_0", "exec_command", {"cmd": f"touch notes.txt; touch {escape}"}),
                                 tokens_in=900, tokens_out=40, response_id=f"r{n}")  # fmt: skip
        if done == 1:
            return 200, response(function_call("call_1", "list_files", {}, ORGANIZER), tokens_in=900, tokens_out=40,
                                 response_id=f"r{n}")  # fmt: skip
        if done == 2:
            calls = [function_call(f"call_2_{i}", "move_files", {"ids": ids, "destination": list(path)}, ORGANIZER)
                     for i, (path, ids) in enumerate(sorted(groups.items()))]  # fmt: skip
            return 200, response(*calls, tokens_in=900, tokens_out=40, response_id=f"r{n}")
        return 200, response(output_text('{"assignments": []}'), tokens_in=900, tokens_out=40, response_id=f"r{n}")

    store = f"sqlite:///{tmp_path / 's.db'}"
    with ScriptedChat(responses=answer) as chat:
        code = run(["infoorg", "run", "--packet", str(packet), "--agent", "codex:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", store, "--run-id", "cx-1", "--json"])
        bodies = [r["body"] for r in chat.requests]
    out, err = capsys.readouterr()
    assert code == 0, err + out
    result = json.loads(out)
    assert result["status"] == "completed" and result["agent"] == "codex:scripted"
    assert result["harness"]["harness"] == "codex" and result["harness"]["harness_version"] == VERSION
    assert result["score"]["valid"] and result["score"]["S"] == 1.0 and result["replay_matches"]
    usage = result["usage"]
    assert usage["steps"] == len(bodies) == 4 and usage["tokens_in"] == 4 * 900 and usage["tokens_out"] == 4 * 40
    assert usage["tool_calls"] == 1 + len(groups) and usage["transcript"] == "transcript.jsonl"
    assert all(b["reasoning"]["effort"] == "medium" and b["stream"] for b in bodies)
    assert "bounded record workspace" in json.dumps(bodies[0]["input"])  # Figure 11 as developer instructions
    shell = _outputs(bodies[1])[0]["output"]
    assert not escape.exists(), shell  # the sandbox kept the write inside
    if not escape.is_relative_to("/dev"):  # under /dev (a RAM-disk TMPDIR) the sandbox's own /dev takes the write
        assert "Read-only file system" in shell
    with Store.open(store) as opened:
        tools = [e.tool for e in read_events(opened, "cx-1")]
    assert tools == ["list_files"] + ["move_files"] * len(groups)  # every record call went through the run's server
    transcript = [json.loads(line) for line in (tmp_path / "runs" / "cx-1" / "transcript.jsonl").read_text().splitlines()]
    assert any(e.get("entry", {}).get("type") == "session_meta" for e in transcript)
    assert not any(home_root.iterdir())  # the per-run CODEX_HOME and scratch folder are gone


def test_codex_works_a_workworlds_task_through_the_seat_tools(codex: Path, home_root: Path, tmp_path: Path,
                                                             capsys) -> None:  # fmt: skip
    from tests.fixtures.overlays.paths import GOOD

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        names = tool_names(body)
        assert "mcp__seat.list_files" in names and "mcp__seat.write_file" in names
        if not _outputs(body):
            return 200, response(function_call("call_0", "list_files", {}, "mcp__seat"), response_id=f"r{n}")
        return 200, response(output_text("Listed the files."), response_id=f"r{n}")

    store = f"sqlite:///{tmp_path / 's.db'}"
    with ScriptedChat(responses=answer) as chat:
        code = run(["run", "--overlay", str(GOOD), "--agent", "codex:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", store])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    (record_file,) = (tmp_path / "runs").glob("*/execution-record.json")
    record = json.loads(record_file.read_bytes())
    assert VERSION in json.dumps(record)  # the harness and its version are in the record
    with Store.open(store) as opened:
        assert [e.tool for e in read_events(opened, record["run_id"])] == ["list_files"]


def test_an_endpoint_without_the_responses_api_fails_the_run_with_a_result(codex: Path, home_root: Path, packet: Path,
                                                                           tmp_path: Path, capsys) -> None:  # fmt: skip
    from tests.scripted_chat import completion

    with ScriptedChat(lambda body, n: (200, completion("chat only"))) as chat:  # serves chat completions only
        code = run(["infoorg", "run", "--packet", str(packet), "--agent", "codex:scripted", "--base-url", chat.url,
                    "--out", str(tmp_path / "runs"), "--store", f"sqlite:///{tmp_path / 's.db'}", "--run-id", "cx-2",
                    "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    result = json.loads((tmp_path / "runs" / "cx-2" / "result.json").read_bytes())
    assert code == 1 and result["status"] == "failed", err + out
    assert "Codex CLI" in result["error"] and "404" in result["error"]


def _as_responses(models: Any) -> Any:
    """The scripted organizing models (chat completions) answering Codex's Responses requests."""

    def answer(body: dict[str, Any], n: int) -> tuple[int, dict[str, Any]]:
        tools = [{"type": "function", "function": {"name": name}} for name in sorted(tool_names(body))]
        # Codex shows the model an MCP result as "Wall time: … Output:" and then the tool's text
        messages = [{"role": "tool", "content": item["output"].split("Output:\n", 1)[1]} for item in _outputs(body)]
        status, reply = models.reply({"model": body["model"], "tools": tools, "messages": messages}, n)
        message, usage = reply["choices"][0]["message"], reply["usage"]
        items = []
        for i, call in enumerate(message.get("tool_calls") or []):
            namespace, _, name = call["function"]["name"].rpartition(".")
            items.append(function_call(f"call_{n}_{i}", name, json.loads(call["function"]["arguments"]), namespace))
        if message.get("content"):
            items.append(output_text(message["content"]))
        return status, response(*items, tokens_in=usage["prompt_tokens"], tokens_out=usage["completion_tokens"],
                                response_id=f"r{n}")  # fmt: skip

    return answer


def test_a_campaign_of_two_harnesses_two_models_three_families_prints_every_table(
    codex: Path, home_root: Path, shared_data: Path, tmp_path: Path, capsys
) -> None:
    from tests.func.scripted_organizer import Models
    from tests.func.test_infoorg_report import build_three_families

    packets = build_three_families(tmp_path / "packets", shared_data)
    capsys.readouterr()
    models = Models(list(packets.values()))
    with ScriptedChat(models.reply, responses=_as_responses(models)) as chat:
        agents = "".join(f"  - {{agent: '{h}:{m}', options: {{base_url: '{chat.url}'}}}}\n"
                         for h in ("openai", "codex") for m in ("model-a", "model-b"))
        design = tmp_path / "design.yaml"
        design.write_text("tasks: [" + ", ".join(str(p) for p in packets.values()) + "]\n"
                          f"agents:\n{agents}conditions: {{full: 1}}\nseed: 2\n")
        code = run(["campaign", "run", str(design), "--out", str(tmp_path / "c"), "--workers", "2"])
    out, err = capsys.readouterr()
    assert code == 0, err + out
    assert out.startswith("12 planned, 12 done, 0 failed"), out
    assert run(["report", str(tmp_path / "c")]) == 0
    text = capsys.readouterr()[0]
    for title in ("Table 3:", "Table 4:", "Table 10:", "Table 11:", "Table 12:", "Table 13:", "Table 16:", "Figure 2 data:"):
        assert title in text, title
    assert run(["report", str(tmp_path / "c"), "--json"]) == 0
    tables = json.loads(capsys.readouterr()[0])
    rows = {(r["model"], r["harness"]): r["avg"]["score"] for r in tables["table3"]}
    assert set(rows) == {("model-a", "ReAct-FC"), ("model-a", "Codex"), ("model-b", "ReAct-FC"), ("model-b", "Codex")}
    assert rows[("model-a", "ReAct-FC")] == rows[("model-a", "Codex")] == 100.0
    assert 0 < rows[("model-b", "Codex")] < 100 and rows[("model-b", "Codex")] == pytest.approx(rows[("model-b", "ReAct-FC")])
    assert set(tables["table16"]["models"]) == {"model-a", "model-b"} and not tables["table16"]["unrecorded"]
