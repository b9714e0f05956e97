"""Run one Deep Agents episode; executed by the harness's own Python, never imported by worldkit.

Deep Agents needs `langchain-mcp-adapters`, which pins the 1.x MCP SDK, while worldkit runs on
2.x; so the harness lives in its own virtual environment (`harness/deepagents/install.sh`) and
this file is run there as a script: `PYTHON deepagents_runner.py < config.json`. It imports
nothing from worldkit.

The config (JSON on stdin) names the model, the OpenAI-compatible endpoint, the MCP URL of the
run's tools, the request, the system prompt and Table 8's settings. The model is
`langchain_openai.ChatOpenAI` (chat completions); the tools are the MCP server's, named
`<server>_<tool>` so they never collide with Deep Agents' own; Deep Agents' own file tools work
on its in-memory state backend (no disk access at all). One JSON object goes to stdout: the
harness version, final message, steps, tokens, tool calls, stop reason and the transcript.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from importlib.metadata import version
from typing import Any


def _message(message: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": message.type, "content": message.content}
    for key in ("tool_calls", "tool_call_id", "name", "usage_metadata", "response_metadata"):
        value = getattr(message, key, None)
        if value:
            entry[key] = value
    return entry


async def episode(config: dict[str, Any]) -> dict[str, Any]:
    from deepagents import create_deep_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient
    from langchain_openai import ChatOpenAI
    from langgraph.errors import GraphRecursionError

    settings: dict[str, Any] = {}
    if config.get("reasoning_effort"):
        settings["reasoning_effort"] = config["reasoning_effort"]
    if config.get("max_output_tokens"):
        settings["max_completion_tokens"] = config["max_output_tokens"]
    model = ChatOpenAI(
        model=config["model"], base_url=config["base_url"],
        api_key=os.environ.get(config.get("api_key_env") or "", "") or "not-needed",
        timeout=config.get("timeout_s", 2400), max_retries=config.get("max_retries", 2), **settings,
    )  # fmt: skip
    server = config.get("server_name", "organizer")
    client = MultiServerMCPClient({server: {"transport": "streamable_http", "url": config["mcp_url"]}})
    tools = await client.get_tools()
    for tool in tools:
        tool.name = f"{server}_{tool.name}"
    agent = create_deep_agent(model=model, tools=tools, system_prompt=config["system_prompt"])
    stopped_by, messages = "done", []
    try:
        state = await agent.ainvoke(
            {"messages": [{"role": "user", "content": config["request"]}]},
            config={"recursion_limit": config.get("recursion_limit", 10_000)},
        )
        messages = state["messages"]
    except GraphRecursionError:
        stopped_by = "step_budget"
    ai = [m for m in messages if m.type == "ai"]
    usage = [m.usage_metadata or {} for m in ai]
    return {
        "harness": "deepagents", "harness_version": f"deepagents {version('deepagents')}",
        "final_message": str(ai[-1].content) if ai and not ai[-1].tool_calls else "",
        "steps": len(ai), "tool_calls": sum(len(m.tool_calls or []) for m in ai), "stopped_by": stopped_by,
        "tokens_in": sum(int(u.get("input_tokens") or 0) for u in usage),
        "tokens_out": sum(int(u.get("output_tokens") or 0) for u in usage),
        "transcript": [{"kind": "message", "message": _message(m)} for m in messages],
    }


def main() -> None:
    config = json.loads(sys.stdin.read())
    try:
        result = asyncio.run(episode(config))
    except Exception as error:  # noqa: BLE001 - reported to worldkit, which ends the run as failed
        result = {"error": f"{type(error).__name__}: {error}"}
    sys.stdout.write(json.dumps(result, default=str) + "\n")


if __name__ == "__main__":
    main()
