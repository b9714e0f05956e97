"""Perform a task's reference (oracle) actions through a seat's MCP server, from outside.

This is what an exported Harbor task's `solution/solve.sh` runs:

    python -m worldkit.interop.actions /solution/actions.json --url http://seat:8000/mcp

Each action is one `tools/call` (`{"tool": …, "args": {…}}`), in order; a call the server answers
with an error stops the run with exit code 1 (the oracle must not fail silently).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["perform_actions", "main"]


async def perform_actions(target: Any, actions: list[dict[str, Any]]) -> list[str]:
    """Call each action's tool on `target` (a URL, `StdioServerParameters` or server); the tools called."""
    from mcp import Client

    from worldkit.errors import CheckFailed

    called: list[str] = []
    async with Client(target) as client:
        for n, action in enumerate(actions):
            result = await client.call_tool(action["tool"], dict(action.get("args") or {}))
            if result.is_error:
                text = " ".join(getattr(c, "text", "") for c in result.content)
                raise CheckFailed(f"reference action {n} ({action['tool']}) failed: {text}")
            called.append(action["tool"])
    return called


def main(argv: list[str] | None = None) -> int:
    import anyio

    from worldkit.errors import WorldkitError

    parser = argparse.ArgumentParser(prog="python -m worldkit.interop.actions", description=__doc__.splitlines()[0])
    parser.add_argument("actions", type=Path, help="JSON file: a list of {tool, args}.")
    parser.add_argument("--url", required=True, help="The seat's MCP server (streamable HTTP), e.g. http://seat:8000/mcp.")
    args = parser.parse_args(argv)
    try:
        actions = json.loads(args.actions.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        print(f"error: {args.actions}: {error}; pass the actions.json the export wrote", file=sys.stderr)
        return 2
    try:
        called = anyio.run(perform_actions, args.url, actions)
    except WorldkitError as error:
        print(f"error: {error.message}", file=sys.stderr)
        return int(error.exit_code)
    print(f"performed {len(called)} reference actions: {', '.join(called)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
