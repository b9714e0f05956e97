"""`deepagents:MODEL`: the Deep Agents harness (paper Table 7) on any OpenAI-compatible endpoint.

The harness runs in its own Python (`harness/deepagents/install.sh` installs the pinned release
into `.harness/deepagents/`; `WORLDKIT_DEEPAGENTS_PYTHON` or the `python` option names another),
because its MCP adapter needs the 1.x MCP SDK. worldkit serves the run's tools to it over MCP on
127.0.0.1 (`worldkit.agents.harness.bridge`) and runs `deepagents_runner.py` there with the
request, Figure 11's tool instruction as system prompt (InfoOrgBench) and Table 8's settings.
Deep Agents' own file tools act on its in-memory state, never on disk; the records move only
through the run's logged tools. The run records the harness name and version.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio

from worldkit.agents.endpoint import agent_endpoint
from worldkit.agents.harness.bridge import serve_tools
from worldkit.agents.registry import AgentResult, AgentTask, register_agent
from worldkit.agents.session import ToolSession
from worldkit.chat import ChatEndpoint, EndpointError
from worldkit.errors import UsageError

__all__ = ["DeepAgentsHarness", "harness_python", "make_deepagents"]

RUNNER = Path(__file__).with_name("deepagents_runner.py")
PYTHON_ENV = "WORLDKIT_DEEPAGENTS_PYTHON"
INSTALL = "harness/deepagents/install.sh"
SEAT_PROMPT = (
    "You are an employee working in your company's systems through the tools you are given. "
    "Do the task in the request. Put the deliverable where the request says, using the tools."
)


def harness_python(given: str | None = None) -> Path:
    """The Python of the Deep Agents environment: `given`, $WORLDKIT_DEEPAGENTS_PYTHON, or the
    checkout's `.harness/deepagents/bin/python`; refused with how to install it when missing."""
    default = Path(__file__).resolve().parents[3] / ".harness" / "deepagents" / "bin" / "python"
    path = Path(given or os.environ.get(PYTHON_ENV) or default)
    if not path.is_file():
        raise UsageError(
            f"the Deep Agents harness is not installed ({path} does not exist): run `bash {INSTALL}` in a worldkit "
            f"checkout, or set {PYTHON_ENV} to the Python of an environment with harness/deepagents/requirements.txt"
        )
    return path


def _version(python: Path) -> str:
    probe = subprocess.run([str(python), "-c", "import importlib.metadata as m; print(m.version('deepagents'))"],
                           capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    if probe.returncode != 0:
        raise UsageError(f"{python} has no deepagents package: run `bash {INSTALL}` ({probe.stderr.strip()[-200:]})")
    return f"deepagents {probe.stdout.strip()}"


class DeepAgentsHarness:
    """Deep Agents on `endpoint`, given the run's tools over MCP (see the module docstring)."""

    def __init__(self, endpoint: ChatEndpoint, python: Path, *, settings: dict[str, Any], infoorg: bool,
                 recursion_limit: int = 10_000) -> None:  # fmt: skip
        self.endpoint, self.python, self.settings, self.infoorg = endpoint, python, settings, infoorg
        self.recursion_limit = recursion_limit
        self.name = self.id = f"deepagents:{endpoint.model}"
        self.version = _version(python)
        self.partial = AgentResult()

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": "deepagents", "harness": "deepagents", "harness_version": self.version,
            "model": self.endpoint.model, **self.endpoint.describe(),
            "reasoning_effort": self.settings.get("reasoning_effort", "provider-default"),
            "max_output_tokens": self.settings.get("max_completion_tokens"),
        }  # fmt: skip

    def _system_prompt(self) -> str:
        if not self.infoorg:
            return SEAT_PROMPT
        from worldkit.infoorg.instructions import render_tool_instruction

        return render_tool_instruction()

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        async with serve_tools(tools) as url:
            config = {
                "model": self.endpoint.model, "base_url": self.endpoint.base_url, "api_key_env": "WORLDKIT_HARNESS_API_KEY",
                "mcp_url": url, "request": task.request, "system_prompt": self._system_prompt(),
                "server_name": "organizer" if self.infoorg else "seat",
                "reasoning_effort": self.settings.get("reasoning_effort"),
                "max_output_tokens": self.settings.get("max_completion_tokens"),
                "timeout_s": self.endpoint.timeout_s, "max_retries": self.endpoint.max_retries,
                "recursion_limit": self.recursion_limit,
            }  # fmt: skip
            env = {**os.environ, "WORLDKIT_HARNESS_API_KEY": self.endpoint.api_key or ""}
            # -I: the runner's folder holds this module, whose name would shadow the deepagents package.
            done = await anyio.run_process([str(self.python), "-I", str(RUNNER)], input=json.dumps(config).encode(),
                                           check=False, env=env)  # fmt: skip
        lines = done.stdout.decode("utf-8", errors="replace").strip().splitlines()
        try:
            report = json.loads(lines[-1])
        except (IndexError, ValueError):
            raise EndpointError(f"the Deep Agents harness exited {done.returncode} without a result: "
                                f"{done.stderr.decode('utf-8', errors='replace')[-500:]}") from None
        if "error" in report:
            raise EndpointError(f"the Deep Agents harness failed: {report['error'][:1000]}")
        result = self.partial = AgentResult(
            final_message=report["final_message"], steps=report["steps"], tokens_in=report["tokens_in"],
            tokens_out=report["tokens_out"], tokens=report["tokens_in"] + report["tokens_out"],
            stopped_by=report["stopped_by"], transcript=report["transcript"],
        )  # fmt: skip
        return result


@register_agent("deepagents", arg="model")
def make_deepagents(options: dict[str, Any]) -> DeepAgentsHarness:
    """`deepagents:MODEL` with --base-url (or WORLDKIT_OPENAI_BASE_URL); options `python`,
    `reasoning_effort`, `max_output_tokens` (Table 8's defaults), `recursion_limit`."""
    import dataclasses

    from worldkit.agents.infoorg import REQUEST_TIMEOUT_S, table8_settings

    endpoint = dataclasses.replace(agent_endpoint(options), timeout_s=float(options.get("timeout_s", REQUEST_TIMEOUT_S)))
    settings = table8_settings(options)
    return DeepAgentsHarness(
        endpoint, harness_python(options.get("python")), settings=settings,
        infoorg=options.get("benchmark") == "infoorg",
        recursion_limit=int(options.get("recursion_limit") or 10_000),
    )  # fmt: skip
