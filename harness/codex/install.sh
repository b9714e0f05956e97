#!/usr/bin/env bash
# Install the Codex CLI harness (paper Table 7) into harness/codex/node_modules/ from npm, exactly
# as package-lock.json pins it (@openai/codex 0.162.1, the paper's release; npm picks the
# platform's binary package from the lock). worldkit finds it there (or at $WORLDKIT_CODEX_BIN).
# Needs Node.js >= 20 and npm. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
echo "codex harness: $(node_modules/.bin/codex --version) installed in $(pwd)/node_modules"
