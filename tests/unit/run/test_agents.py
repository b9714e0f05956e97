"""Agents: noop, oracle and the OpenAI-compatible agent against a fake endpoint the test starts."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import anyio
import pytest

from worldkit.errors import UsageError
from worldkit.run.agents import AgentTask, make_agent
from worldkit.run.session import ToolInfo, ToolOutcome


class FakeTools:
    """A ToolSession that records calls; `write_file` stores content, everything else echoes."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.files: dict[str, str] = {}

    async def list_tools(self) -> list[ToolInfo]:
        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return [ToolInfo("read_file", "Read a file.", schema), ToolInfo("write_file", "Write a file.", schema)]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        self.calls.append((name, arguments))
        if name == "write_file":
            self.files[arguments["path"]] = arguments["content"]
            return ToolOutcome(False, "written", {"path": arguments["path"]})
        if name == "read_file" and arguments.get("path") == "missing.md":
            return ToolOutcome(True, "no such file: missing.md", None)
        return ToolOutcome(False, f"contents of {arguments.get('path')}", None)


class _Script:
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = replies
        self.requests: list[dict[str, Any]] = []


def _serve(script: _Script) -> tuple[HTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server API
            assert self.path == "/v1/chat/completions"
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append(body)
            reply = script.replies[min(len(script.requests) - 1, len(script.replies) - 1)]
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/v1"


def _tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}}],
        "usage": {"total_tokens": 100},
    }


def test_openai_agent_drives_tools_until_done() -> None:
    script = _Script([
        _tool_call("c1", "read_file", {"path": "SOP.md"}),
        _tool_call("c2", "read_file", {"path": "missing.md"}),
        _tool_call("c3", "write_file", {"path": "answer.md", "content": "done"}),
        {"choices": [{"message": {"role": "assistant", "content": "All done."}}], "usage": {"total_tokens": 50}},
    ])
    server, url = _serve(script)
    try:
        agent = make_agent("openai", {"base_url": url, "model": "fake-model"})
        tools = FakeTools()
        result = anyio.run(agent.run, AgentTask(request="Write answer.md", seat="S1"), tools)
    finally:
        server.shutdown()
    assert result.final_message == "All done." and result.steps == 4 and result.tokens == 350
    assert [c[0] for c in tools.calls] == ["read_file", "read_file", "write_file"]
    assert tools.files == {"answer.md": "done"}
    first = script.requests[0]
    assert first["model"] == "fake-model"
    assert {t["function"]["name"] for t in first["tools"]} == {"read_file", "write_file"}
    # tool results (including the refusal) went back to the model
    last = script.requests[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert tool_messages[1]["content"].startswith("error: no such file")


def test_openai_agent_stops_at_step_budget() -> None:
    script = _Script([_tool_call("c", "read_file", {"path": "SOP.md"})])
    server, url = _serve(script)
    try:
        agent = make_agent("openai", {"base_url": url, "model": "m", "max_steps": 3})
        result = anyio.run(agent.run, AgentTask(request="loop", seat="S1"), FakeTools())
    finally:
        server.shutdown()
    assert result.stopped_by == "step_budget" and result.steps == 3


def test_openai_agent_needs_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORLDKIT_OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("WORLDKIT_OPENAI_MODEL", raising=False)
    with pytest.raises(UsageError, match="needs an endpoint and a model"):
        make_agent("openai", {})


def test_noop_and_oracle() -> None:
    tools = FakeTools()
    assert anyio.run(make_agent("noop").run, AgentTask(request="x", seat="S1"), tools).steps == 0
    assert tools.calls == []
    actions = ({"tool": "read_file", "args": {"path": "a.md"}}, {"tool": "write_file", "args": {"path": "o.md", "content": "x"}})
    result = anyio.run(make_agent("oracle").run, AgentTask(request="x", seat="S1", reference_actions=actions), tools)
    assert result.steps == 2 and tools.files == {"o.md": "x"}


def test_unknown_agent_lists_choices() -> None:
    with pytest.raises(UsageError, match=r"available agents: baseline:fixed, .*noop, openai\[:MODEL\], oracle"):
        make_agent("gpt-9")


def test_malformed_arguments_still_reach_the_tools_and_the_model_is_told() -> None:
    script = _Script([
        {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "bad", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}]}}]},
        {"choices": [{"message": {"role": "assistant", "content": "gave up"}}]},
    ])  # fmt: skip
    server, url = _serve(script)
    try:
        agent = make_agent("openai", {"base_url": url, "model": "m"})
        tools = FakeTools()
        anyio.run(agent.run, AgentTask(request="x", seat="S1"), tools)
    finally:
        server.shutdown()
    assert tools.calls == [("read_file", {"_invalid_json_arguments": '{"path": '})]
    told = [m for m in script.requests[-1]["messages"] if m["role"] == "tool"]
    assert told[0]["content"].startswith("error: arguments are not a valid JSON object")
    assert agent.describe()["id"] == "openai:m" and "api_key" not in agent.describe()
