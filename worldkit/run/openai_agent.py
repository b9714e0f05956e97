"""An agent that speaks any OpenAI-compatible chat-completions API with tool calling.

MCP tools are bridged as functions (name, description, JSON schema). Budgets: a step limit (model
turns) and a token limit (sum of the endpoint's reported usage). Endpoint and model come from
options or the environment (WORLDKIT_OPENAI_BASE_URL, WORLDKIT_OPENAI_MODEL, OPENAI_API_KEY).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

import anyio

from worldkit.errors import UsageError, WorldkitError
from worldkit.run.agents import AgentResult, AgentTask, register_agent
from worldkit.run.session import ToolSession

SYSTEM_PROMPT = (
    "You are an employee working in your company's systems through the tools you are given. "
    "Do the task in the request. Read the sources you rely on. Put the deliverable where the "
    "request says, using the tools; your final message is not graded."
)


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str = ""
    timeout_s: float = 120.0

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Endpoint:
        base = options.get("base_url") or os.environ.get("WORLDKIT_OPENAI_BASE_URL", "")
        model = options.get("model") or os.environ.get("WORLDKIT_OPENAI_MODEL", "")
        if not base or not model:
            raise UsageError(
                "the openai agent needs an endpoint and a model: pass --base-url and --model "
                "or set WORLDKIT_OPENAI_BASE_URL and WORLDKIT_OPENAI_MODEL"
            )
        key = options.get("api_key") or os.environ.get("OPENAI_API_KEY", "")
        return cls(base_url=base.rstrip("/"), model=model, api_key=key)

    def complete(self, payload: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions",
            data=json.dumps(payload).encode("utf-8"),
            headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {self.api_key}"} if self.api_key else {})},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            body = error.read().decode("utf-8", "replace")[:300]
            raise WorldkitError(f"chat endpoint {self.base_url} answered HTTP {error.code}: {body}") from None
        except (urllib.error.URLError, TimeoutError) as error:
            raise WorldkitError(f"chat endpoint {self.base_url} unreachable ({error}); check --base-url") from None


class OpenAIAgent:
    name = "openai"

    def __init__(self, endpoint: Endpoint, *, max_steps: int = 40, max_tokens: int = 200_000) -> None:
        self.endpoint = endpoint
        self.max_steps = max_steps
        self.max_tokens = max_tokens

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
            result.tokens += int((reply.get("usage") or {}).get("total_tokens", 0))
            message = reply["choices"][0]["message"]
            messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
            calls = message.get("tool_calls") or []
            if not calls:
                result.final_message = message.get("content") or ""
                return result
            for call in calls:
                fn = call["function"]
                try:
                    arguments = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    content = f"error: arguments are not valid JSON: {fn.get('arguments')!r}"
                else:
                    outcome = await tools.call(fn["name"], arguments if isinstance(arguments, dict) else {})
                    content = ("error: " if outcome.is_error else "") + outcome.text
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})


@register_agent("openai", arg="model")
def make_openai(options: dict[str, Any]) -> Any:
    """`openai[:MODEL]`; on an InfoOrgBench packet (option benchmark=infoorg) the ReAct-FC harness."""
    if options.get("benchmark") == "infoorg":
        from worldkit.run.infoorg_agent import make_react_fc

        return make_react_fc(options)
    return OpenAIAgent(
        Endpoint.from_options(options),
        max_steps=int(options.get("max_steps", 40)),
        max_tokens=int(options.get("max_tokens", 200_000)),
    )
