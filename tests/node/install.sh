#!/usr/bin/env bash
# Install the TypeScript MCP SDK for the Node end-to-end test, exactly as locked.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
