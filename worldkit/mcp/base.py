"""The `MCPServer` every worldkit server is built on: worldkit's version and readable argument errors.

`serverInfo.version` in the `initialize` answer is worldkit's own version, so a client's log names
the release that served it. A call whose arguments fail the tool's input schema gets one short
sentence per problem — which argument, what was expected, what came — and the tool's argument
list, instead of pydantic's multi-line report with a documentation URL. The rejected call is a
`ToolError` like any refusal (the agent can read and correct it); its cause stays the
`ValidationError`, so the SDK still logs only the field names.

The SDK puts an OpenTelemetry middleware in front of every request; it is a no-op until a tracer
provider is installed, yet costs each call a span's set-up. Where no provider is installed when
the server is built, that middleware is dropped (the SDK's documented opt-out); with one
installed (e.g. under `opentelemetry-instrument`), it stays and spans are emitted as before.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from pydantic import ValidationError

from worldkit import __version__

__all__ = ["WorldkitMCPServer", "describe_argument_errors", "tracing_installed"]

_SHOWN_VALUE = 40
"""Characters of a rejected value quoted back to the agent."""


class WorldkitMCPServer(MCPServer):
    """`MCPServer` reporting worldkit's version and rewording argument validation errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("version", __version__)
        super().__init__(*args, **kwargs)
        if not tracing_installed():
            chain = self._lowlevel_server.middleware
            chain[:] = [m for m in chain if not isinstance(m, OpenTelemetryMiddleware)]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause = error.__cause__
            if isinstance(error, UnexpectedToolError) or not isinstance(cause, ValidationError):
                raise
            tool = self._tool_manager.get_tool(name)
            schema = tool.parameters if tool is not None else {}
            raise ToolError(f"Error executing tool {name}: {describe_argument_errors(name, cause, schema)}") from cause


def tracing_installed() -> bool:
    """Whether an OpenTelemetry tracer provider is installed (spans would be recorded)."""
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def describe_argument_errors(tool: str, error: ValidationError, schema: dict[str, Any]) -> str:
    """`invalid arguments: <one clause per problem>. <tool> takes <name (type, required)>, …`."""
    problems = [_problem(detail) for detail in error.errors(include_url=False, include_context=False)]
    return f"invalid arguments: {'; '.join(problems)}. {tool} takes {_signature(schema)}."


def _problem(detail: Any) -> str:
    where = _location(detail.get("loc", ()))
    kind = detail.get("type", "")
    if kind == "missing":
        return f"`{where}` is required but missing"
    if kind == "extra_forbidden":
        return f"`{where}` is not an argument of this tool"
    message = str(detail.get("msg", "is invalid"))
    message = "should" + message[len("Input should"):] if message.startswith("Input should") else message
    return f"`{where}` {message} (got {_shown(detail.get('input'))})"


def _location(loc: Any) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "arguments"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 1] + "…"


def _signature(schema: dict[str, Any]) -> str:
    properties = schema.get("properties") or {}
    if not properties:
        return "no arguments"
    required = set(schema.get("required") or [])
    parts = [
        f"{name} ({_type(spec)}{', required' if name in required else ''})" for name, spec in properties.items()
    ]
    return ", ".join(parts)


def _type(spec: dict[str, Any]) -> str:
    if "enum" in spec:
        return "one of " + "/".join(str(value) for value in spec["enum"])
    if "anyOf" in spec:
        kinds = [_type(option) for option in spec["anyOf"] if option.get("type") != "null"]
        return " or ".join(kinds) or "any value"
    kind = spec.get("type")
    if kind == "array":
        return f"list of {_type(spec.get('items') or {})}"
    if "minimum" in spec and "maximum" in spec:
        bounds = [f"{spec['minimum']}–{spec['maximum']}"]
    else:
        bounds = [f"≥ {spec['minimum']}"] if "minimum" in spec else [f"≤ {spec['maximum']}"] if "maximum" in spec else []
    name = {"boolean": "true/false"}.get(str(kind), str(kind)) if kind else "object" if "$ref" in spec else "any value"
    return f"{name} {' '.join(bounds)}".strip()
