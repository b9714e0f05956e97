"""`python -m worldkit.mcp …` is `worldkit serve …`: the seat's MCP server as a stdio entry point."""

import sys

from worldkit._cli.main import run

sys.exit(run(["serve", *sys.argv[1:]]))
