"""worldkit: organizational worlds for evaluating AI agents on workplace work.

The library comes first; the CLI (`worldkit._cli`) and the MCP servers (`worldkit.mcp`) are thin
adapters over it.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
