"""The agent's side of the tools: one small interface over an MCP client session.

Agents see only this: the tool list (names, descriptions, input schemas) and `call`. The seat is
bound in the server; nothing here carries an identity.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolOutcome:
    is_error: bool
    text: str
    structured: dict[str, Any] | None


class ToolSession(Protocol):
    async def list_tools(self) -> list[ToolInfo]: ...

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome: ...


class MCPToolSession:
    """A `ToolSession` over a connected `mcp.Client` (in-memory, stdio or HTTP)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list_tools(self) -> list[ToolInfo]:
        listing = await self._client.list_tools()
        return [ToolInfo(t.name, t.description or "", dict(t.input_schema)) for t in listing.tools]

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        result = await self._client.call_tool(name, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        structured = result.structured_content
        if not text and structured is not None:
            text = json.dumps(structured, sort_keys=True)
        return ToolOutcome(is_error=bool(result.is_error), text=text, structured=structured)
