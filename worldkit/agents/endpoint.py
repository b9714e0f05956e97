"""An agent's chat endpoint, from its options or the agent's environment variables."""

from __future__ import annotations

import os
from typing import Any

from worldkit.chat import ChatEndpoint
from worldkit.errors import UsageError

__all__ = ["agent_endpoint"]


def agent_endpoint(options: dict[str, Any]) -> ChatEndpoint:
    """The agent's endpoint from options, else the agent's environment variables."""
    base = options.get("base_url") or os.environ.get("WORLDKIT_OPENAI_BASE_URL", "")
    model = options.get("model") or os.environ.get("WORLDKIT_OPENAI_MODEL", "")
    if not base or not model:
        raise UsageError(
            "the openai agent needs an endpoint and a model: pass --base-url and --model "
            "or set WORLDKIT_OPENAI_BASE_URL and WORLDKIT_OPENAI_MODEL"
        )
    key = options.get("api_key") or os.environ.get("WORLDKIT_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY", "")
    return ChatEndpoint(
        base_url=base, model=model, api_key=key,
        timeout_s=float(options.get("timeout_s") or 120.0),
        max_retries=int(options.get("max_retries", 2)),
        backoff_s=float(options.get("backoff_s", 1.0)),
        transport=options.get("transport"),
    )  # fmt: skip
