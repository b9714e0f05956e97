"""Agents: noop, oracle and the OpenAI-compatible agent against a fake endpoint the test starts."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.scripted_chat import ScriptedChat
from worldkit.agents.registry import AgentTask, make_agent
from worldkit.agents.session import ToolInfo, ToolOutcome
from worldkit.errors import UsageError


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


def _replaying(replies: list[dict[str, Any]]) -> ScriptedChat:
    """An endpoint that answers the n-th request with `replies[n]`, and the last reply from then on."""
    return ScriptedChat(lambda body, n: (200, replies[min(n, len(replies) - 1)]))


def _tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}}],
        "usage": {"total_tokens": 100},
    }


def test_openai_agent_drives_tools_until_done() -> None:
    with _replaying([
        _tool_call("c1", "read_file", {"path": "SOP.md"}),
        _tool_call("c2", "read_file", {"path": "missing.md"}),
        _tool_call("c3", "write_file", {"path": "answer.md", "content": "done"}),
        {"choices": [{"message": {"role": "assistant", "content": "All done."}}], "usage": {"total_tokens": 50}},
    ]) as chat:
        agent = make_agent("openai", {"base_url": chat.url, "model": "fake-model"})
        tools = FakeTools()
        result = anyio.run(agent.run, AgentTask(request="Write answer.md", seat="S1"), tools)
    assert result.final_message == "All done." and result.steps == 4 and result.tokens == 350
    assert [c[0] for c in tools.calls] == ["read_file", "read_file", "write_file"]
    assert tools.files == {"answer.md": "done"}
    first = chat.bodies()[0]
    assert first["model"] == "fake-model"
    assert {t["function"]["name"] for t in first["tools"]} == {"read_file", "write_file"}
    # tool results (including the refusal) went back to the model
    last = chat.bodies()[-1]["messages"]
    tool_messages = [m for m in last if m["role"] == "tool"]
    assert tool_messages[1]["content"].startswith("error: no such file")


def test_openai_agent_stops_at_step_budget() -> None:
    with _replaying([_tool_call("c", "read_file", {"path": "SOP.md"})]) as chat:
        agent = make_agent("openai", {"base_url": chat.url, "model": "m", "max_steps": 3})
        result = anyio.run(agent.run, AgentTask(request="loop", seat="S1"), FakeTools())
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
    with _replaying([
        {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "bad", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": "}}]}}]},
        {"choices": [{"message": {"role": "assistant", "content": "gave up"}}]},
    ]) as chat:  # fmt: skip
        agent = make_agent("openai", {"base_url": chat.url, "model": "m"})
        tools = FakeTools()
        anyio.run(agent.run, AgentTask(request="x", seat="S1"), tools)
    assert tools.calls == [("read_file", {"_invalid_json_arguments": '{"path": '})]
    told = [m for m in chat.bodies()[-1]["messages"] if m["role"] == "tool"]
    assert told[0]["content"].startswith("error: arguments are not a valid JSON object")
    assert agent.describe()["id"] == "openai:m" and "api_key" not in agent.describe()
