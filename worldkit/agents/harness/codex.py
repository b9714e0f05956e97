"""`codex:MODEL`: OpenAI's Codex CLI (paper Table 7) on any endpoint that serves the Responses API.

The CLI comes from npm, pinned to the paper's release 0.162.1 (`harness/codex/package.json` and
its lock; `bash harness/codex/install.sh` runs `npm ci`); `WORLDKIT_CODEX_BIN` or the `codex`
option names another binary. Codex speaks only the Responses API (`wire_api = "responses"`;
`"chat"` is refused by 0.162.1 and by the newest release, 0.171.0), so `--base-url` must serve
`POST /v1/responses`, streamed, and accept the run's tools as this release offers MCP tools: one
Responses `namespace` tool per server.

Each run gets a private CODEX_HOME and an empty scratch folder as Codex's working root, in a
fresh folder that is removed afterwards. `config.toml` there names the endpoint as the only model
provider, the run's tools as the only MCP server (`worldkit.agents.harness.bridge`, streamable
HTTP on 127.0.0.1: namespace `mcp__organizer` or `mcp__seat`), Table 8's reasoning effort,
no approvals, and the `workspace-write` sandbox with no network and no write access to /tmp: its
native command and file-edit tools act only in the scratch folder (they may read elsewhere, as in
the paper, Appendix C.4), and the records move only through the run's logged tools. Web search,
analytics, update checks and user/project instruction files are off. `codex exec --json` runs
the episode; the run keeps Codex's own session file (every request item, tool call and usage
record) as its transcript, and records the harness name and version.
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

__all__ = ["CodexHarness", "codex_binary", "codex_config", "make_codex"]

BIN_ENV = "WORLDKIT_CODEX_BIN"
HOME_ROOT_ENV = "WORLDKIT_CODEX_HOME_ROOT"
INSTALL = "harness/codex/install.sh"
KEY_ENV = "WORLDKIT_HARNESS_API_KEY"


def codex_binary(given: str | None = None) -> Path:
    """The Codex CLI: `given`, $WORLDKIT_CODEX_BIN, or the checkout's pinned install in
    `harness/codex/node_modules/`; refused with how to install it when missing."""
    default = Path(__file__).resolve().parents[3] / "harness" / "codex" / "node_modules" / ".bin" / "codex"
    path = Path(given or os.environ.get(BIN_ENV) or default)
    if not path.is_file():
        raise UsageError(f"the Codex CLI is not installed ({path} does not exist): run `bash {INSTALL}` in a worldkit "
                         f"checkout (npm ci of the pinned @openai/codex), or set {BIN_ENV} to a codex binary")  # fmt: skip
    return path


def _version(binary: Path) -> str:
    try:
        probe = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False)
    except OSError as error:
        raise UsageError(f"{binary} cannot be run ({error}): run `bash {INSTALL}`") from None
    text = probe.stdout.strip()
    if probe.returncode != 0 or not text.startswith("codex-cli "):
        raise UsageError(f"{binary} is not a working Codex CLI (`--version` said {(text or probe.stderr)[-200:]!r}): "
                         f"run `bash {INSTALL}`")  # fmt: skip
    return text


def _toml(value: Any) -> str:
    # A JSON string, number or boolean is the same value in TOML (json.dumps never writes `\/`).
    return json.dumps(value)


def codex_config(endpoint: ChatEndpoint, mcp_url: str, *, server: str, reasoning_effort: str | None,
                 developer_instructions: str | None) -> str:  # fmt: skip
    """The run's `config.toml` (see the module docstring); the key is passed by environment."""
    lines = [
        f"model = {_toml(endpoint.model)}",
        'model_provider = "worldkit"',
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        'web_search = "disabled"',
        "check_for_update_on_startup = false",
        "project_doc_max_bytes = 0",
    ]
    if reasoning_effort:
        lines.append(f"model_reasoning_effort = {_toml(reasoning_effort)}")
    if developer_instructions:
        lines.append(f"developer_instructions = {_toml(developer_instructions)}")
    lines += [
        "",
        "[sandbox_workspace_write]",
        "network_access = false",
        "exclude_slash_tmp = true",
        "exclude_tmpdir_env_var = true",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[history]",
        'persistence = "none"',
        "",
        "[model_providers.worldkit]",
        'name = "worldkit endpoint"',
        f"base_url = {_toml(endpoint.base_url.rstrip('/'))}",
        'wire_api = "responses"',
        f"request_max_retries = {int(endpoint.max_retries)}",
        f"stream_max_retries = {int(endpoint.max_retries)}",
        f"stream_idle_timeout_ms = {int(endpoint.timeout_s * 1000)}",
    ]
    if endpoint.api_key:
        lines.append(f'env_key = "{KEY_ENV}"')
    lines += [
        "",
        f"[mcp_servers.{server}]",
        f"url = {_toml(mcp_url)}",
        "startup_timeout_sec = 60",
        f"tool_timeout_sec = {int(endpoint.timeout_s)}",
        'default_tools_approval_mode = "approve"',
    ]
    return "\n".join(lines) + "\n"


def _events(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # `codex exec --json` prints only JSON lines; anything else is not an event
        if isinstance(event, dict):
            events.append(event)
    return events


def _session(home: Path) -> list[dict[str, Any]]:
    """Codex's session file (`sessions/…/rollout-*.jsonl`): the episode as Codex recorded it."""
    entries = []
    for path in sorted(home.glob("sessions/**/rollout-*.jsonl")):
        entries += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return entries


def _home_root(given: str | None) -> Path:
    # Not under /tmp: Codex refuses to put its helper commands (apply_patch) on PATH from there.
    root = Path(given or os.environ.get(HOME_ROOT_ENV) or Path.home() / ".cache" / "worldkit" / "codex-runs")
    root.mkdir(parents=True, exist_ok=True)
    return root


class CodexHarness:
    """Codex CLI on `endpoint`, given the run's tools over MCP (see the module docstring)."""

    def __init__(self, endpoint: ChatEndpoint, binary: Path, *, settings: dict[str, Any], infoorg: bool,
                 home_root: str | None = None) -> None:  # fmt: skip
        self.endpoint, self.binary, self.settings, self.infoorg = endpoint, binary, settings, infoorg
        self.home_root = home_root
        self.name = self.id = f"codex:{endpoint.model}"
        self.version = _version(binary)
        self.partial = AgentResult()

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": "codex", "harness": "codex", "harness_version": self.version,
            "model": self.endpoint.model, **self.endpoint.describe(), "wire_api": "responses",
            "reasoning_effort": self.settings.get("reasoning_effort", "provider-default"),
            "max_output_tokens": None,  # Codex sends no output-token limit in its requests
            "sandbox": "workspace-write (scratch folder, no network)",
        }  # fmt: skip

    def _instructions(self) -> str | None:
        if not self.infoorg:
            return None
        from worldkit.infoorg.instructions import render_tool_instruction

        return render_tool_instruction()

    async def run(self, task: AgentTask, tools: ToolSession) -> AgentResult:
        base = Path(tempfile.mkdtemp(prefix="run-", dir=_home_root(self.home_root)))
        try:
            home, scratch = base / "home", base / "workspace"
            home.mkdir()
            scratch.mkdir()
            server = "organizer" if self.infoorg else "seat"
            async with serve_tools(tools) as url:
                (home / "config.toml").write_text(codex_config(
                    self.endpoint, url, server=server, reasoning_effort=self.settings.get("reasoning_effort"),
                    developer_instructions=self._instructions()), encoding="utf-8")  # fmt: skip
                env = {**os.environ, "CODEX_HOME": str(home), KEY_ENV: self.endpoint.api_key or ""}
                done = await anyio.run_process(
                    [str(self.binary), "exec", "--json", "--strict-config", "--skip-git-repo-check",
                     "--cd", str(scratch), "--", task.request],
                    stdin=subprocess.DEVNULL, check=False, env=env,
                )  # fmt: skip
            session = _session(home)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        return self._result(done.returncode, _events(done.stdout), session, done.stderr)

    def _result(self, code: int, events: list[dict[str, Any]], session: list[dict[str, Any]], stderr: bytes) -> AgentResult:
        failures = [e for e in events if e.get("type") in ("turn.failed", "error")]
        finished = [e for e in events if e.get("type") == "turn.completed"]
        if failures or not finished:
            said = (failures[-1].get("error") or failures[-1]).get("message") if failures else None
            raise EndpointError(f"the Codex CLI exited {code} without finishing its turn: "
                                f"{said or stderr.decode('utf-8', errors='replace')[-800:]} (Codex needs an endpoint "
                                f"serving the Responses API, POST {self.endpoint.base_url.rstrip('/')}/responses)")  # fmt: skip
        usage = finished[-1].get("usage") or {}
        messages = [e["item"].get("text", "") for e in events
                    if e.get("type") == "item.completed" and e.get("item", {}).get("type") == "agent_message"]  # fmt: skip
        steps = sum(1 for entry in session if entry.get("type") == "token_usage_record")
        result = self.partial = AgentResult(
            final_message=messages[-1] if messages else "", steps=steps,
            tokens_in=int(usage.get("input_tokens") or 0), tokens_out=int(usage.get("output_tokens") or 0),
            stopped_by="done",
            transcript=[{"kind": "codex_event", "event": e} for e in events]
                       + [{"kind": "codex_session", "entry": entry} for entry in session],
        )  # fmt: skip
        result.tokens = result.tokens_in + result.tokens_out
        return result


@register_agent("codex", arg="model")
def make_codex(options: dict[str, Any]) -> CodexHarness:
    """`codex:MODEL` with --base-url (a Responses API endpoint) or WORLDKIT_OPENAI_BASE_URL; options
    `codex` (binary), `reasoning_effort` (Table 8's default), `home_root` (where per-run folders go)."""
    import dataclasses

    from worldkit.agents.infoorg import REQUEST_TIMEOUT_S, table8_settings

    endpoint = dataclasses.replace(agent_endpoint(options), timeout_s=float(options.get("timeout_s", REQUEST_TIMEOUT_S)))
    return CodexHarness(
        endpoint, codex_binary(options.get("codex")), settings=table8_settings(options),
        infoorg=options.get("benchmark") == "infoorg", home_root=options.get("home_root"),
    )  # fmt: skip
