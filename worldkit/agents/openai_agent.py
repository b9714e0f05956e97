"""An agent that speaks any OpenAI-compatible chat-completions API with tool calling.

MCP tools are bridged as functions (name, description, JSON schema). Budgets: a step limit (model
turns) and a token limit (sum of the endpoint's reported usage). Endpoint and model come from
options or the agent's environment (WORLDKIT_OPENAI_BASE_URL, WORLDKIT_OPENAI_MODEL,
WORLDKIT_OPENAI_API_KEY or OPENAI_API_KEY) — never from the judge's. The agent is identified as
`openai:MODEL`, so two models behind one endpoint are never merged in a report.

A tool call whose arguments are not valid JSON still goes to the server (as
`{"_invalid_json_arguments": raw}`, which every tool refuses), so it is logged like any other call.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

from worldkit.agents.endpoint import agent_endpoint
from worldkit.agents.registry import AgentResult, AgentTask, register_agent
from worldkit.agents.session import ToolSession
from worldkit.canon import sha256_bytes
from worldkit.chat import ChatEndpoint

SYSTEM_PROMPT = (
    "You are an employee working in your company's systems through the tools you are given. "
    "Do the task in the request. Read the sources you rely on. Put the deliverable where the "
    "request says, using the tools; your final message is not graded."
)
INVALID_JSON_KEY = "_invalid_json_arguments"


class OpenAIAgent:
    name = "openai"

    def __init__(self, endpoint: ChatEndpoint, *, max_steps: int = 40, max_tokens: int = 200_000) -> None:
        self.endpoint = endpoint
        self.max_steps = max_steps
        self.max_tokens = max_tokens

    @property
    def id(self) -> str:
        return f"openai:{self.endpoint.model}"

    def describe(self) -> dict[str, Any]:
        """The agent's configuration as an execution record carries it."""
        return {
            "id": self.id,
            "kind": "openai",
            **self.endpoint.describe(),
            "max_steps": self.max_steps,
            "max_tokens": self.max_tokens,
            "system_prompt_sha256": sha256_bytes(SYSTEM_PROMPT.encode("utf-8")),
        }

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        listing = await tools.list_tools()
        functions = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
            for t in listing
        ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": task.request},
        ]
        result = AgentResult()
        while True:
            if result.steps >= self.max_steps:
                result.stopped_by = "step_budget"
                return result
            if result.tokens >= self.max_tokens:
                result.stopped_by = "token_budget"
                return result
            payload = {"model": self.endpoint.model, "messages": messages, "tools": functions}
            reply = await anyio.to_thread.run_sync(self.endpoint.complete, payload)
            result.steps += 1
            result.tokens += int((reply.get("usage") or {}).get("total_tokens", 0) or 0)
            message = reply["choices"][0]["message"]
            messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
            calls = message.get("tool_calls") or []
            if not calls:
                result.final_message = message.get("content") or ""
                return result
            for call in calls:
                fn = call.get("function") or {}
                raw = fn.get("arguments") or "{}"
                try:
                    arguments = json.loads(raw) if isinstance(raw, str) else raw
                    malformed = not isinstance(arguments, dict)
                except json.JSONDecodeError:
                    malformed = True
                if malformed:
                    # The server refuses it (no tool takes this argument) and logs it like any call.
                    outcome = await tools.call(str(fn.get("name") or ""), {INVALID_JSON_KEY: str(raw)})
                    content = f"error: arguments are not a valid JSON object: {raw!r}"
                else:
                    outcome = await tools.call(str(fn.get("name") or ""), arguments)
                    content = ("error: " if outcome.is_error else "") + outcome.text
                messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": content})


@register_agent("openai", arg="model")
def make_openai(options: dict[str, Any]) -> Any:
    """`openai[:MODEL]`; on an InfoOrgBench packet (option benchmark=infoorg) the ReAct-FC harness."""
    if options.get("benchmark") == "infoorg":
        from worldkit.agents.infoorg import make_react_fc

        return make_react_fc(options)
    return OpenAIAgent(
        agent_endpoint(options),
        max_steps=int(options.get("max_steps") or 40),
        max_tokens=int(options.get("max_tokens") or 200_000),
    )
