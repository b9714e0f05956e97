#!/usr/bin/env bash
# Install every agent harness the harness tests run (CI calls this before pytest), each pinned:
# Deep Agents in its own Python environment from PyPI, and the Codex CLI and Pi (with the MCP SDK
# its worldkit extension uses) from npm, each by `npm ci` of its committed lock. Needs python3,
# Node.js >= 20 and npm. See docs/infoorgbench-runs.md for what each harness is given.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
bash "$root/harness/deepagents/install.sh"
bash "$root/harness/codex/install.sh"
bash "$root/harness/pi/install.sh"
