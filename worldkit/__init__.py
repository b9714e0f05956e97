"""worldkit: organizational worlds for evaluating AI agents on workplace work.

The library comes first; the CLI (`worldkit._cli`) and the MCP servers (`worldkit.mcp`) are thin
adapters over it.
"""

__version__ = "0.1.0"
DISTRIBUTION = "worldkit-bench"
"""The name worldkit is installed by (`pip install worldkit-bench`); the import package and the command
are `worldkit`. The PyPI project `worldkit` is someone else's."""

__all__ = ["DISTRIBUTION", "__version__"]
