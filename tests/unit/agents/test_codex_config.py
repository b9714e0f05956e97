"""The Codex harness's per-run config.toml: valid TOML naming only the run's endpoint and tools,
the confining sandbox, and never the API key (Codex reads it from the environment)."""

from __future__ import annotations

import tomllib

from worldkit.agents.harness.codex import KEY_ENV, codex_config
from worldkit.chat import ChatEndpoint


def test_the_config_names_the_endpoint_the_tools_and_the_sandbox_but_not_the_key() -> None:
    endpoint = ChatEndpoint(base_url="http://127.0.0.1:8000/v1/", model='m "quoted"', api_key="sk-secret",
                            timeout_s=2400.0, max_retries=3)  # fmt: skip
    text = codex_config(endpoint, "http://127.0.0.1:5555/mcp", server="organizer", reasoning_effort="medium",
                        developer_instructions='Use the tools.\n"Move" records.')  # fmt: skip
    config = tomllib.loads(text)
    assert "sk-secret" not in text
    assert config["model"] == 'm "quoted"' and config["model_provider"] == "worldkit"
    assert config["model_reasoning_effort"] == "medium" and config["developer_instructions"].endswith('"Move" records.')
    assert config["approval_policy"] == "never" and config["sandbox_mode"] == "workspace-write"
    assert config["sandbox_workspace_write"] == {"network_access": False, "exclude_slash_tmp": True,
                                                 "exclude_tmpdir_env_var": True}  # fmt: skip
    assert config["web_search"] == "disabled" and config["analytics"] == {"enabled": False}
    provider = config["model_providers"]["worldkit"]
    assert provider["base_url"] == "http://127.0.0.1:8000/v1" and provider["wire_api"] == "responses"
    assert provider["env_key"] == KEY_ENV and provider["request_max_retries"] == 3
    assert provider["stream_idle_timeout_ms"] == 2_400_000
    assert config["mcp_servers"] == {"organizer": {"url": "http://127.0.0.1:5555/mcp", "startup_timeout_sec": 60,
                                                   "tool_timeout_sec": 2400, "default_tools_approval_mode": "approve"}}


def test_without_a_key_or_effort_none_is_configured() -> None:
    config = tomllib.loads(codex_config(ChatEndpoint(base_url="http://h/v1", model="m"), "http://127.0.0.1:1/mcp",
                                        server="seat", reasoning_effort=None, developer_instructions=None))  # fmt: skip
    assert "env_key" not in config["model_providers"]["worldkit"]
    assert "model_reasoning_effort" not in config and "developer_instructions" not in config
    assert set(config["mcp_servers"]) == {"seat"}
