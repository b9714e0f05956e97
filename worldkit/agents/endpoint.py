"""An agent's chat endpoint, from its options or the agent's environment variables."""

from __future__ import annotations

from typing import Any

from worldkit.chat import ChatEndpoint, endpoint_from_options

__all__ = ["agent_endpoint"]


def agent_endpoint(options: dict[str, Any]) -> ChatEndpoint:
    """The agent's endpoint from options, else WORLDKIT_OPENAI_* (the key also OPENAI_API_KEY)."""
    return endpoint_from_options(
        options,
        base_url_vars=["WORLDKIT_OPENAI_BASE_URL"],
        model_vars=["WORLDKIT_OPENAI_MODEL"],
        api_key_vars=["WORLDKIT_OPENAI_API_KEY", "OPENAI_API_KEY"],
        missing="the openai agent needs an endpoint and a model: pass --base-url and --model "
        "or set WORLDKIT_OPENAI_BASE_URL and WORLDKIT_OPENAI_MODEL",
        max_retries=2,
    )
