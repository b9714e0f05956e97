"""InfoOrgBench agents: the paper's ReAct-FC harness over a chat endpoint, and the text-only
baselines (`worldkit.infoorg.baselines`) as agents working through the organizer tools.

ReAct-FC (Appendices B.3, C.2, C.4, C.5): the model works through the organizer's five tools as
native function calls; the system message is Figure 11's bounded tool instruction, the user
message the packet's request; the complete episode history — every tool result and any
reasoning items the endpoint returns — is resent on every turn; at most 200 tool calls of one
response are executed. The episode ends when a response calls no tool (or a configured limit is
reached; the paper sets none). The final message — the JSON declaration the request asks for —
is captured and checked for form only: the files on disk are what gets scored.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import anyio

from worldkit.agents.endpoint import agent_endpoint
from worldkit.agents.registry import (
    Agent,
    AgentResult,
    AgentTask,
    NoopAgent,
    register_agent,
)
from worldkit.agents.session import ToolSession
from worldkit.canon import canonical_json
from worldkit.chat import ChatEndpoint
from worldkit.errors import CheckFailed, UsageError
from worldkit.infoorg.baselines import (
    BASELINES,
    RANDOM_SEEDS,
    STOP_WORDS,
    BaselineName,
    StopWords,
    destinations,
    trees_from_texts,
)

__all__ = [
    "MAX_CALLS_PER_RESPONSE",
    "MAX_OUTPUT_TOKENS",
    "REASONING_EFFORT",
    "BaselineAgent",
    "ReactFCAgent",
    "packet_agent",
    "parse_declaration",
]

MAX_CALLS_PER_RESPONSE = 200
"""Figure 11: "Issue at most 200 tool calls in one response"."""
REQUEST_TIMEOUT_S = 2400.0
"""Table 8: request timeout."""
REASONING_EFFORT = "medium"
"""Table 8: reasoning effort (sent as `reasoning_effort`; `provider-default` sends none, as the
paper did for Claude Haiku 4.5)."""
MAX_OUTPUT_TOKENS = 128_000
"""Table 8: output tokens per response (sent as `max_completion_tokens`; 0 sends none)."""
PROVIDER_DEFAULT = "provider-default"
_KEEP_OUT = {"refusal", "annotations", "audio"}


def parse_declaration(text: str) -> dict[str, Any] | None:
    """The `{"assignments": [...]}` object in a final message (bare, or in a code fence), or None."""
    candidates = [m.group(1) for m in re.finditer(r"```(?:json)?\s*(\{.*?\})\s*```", text, re.S)]
    start = text.find("{")
    if start >= 0:
        candidates.append(text[start : text.rfind("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and isinstance(value.get("assignments"), list):
            return value
    return None


class ReactFCAgent:
    """The reference function-calling loop of InfoOrgBench on an OpenAI-compatible endpoint."""

    def __init__(
        self, endpoint: ChatEndpoint, *, max_steps: int | None = None, max_tokens: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        self.endpoint = endpoint
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.extra = dict(extra or {})
        self.name = self.id = f"openai:{endpoint.model}"
        self.partial = AgentResult()
        """The episode so far: what a run keeps (tokens, steps, transcript) when the episode fails."""

    def describe(self) -> dict[str, Any]:
        """The harness's configuration as an execution record carries it."""
        from worldkit.canon import sha256_bytes
        from worldkit.infoorg.instructions import render_tool_instruction

        return {
            "id": self.id, "kind": "openai", "harness": "react-fc", "harness_version": _harness_version(),
            "model": self.endpoint.model, **self.endpoint.describe(),
            "reasoning_effort": self.extra.get("reasoning_effort", PROVIDER_DEFAULT),
            "max_output_tokens": self.extra.get("max_completion_tokens"),
            "max_steps": self.max_steps, "max_tokens": self.max_tokens, "extra": self.extra,
            "max_calls_per_response": MAX_CALLS_PER_RESPONSE,
            "system_prompt_sha256": sha256_bytes(render_tool_instruction(MAX_CALLS_PER_RESPONSE).encode("utf-8")),
        }  # fmt: skip

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        from worldkit.infoorg.instructions import render_tool_instruction

        functions = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
            for t in await tools.list_tools()
        ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": render_tool_instruction(MAX_CALLS_PER_RESPONSE)},
            {"role": "user", "content": task.request},
        ]
        result = self.partial = AgentResult()
        result.transcript += [
            {"kind": "settings", "model": self.endpoint.model, "settings": dict(sorted(self.extra.items())),
             "tools": [f["function"]["name"] for f in functions]},
            *({"kind": "message", "message": m} for m in messages),
        ]  # fmt: skip
        while True:
            if self.max_steps is not None and result.steps >= self.max_steps:
                result.stopped_by = "step_budget"
                break
            if self.max_tokens is not None and result.tokens >= self.max_tokens:
                result.stopped_by = "token_budget"
                break
            payload = {**self.extra, "model": self.endpoint.model, "messages": messages, "tools": functions}
            reply = await anyio.to_thread.run_sync(self.endpoint.complete, payload)
            result.steps += 1
            usage = reply.get("usage") or {}
            tokens_in, tokens_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            result.tokens_in += tokens_in
            result.tokens_out += tokens_out
            result.tokens += int(usage.get("total_tokens") or (tokens_in + tokens_out))
            choice = reply["choices"][0]
            message = choice["message"]
            # Full history: the assistant turn as returned, reasoning items included.
            messages.append({k: v for k, v in message.items() if v is not None and k not in _KEEP_OUT})
            result.transcript.append({"kind": "response", "step": result.steps, "message": messages[-1],
                                      "usage": usage, "finish_reason": choice.get("finish_reason")})  # fmt: skip
            calls = message.get("tool_calls") or []
            if not calls:
                result.final_message = message.get("content") or ""
                break
            for index, call in enumerate(calls):
                fn = call.get("function") or {}
                if index >= MAX_CALLS_PER_RESPONSE:
                    content = f"error: not executed; at most {MAX_CALLS_PER_RESPONSE} tool calls in one response"
                else:
                    try:
                        arguments = json.loads(fn.get("arguments") or "{}")
                    except json.JSONDecodeError:
                        content = f"error: arguments are not valid JSON: {fn.get('arguments')!r}"
                    else:
                        outcome = await tools.call(fn.get("name", ""), arguments if isinstance(arguments, dict) else {})
                        content = ("error: " if outcome.is_error else "") + outcome.text
                messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": content})
                result.transcript.append({"kind": "message", "message": messages[-1]})
        declaration = parse_declaration(result.final_message)
        result.notes.append(
            f"declaration: {len(declaration['assignments'])} assignments (not scored; the files on disk are)"
            if declaration is not None else "no JSON declaration in the final message (the files on disk are scored)"
        )  # fmt: skip
        return result


def _optional_int(options: dict[str, Any], key: str) -> int | None:
    value = options.get(key)
    return None if value in (None, "", 0) else int(value)


def _harness_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"worldkit {version('worldkit')}"
    except PackageNotFoundError:  # pragma: no cover - a source checkout that is not installed
        return "worldkit (not installed)"


def table8_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The request settings of Table 8 as sent to the endpoint: `reasoning_effort` (default
    medium; `provider-default` sends none) and `max_completion_tokens` (default 128,000; 0 sends
    none), plus `temperature` when given."""
    effort = options.get("reasoning_effort") or REASONING_EFFORT
    if effort not in ("minimal", "low", "medium", "high", "xhigh", PROVIDER_DEFAULT):
        raise UsageError(f"reasoning effort {effort!r}: use minimal, low, medium (Table 8), high, xhigh or "
                         f"{PROVIDER_DEFAULT}")
    limit = options.get("max_output_tokens", options.get("max_completion_tokens"))
    limit = MAX_OUTPUT_TOKENS if limit in (None, "") else int(limit)
    if limit < 0:
        raise UsageError(f"output-token limit {limit}: use a positive number (Table 8: {MAX_OUTPUT_TOKENS:,}) or 0 for none")
    extra: dict[str, Any] = {}
    if effort != PROVIDER_DEFAULT:
        extra["reasoning_effort"] = effort
    if limit:
        extra["max_completion_tokens"] = limit
    if options.get("temperature") is not None:
        extra["temperature"] = options["temperature"]
    return extra


def make_react_fc(options: dict[str, Any]) -> ReactFCAgent:
    endpoint = dataclasses.replace(agent_endpoint(options), timeout_s=float(options.get("timeout_s", REQUEST_TIMEOUT_S)))
    extra = table8_settings(options)
    # The paper sets no turn or token limit for ReAct-FC; options max_steps / max_tokens add one.
    return ReactFCAgent(endpoint, max_steps=_optional_int(options, "max_steps"),
                        max_tokens=_optional_int(options, "max_tokens"), extra=extra)  # fmt: skip


# --- the text-only baselines, registered like any agent --------------------------------------


class BaselineAgent:
    """A text-only baseline that works through the organizer tools like any agent.

    It lists the records (page by page), reads each one in full (following `next_offset`),
    computes its tree from the texts it read, moves each destination group with `move_files`,
    runs `check_inventory` and ends with the paper's JSON declaration of the layout. The random
    shape uses seed `seed` (0 … `RANDOM_SEEDS` − 1) of `task`.
    """

    def __init__(
        self, baseline: BaselineName, task: str, seed: int = 0, stop_words: StopWords = STOP_WORDS
    ) -> None:
        self.baseline, self.task, self.seed, self.stop_words = baseline, task, seed, stop_words
        self.name = f"baseline:{baseline}" + (f":{seed}" if baseline == "random" and seed else "")

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        steps = 0

        async def call(name: str, arguments: dict[str, object]) -> dict[str, Any]:
            nonlocal steps
            steps += 1
            outcome = await tools.call(name, arguments)
            if outcome.is_error or outcome.structured is None:
                raise CheckFailed(f"{self.name}: {name} failed: {outcome.text}")
            return outcome.structured

        ids: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = await call("list_files", {"offset": offset})
            ids.extend(entry["id"] for entry in page["entries"])
            offset = page["next_offset"]
        texts = []
        for record in ids:
            parts, position = [], 0
            while position is not None:
                piece = await call("read_file", {"id": record, "offset": position})
                parts.append(piece["text"])
                position = piece["next_offset"]
            texts.append("".join(parts))
        trees, _ = trees_from_texts(ids, texts, self.task, self.stop_words)
        chosen = trees[self.baseline]
        tree = chosen[self.seed] if isinstance(chosen, list) else chosen
        for destination, group in destinations(tree):
            await call("move_files", {"ids": group, "destination": list(destination)})
        inventory = await call("check_inventory", {})
        declaration = {
            "assignments": [
                {"id": record, "path": [*tree[record], f"{record}.txt"]} for record in sorted(tree)
            ]
        }
        notes = [] if inventory["intact"] and not inventory["unplaced"] else [f"inventory: {inventory}"]
        return AgentResult(final_message=canonical_json(declaration), steps=steps, notes=notes)


def packet_agent(spec: str, task: str, stop_words: StopWords = STOP_WORDS) -> Agent:
    """The agent named by `spec`: `noop`, `baseline:<flat|fixed|silhouette>` or
    `baseline:random[:<seed>]` (seed 0 … 4)."""
    if spec == "noop":
        return NoopAgent()
    kind, _, rest = spec.partition(":")
    name, _, seed_text = rest.partition(":")
    usage = (
        f"unknown agent {spec!r}; use noop, baseline:flat, baseline:fixed, baseline:silhouette "
        f"or baseline:random[:SEED] with SEED 0-{RANDOM_SEEDS - 1}"
    )
    if kind != "baseline" or name not in BASELINES:
        raise UsageError(usage)
    if seed_text and (name != "random" or not seed_text.isdigit() or int(seed_text) >= RANDOM_SEEDS):
        raise UsageError(usage)
    return BaselineAgent(name, task, int(seed_text or 0), stop_words)  # type: ignore[arg-type]


def _baseline(kind: str, options: dict[str, Any]) -> Any:
    task = options.get("task")
    if not task:
        raise UsageError(f"baseline:{kind} organizes InfoOrgBench packets; run it on a packet (worldkit infoorg run, or a packet task)")
    seed_text = str(options.get("seed", 0))
    if not seed_text.isdigit() or int(seed_text) >= RANDOM_SEEDS:
        raise UsageError(f"baseline:random seed {seed_text!r}: use 0-{RANDOM_SEEDS - 1}")
    return BaselineAgent(kind, str(task), int(seed_text))  # type: ignore[arg-type]


@register_agent("baseline:flat")
def make_flat(options: dict[str, Any]) -> Any:
    return _baseline("flat", options)


@register_agent("baseline:fixed")
def make_fixed(options: dict[str, Any]) -> Any:
    return _baseline("fixed", options)


@register_agent("baseline:silhouette")
def make_silhouette(options: dict[str, Any]) -> Any:
    return _baseline("silhouette", options)


@register_agent("baseline:random", arg="seed")
def make_random(options: dict[str, Any]) -> Any:
    return _baseline("random", options)
