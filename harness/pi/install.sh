#!/usr/bin/env bash
# Install the Pi harness (paper Table 7) into harness/pi/node_modules/ from npm, exactly as
# package-lock.json pins it: @mariozechner/pi-coding-agent 0.73.1 and the TypeScript MCP SDK that
# worldkit-mcp.mjs (the extension giving Pi the run's MCP tools) uses. worldkit finds it there (or
# at $WORLDKIT_PI_BIN). Needs Node.js >= 20 and npm. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
echo "pi harness: pi-coding-agent $(PI_OFFLINE=1 node_modules/.bin/pi --version 2>&1) installed in $(pwd)/node_modules"
