"""The tool surfaces a seat gets: names, argument models and schemas (served by `worldkit.mcp`)."""

from worldkit.tools.specs import SURFACES, ToolSpec, tool_bundle

__all__ = ["SURFACES", "ToolSpec", "tool_bundle"]
