"""`pi:MODEL`: the Pi coding agent (paper Table 7) on any OpenAI-compatible chat endpoint.

Pi comes from npm, pinned (`harness/pi/package.json` and its lock: `@mariozechner/pi-coding-agent`
0.73.1 and the MCP SDK; `bash harness/pi/install.sh` runs `npm ci`); `WORLDKIT_PI_BIN` or the `pi`
option names another binary. Pi has no MCP client of its own, so worldkit gives it the run's tools
through its committed extension `harness/pi/worldkit-mcp.mjs`: a thin MCP client that registers
each tool of the run's MCP server (`worldkit.agents.harness.bridge`) as a Pi tool named
`organizer_<tool>` (InfoOrgBench) or `seat_<tool>` (WorkWorlds) and forwards every call to it.

As the paper ran it (Appendix C.2), Pi's native agent session works in an isolated per-run folder
with only those tools: `--no-builtin-tools` hides its read, bash, edit and write tools, and
extension, skill, prompt-template, theme and context-file discovery are off, as are its startup
network calls (`--offline`). Its agent folder (`PI_CODING_AGENT_DIR`, with `models.json` naming
the endpoint as the only provider) and working folder are private to the run and removed after.
Table 8's settings: `--thinking` carries the reasoning effort (sent as `reasoning_effort`) and the
model's `maxTokens` the output-token limit, which Pi itself caps at 32,000 per response (sent as
`max_completion_tokens`; the record names the limit Pi sent). `pi -p --mode json`
runs the episode; the run keeps every message of it (with each response's usage) as its
transcript and records the harness name and version.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import anyio

from worldkit.agents.endpoint import agent_endpoint
from worldkit.agents.harness.bridge import serve_tools
from worldkit.agents.registry import AgentResult, AgentTask, register_agent
from worldkit.agents.session import ToolSession
from worldkit.chat import ChatEndpoint, EndpointError
from worldkit.errors import UsageError

__all__ = ["PiHarness", "make_pi", "pi_binary", "pi_models"]

HERE = Path(__file__).resolve().parents[3] / "harness" / "pi"
EXTENSION = HERE / "worldkit-mcp.mjs"
BIN_ENV = "WORLDKIT_PI_BIN"
INSTALL = "harness/pi/install.sh"
KEY_ENV = "WORLDKIT_HARNESS_API_KEY"
PROVIDER = "worldkit"
PI_OUTPUT_CAP = 32_000
"""Pi 0.73.1 sends at most this many output tokens per response whatever the model allows."""


def pi_binary(given: str | None = None) -> Path:
    """The Pi CLI: `given`, $WORLDKIT_PI_BIN, or the checkout's pinned install in
    `harness/pi/node_modules/`; refused with how to install it when missing."""
    path = Path(given or os.environ.get(BIN_ENV) or HERE / "node_modules" / ".bin" / "pi")
    if not path.is_file() or not EXTENSION.is_file():
        raise UsageError(f"the Pi harness is not installed ({path} or {EXTENSION} does not exist): run `bash {INSTALL}` "
                         f"in a worldkit checkout (npm ci of the pinned Pi and MCP SDK), or set {BIN_ENV}")  # fmt: skip
    return path


def _version(binary: Path) -> str:
    try:
        probe = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False,
                               env={**os.environ, "PI_OFFLINE": "1"})  # fmt: skip
    except OSError as error:
        raise UsageError(f"{binary} cannot be run ({error}): run `bash {INSTALL}`") from None
    text = (probe.stdout.strip() or probe.stderr.strip()).splitlines()[-1:] or [""]
    text = text[0].strip()  # 0.73.1 prints its version on stderr
    if probe.returncode != 0 or not text[:1].isdigit():
        raise UsageError(f"{binary} is not a working Pi CLI (`--version` said {(text or probe.stderr)[-200:]!r}): "
                         f"run `bash {INSTALL}`")  # fmt: skip
    return f"pi-coding-agent {text}"


def pi_models(endpoint: ChatEndpoint, *, reasoning: bool, max_output_tokens: int | None) -> dict[str, Any]:
    """`models.json`: the endpoint as Pi's only provider (the key by environment variable name)."""
    model: dict[str, Any] = {"id": endpoint.model, "reasoning": reasoning}
    if max_output_tokens:
        model["maxTokens"] = max_output_tokens
    return {"providers": {PROVIDER: {
        "baseUrl": endpoint.base_url.rstrip("/"), "api": "openai-completions", "apiKey": KEY_ENV,
        "compat": {"maxTokensField": "max_completion_tokens", "supportsReasoningEffort": reasoning},
        "models": [model],
    }}}  # fmt: skip


def _events(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # `--mode json` prints only JSON lines; anything else is not an event
        if isinstance(event, dict):
            events.append(event)
    return events


class PiHarness:
    """Pi on `endpoint`, given the run's tools over MCP (see the module docstring)."""

    def __init__(self, endpoint: ChatEndpoint, binary: Path, *, settings: dict[str, Any], infoorg: bool) -> None:
        self.endpoint, self.binary, self.settings, self.infoorg = endpoint, binary, settings, infoorg
        self.name = self.id = f"pi:{endpoint.model}"
        self.version = _version(binary)
        self.partial = AgentResult()

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": "pi", "harness": "pi", "harness_version": self.version,
            "model": self.endpoint.model, **self.endpoint.describe(),
            "reasoning_effort": self.settings.get("reasoning_effort", "provider-default"),
            "max_output_tokens": min(limit, PI_OUTPUT_CAP) if (limit := self.settings.get("max_completion_tokens")) else None,
            "tools": "the run's MCP tools only (no built-in tools)",
        }  # fmt: skip

    def _command(self, request: str) -> list[str]:
        command = [str(self.binary), "-p", "--mode", "json", "--offline", "--no-session", "--no-builtin-tools",
                   "--no-extensions", "--no-skills", "--no-prompt-templates", "--no-themes", "--no-context-files",
                   "-e", str(EXTENSION), "--provider", PROVIDER, "--model", self.endpoint.model]  # fmt: skip
        effort = self.settings.get("reasoning_effort")
        command += ["--thinking", effort or "off"]
        if self.infoorg:
            from worldkit.infoorg.instructions import render_tool_instruction

            command += ["--append-system-prompt", render_tool_instruction()]
        return [*command, request]

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        base = Path(tempfile.mkdtemp(prefix="worldkit-pi-"))
        try:
            home, scratch = base / "agent", base / "workspace"
            home.mkdir()
            scratch.mkdir()
            models = pi_models(self.endpoint, reasoning=bool(self.settings.get("reasoning_effort")),
                               max_output_tokens=self.settings.get("max_completion_tokens"))  # fmt: skip
            (home / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
            async with serve_tools(tools) as url:
                env = {**os.environ, "PI_CODING_AGENT_DIR": str(home), "PI_OFFLINE": "1",
                       KEY_ENV: self.endpoint.api_key or "none", "WORLDKIT_MCP_URL": url,
                       "WORLDKIT_MCP_SERVER": "organizer" if self.infoorg else "seat"}  # fmt: skip
                done = await anyio.run_process(self._command(task.request), stdin=subprocess.DEVNULL,
                                               check=False, env=env, cwd=scratch)  # fmt: skip
        finally:
            shutil.rmtree(base, ignore_errors=True)
        return self._result(done.returncode, _events(done.stdout), done.stderr)

    def _result(self, code: int, events: list[dict[str, Any]], stderr: bytes) -> AgentResult:
        ends = [e for e in events if e.get("type") == "agent_end"]
        messages = ends[-1].get("messages", []) if ends else []
        replies = [m for m in messages if m.get("role") == "assistant"]
        failed = [m for m in replies if m.get("stopReason") in ("error", "aborted")]
        if code != 0 or not replies or failed:
            said = (failed[-1].get("errorMessage") if failed else None) or stderr.decode("utf-8", errors="replace")[-800:]
            raise EndpointError(f"the Pi harness exited {code} without finishing: {said}")
        usage = [m.get("usage") or {} for m in replies]
        last = replies[-1]
        text = "".join(c.get("text", "") for c in last.get("content", []) if c.get("type") == "text")
        result = self.partial = AgentResult(
            final_message=text if last.get("stopReason") == "stop" else "", steps=len(replies),
            tokens_in=sum(int(u.get("input") or 0) for u in usage), tokens_out=sum(int(u.get("output") or 0) for u in usage),
            stopped_by="done" if last.get("stopReason") == "stop" else str(last.get("stopReason")),
            transcript=[{"kind": "message", "message": m} for m in messages],
        )  # fmt: skip
        result.tokens = result.tokens_in + result.tokens_out
        return result


@register_agent("pi", arg="model")
def make_pi(options: dict[str, Any]) -> PiHarness:
    """`pi:MODEL` with --base-url (or WORLDKIT_OPENAI_BASE_URL); options `pi` (binary),
    `reasoning_effort` and `max_output_tokens` (Table 8's defaults)."""
    import dataclasses

    from worldkit.agents.infoorg import REQUEST_TIMEOUT_S, table8_settings

    endpoint = dataclasses.replace(agent_endpoint(options), timeout_s=float(options.get("timeout_s", REQUEST_TIMEOUT_S)))
    return PiHarness(endpoint, pi_binary(options.get("pi")), settings=table8_settings(options),
                     infoorg=options.get("benchmark") == "infoorg")  # fmt: skip
